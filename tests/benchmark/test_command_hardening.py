"""``friday13 benchmark``, ``ratings`` and ``leaderboard`` refuse what they cannot do before any work, each with a
message that names the problem: an output on the agent's own checkpoint, options ``--list`` would ignore, an
output path that is a folder, a repeated agent; ``ratings --out -`` writes to stdout, and ``--workers`` above the
CPUs says it is capped. No test here plays a game."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import command, ratings, runner
from tests.benchmark.helpers import friday13

THREE = ["random", "cautious", "majority"]


@pytest.fixture
def no_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any game played, of a benchmark or of a ratings run, fails the test."""

    def played(*args: object, **kwargs: object) -> None:
        raise AssertionError("a game was played")

    monkeypatch.setattr(runner, "play_unit", played)
    monkeypatch.setattr(command, "prepare", played)
    monkeypatch.setattr(ratings, "play_tables", played)


# -- friday13 benchmark ----------------------------------------------------------------------------------


@pytest.mark.parametrize("overwrite", [[], ["--overwrite"]])
@pytest.mark.parametrize("spec", ["{policy}", "{policy}:greedy=false"])
@pytest.mark.parametrize("out", ["{policy}", "{folder}/sub/../pol.npz"])
def test_the_agents_checkpoint_as_the_output_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    no_game: None,
    overwrite: list[str],
    spec: str,
    out: str,
) -> None:
    """``--out`` on the ``--agent`` checkpoint (another spelling of it, the spec with options): exit 2 with evaluate's
    message, with or without ``--overwrite``, and the checkpoint is left as it was."""
    policy = tmp_path / "pol.npz"
    policy.write_bytes(b"a checkpoint")
    names = {"policy": str(policy), "folder": str(tmp_path)}
    argv = ["benchmark", "--agent", spec.format(**names), "--suite", "card-4p-quick", "--out", out.format(**names)]
    code, printed = friday13([*argv, *overwrite, "--no-progress"])
    assert code == 2
    error = capsys.readouterr().err
    assert "is an agent evaluated here and an output it would overwrite; write elsewhere" in error, error
    assert "holds a complete result" not in error
    assert policy.read_bytes() == b"a checkpoint"
    assert printed == ""


def test_benchmark_out_dash_is_refused_not_a_file_named_dash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_game: None
) -> None:
    """``ratings`` and ``evaluate`` read ``--out -`` as stdout; a benchmark, which keeps ``OUT.partial`` as it plays,
    cannot: it says so rather than writing a file named ``-``."""
    monkeypatch.chdir(tmp_path)
    code, _ = friday13(["benchmark", "--agent", "random", "--suite", "card-4p-quick", "--out", "-"])
    assert code == 2
    assert "argument --out: a benchmark writes a file (and OUT.partial as it plays), not stdout (-)" in (
        capsys.readouterr().err
    )
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        (["--workers", "2"], "--workers"),
        (["--split", "dev"], "--split"),
        (["--split", "test"], "--split"),
        (["--out", "x.json"], "--out"),
        (["--overwrite"], "--overwrite"),
        (["--replays", "replays"], "--replays"),
        (["--replay-deals", "3"], "--replay-deals"),
    ],
)
def test_list_refuses_the_options_of_a_run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    options: list[str],
    flag: str,
) -> None:
    """``--list`` with an option that only a run reads: exit 2 naming it and what ``--list`` takes, nothing listed
    and nothing written."""
    monkeypatch.chdir(tmp_path)
    code, printed = friday13(["benchmark", "--list", *options])
    assert code == 2 and printed == ""
    error = capsys.readouterr().err
    assert "--list takes no --agent or --suite, nor an option of a run" in error and f"got {flag}" in error, error
    assert list(tmp_path.iterdir()) == []


def test_list_alone_still_lists() -> None:
    code, printed = friday13(["benchmark", "--list", "--no-progress"])
    assert code == 0 and "card-4p-quick" in printed


# -- friday13 leaderboard --------------------------------------------------------------------------------


@pytest.mark.parametrize("check", [[], ["--check"]])
def test_leaderboard_refuses_a_folder_as_its_page_before_reading_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, check: list[str]
) -> None:
    """``--out DIR`` (to write, or to ``--check``): exit 2 saying it is a folder, before any result file is read."""
    generated: list[Path] = []

    def generate(results: Path) -> str:
        generated.append(results)
        return "# Leaderboard\n"

    monkeypatch.setattr(command, "generate", generate)
    folder = tmp_path / "page"
    folder.mkdir()
    code, _ = friday13(["leaderboard", "--results", str(tmp_path), "--out", str(folder), *check])
    assert code == 2
    assert f"argument --out: {folder} is a folder; give a file name" in capsys.readouterr().err
    assert generated == [] and list(folder.iterdir()) == []


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("{folder}/file.txt/page.md", "cannot create the folder {folder}/file.txt: {folder}/file.txt is a file"),
        ("/proc/nope.md", "cannot write /proc/nope.md"),
    ],
)
def test_leaderboard_refuses_a_page_it_cannot_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, out: str, message: str
) -> None:
    if out.startswith("/proc") and not Path("/proc").is_dir():
        pytest.skip("no /proc here")
    monkeypatch.setattr(command, "generate", lambda results: pytest.fail("the results were read"))
    (tmp_path / "file.txt").write_text("a file")
    code, _ = friday13(["leaderboard", "--results", str(tmp_path), "--out", out.format(folder=tmp_path)])
    assert code == 2
    assert f"argument --out: {message.format(folder=tmp_path)}" in capsys.readouterr().err


# -- friday13 ratings ------------------------------------------------------------------------------------


def test_ratings_out_dash_writes_the_json_to_stdout(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_ratings: list[dict[str, Any]],
) -> None:
    """``--out -``: the result file alone on stdout (as ``evaluate --json -``), the table on stderr, no file ``-``."""
    monkeypatch.chdir(tmp_path)
    code, printed = friday13(["ratings", "--agents", *THREE, "--tables", "4", "--workers", "1", "--out", "-"])
    assert code == 0
    assert json.loads(printed)["ratings"].keys() == set(THREE)
    error = capsys.readouterr().err
    assert all(agent in error for agent in THREE) and "wrote" not in error
    assert list(tmp_path.iterdir()) == []
    assert len(fake_ratings) == 1


def test_ratings_says_when_the_workers_are_capped(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    fake_ratings: list[dict[str, Any]],
) -> None:
    """``--workers 99`` on a 2-CPU process: the note evaluate and benchmark print, on stderr, and 2 processes."""
    monkeypatch.setattr(ratings, "available_cpus", lambda: 2)
    out = tmp_path / "ratings.json"
    code, printed = friday13(["ratings", "--agents", *THREE, "--tables", "4", "--workers", "99", "--out", str(out)])
    assert code == 0 and f"wrote {out}" in printed
    assert "--workers 99: capped at 2, the CPUs this process may use" in capsys.readouterr().err
    assert ratings.processes_for(fake_ratings[0]["workers"]) == 2
    argv = ["ratings", "--agents", *THREE, "--tables", "4", "--workers", "2", "--out", str(out), "--overwrite"]
    code, _ = friday13(argv)  # the file of the first run is there: replacing it takes --overwrite
    assert code == 0 and "capped" not in capsys.readouterr().err


@pytest.mark.parametrize(
    "agents",
    [["random", "cautious", "majority", "random"], ["random", "cautious", "random"], ["random", "random", "cautious"]],
)
def test_ratings_names_an_agent_listed_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_game: None, agents: list[str]
) -> None:
    """A repeated agent is named as such, even when three different agents are listed."""
    pytest.importorskip("openskill")
    out = tmp_path / "ratings.json"
    code, _ = friday13(["ratings", "--agents", *agents, "--tables", "4", "--out", str(out)])
    assert code == 2
    error = capsys.readouterr().err
    assert "agent 'random' is listed twice" in error, error
    assert not out.exists()


def test_ratings_refuses_a_folder_as_its_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], no_game: None
) -> None:
    code, _ = friday13(["ratings", "--agents", *THREE, "--out", str(tmp_path)])
    assert code == 2
    assert f"argument --out: {tmp_path} is a folder; give a file name" in capsys.readouterr().err
