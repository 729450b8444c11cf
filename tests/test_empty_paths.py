"""An empty path on a command line names no file or folder: every command refuses it with argparse's usage error
(status 2) before any work, instead of reading it as the current folder (``Path("")`` is ``.``: ``--replays ""``
filled the working folder with replay files) or skipping the output it asked for (``evaluate_friday.py --json ""``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from friday13_env.cli import main
from tests.scripts import load_training_script

CARD = ["evaluate", "--agents", "random", "cautious", "--games", "4", "--no-progress"]
CASES = [
    [*CARD, "--json", ""],
    [*CARD, "--markdown", ""],
    [*CARD, "--plot", ""],
    [*CARD, "--replays", ""],
    ["benchmark", "--suite", "card-4p-quick", "--agent", "random", "--out", ""],
    ["benchmark", "--suite", "card-4p-quick", "--agent", "random", "--replays", ""],
    ["ratings", "--agents", "random", "cautious", "majority", "--out", ""],
    ["leaderboard", "--results", ""],
    ["leaderboard", "--out", ""],
]


@pytest.mark.parametrize("argv", CASES, ids=lambda argv: " ".join(argv[:1] + argv[-2:-1]))
def test_the_friday13_command_refuses_an_empty_path(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    assert "an empty path names no file or folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_evaluate_friday_refuses_an_empty_path(
    flag: str, capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    script = load_training_script("evaluate_friday")
    with pytest.raises(SystemExit) as stop:
        script.main(["--agents", "random", "--levels", "1", "--games", "2", flag, ""])
    assert stop.value.code == 2
    assert "an empty path names no file or folder" in capsys.readouterr().err


def test_plot_curve_refuses_an_empty_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    script = load_training_script("plot_curve")
    for argv in (["", "--out", str(tmp_path / "c.png")], [str(tmp_path), "--out", ""]):
        with pytest.raises(SystemExit) as stop:
            script.main(argv)
        assert stop.value.code == 2
        assert "an empty path names no file or folder" in capsys.readouterr().err


def test_evaluate_friday_refuses_more_games_than_it_can_play(capsys: pytest.CaptureFixture[str]) -> None:
    script = load_training_script("evaluate_friday")
    with pytest.raises(SystemExit) as stop:
        script.main(["--agents", "random", "--levels", "1", "--games", "99999999999"])
    assert stop.value.code == 2
    assert (
        "argument --games: must be a positive integer of at most 1,000,000, got 99999999999" in capsys.readouterr().err
    )


def test_the_sb3_example_refuses_an_empty_save_path(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sb3_contrib")
    script = load_training_script("sb3_vector_env")
    with pytest.raises(SystemExit) as stop:
        script.parse_args(["--save", ""])
    assert stop.value.code == 2
    assert "an empty path names no file or folder" in capsys.readouterr().err


def test_distill_refuses_an_empty_out_dir(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    script = load_training_script("distill")
    with pytest.raises(SystemExit) as stop:
        script.parse_args(["--teacher", "search", "--out-dir", ""])
    assert stop.value.code == 2
    assert "--out-dir must not be empty" in capsys.readouterr().err
