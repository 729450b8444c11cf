"""The command-line machinery the training scripts share: bounds, explicit flags, record checks, atomic writes."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest
from friday13_training import script_args
from friday13_training.script_args import option


@dataclass
class Knobs:
    rate: float = option(0.5, "a rate", above=0, maximum=1)
    count: int = option(2, "a count", minimum=1)
    sizes: list[int] = option([8, 8], "widths", minimum=1)  # noqa: RUF009 - a field with its own default factory
    names: list[str] = option(["a"], "names", allow_empty=True)  # noqa: RUF009
    mode: str = option("x", "a mode", choices=["x", "y"])
    flag: bool = option(False, "a switch")


def parse(argv: list[str]) -> Knobs:
    return Knobs(**vars(script_args.dataclass_parser(Knobs, None).parse_args(argv)))


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--count", "0"], "argument --count: must be at least 1, got 0"),
        (["--rate", "0"], "argument --rate: must be above 0 and at most 1, got 0"),
        (["--rate", "5"], "argument --rate: must be above 0 and at most 1, got 5"),
        (["--rate", "nan"], "argument --rate: must be a finite number, got nan"),
        (["--rate", "inf"], "argument --rate: must be a finite number, got inf"),
        (["--sizes", "8", "0"], "argument --sizes: must be at least 1, got 0"),
        (["--count", "two"], "argument --count: expected int, got 'two'"),
        (["--mode", "z"], "argument --mode: invalid choice: 'z'"),
    ],
)
def test_the_parser_refuses_values_out_of_bounds_naming_the_flag(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        parse(argv)
    assert message in capsys.readouterr().err


def test_bounds_are_in_the_help_and_defaults_parse() -> None:
    parser = script_args.dataclass_parser(Knobs, None)
    assert "(default: 0.5; above 0 and at most 1)" in " ".join(parser.format_help().split())
    assert parse([]) == Knobs()
    assert parse(["--names"]).names == []  # allow_empty: the bare flag means none
    assert parse(["--rate", "1", "--sizes", "4", "--flag"]) == Knobs(rate=1.0, sizes=[4], flag=True)


def test_given_flags_are_those_on_the_command_line_not_those_left_at_their_default() -> None:
    assert script_args.given_flags(Knobs, []) == set()
    assert script_args.given_flags(Knobs, ["--rate", "0.5", "--no-flag", "--names"]) == {"rate", "flag", "names"}


def test_field_errors_check_a_record_as_the_parser_checks_a_command_line() -> None:
    good = {"rate": 0.5, "count": 2, "sizes": [8], "names": [], "mode": "y", "flag": True}
    assert script_args.field_errors(Knobs, good) == []
    bad = {"rate": 0, "count": True, "sizes": [0], "names": "a", "mode": "z"}
    assert script_args.field_errors(Knobs, bad) == [
        "--rate: must be above 0 and at most 1, got 0",
        "--count: expected int, got True",
        "--sizes: must be at least 1, got 0",
        "--names: expected a list, got 'a'",
        "--mode: 'z' is not one of ['x', 'y']",
        "--flag: missing",
    ]


def test_atomic_writes_leave_the_old_file_whole_when_the_write_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "deep" / "out.json"
    script_args.atomic_write_text(path, "old")  # creates the missing folders
    assert path.read_text() == "old" and oct(path.stat().st_mode & 0o777) == "0o644"

    def interrupted(source: str, target: str) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        script_args.atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [entry.name for entry in path.parent.iterdir()] == ["out.json"]  # no temporary file left behind


def test_output_paths_are_checked_without_creating_anything(tmp_path: Path) -> None:
    assert script_args.output_error(tmp_path / "a" / "b" / "policy.npz") is None
    assert script_args.output_error(tmp_path / "a" / "run", directory=True) is None
    assert not (tmp_path / "a").exists()
    assert "is a directory" in script_args.output_error(tmp_path)
    (tmp_path / "file").write_text("")
    assert "is a file" in script_args.output_error(tmp_path / "file", directory=True)
    assert "is a file, not a directory" in script_args.output_error(tmp_path / "file" / "policy.npz")
    if os.geteuid() != 0:  # root writes anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        assert "cannot write in" in script_args.output_error(locked / "policy.npz")
