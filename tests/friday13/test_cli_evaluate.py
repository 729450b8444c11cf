"""The evaluation command (``training/evaluate.py`` = ``friday13 evaluate``): every argument is checked
before the first game, agents are named exactly as ``agents.make`` names them, and a bad argument is
blamed on its own flag."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env import agents, cli
from friday13_env.friday13.evaluation import command


@pytest.fixture
def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a game is played: every check must come first."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a game was played before the arguments were checked")

    monkeypatch.setattr(command, "evaluate", refuse)


def error_of(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``friday13 evaluate ARGV``: it must exit 2; what it printed on stderr."""
    with pytest.raises(SystemExit) as exited:
        command.main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.usefixtures("no_games")
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "random", "--seed", "-1"], "argument --seed: must be a non-negative integer, got '-1'"),
        (["--agents", "random", "--seed", "x"], "argument --seed: must be a non-negative integer, got 'x'"),
        (["--agents", "random", "--games", "0"], "argument --games: must be a positive integer, got '0'"),
        (["--agents", "random", "--games", "-4"], "argument --games: must be a positive integer, got '-4'"),
        (["--agents", "random", "--games", "9" * 5000], "argument --games: must be an integer of at most 20 digits"),
        (["--agents", "random", "--workers", "0"], "argument --workers: must be a positive integer, got '0'"),
        (["--agents", "random", "--rounds", "0"], "argument --rounds: must be an integer in 1..100, got '0'"),
        (["--agents", "random", "--rounds", "101"], "argument --rounds: must be an integer in 1..100, got '101'"),
        (["--focus", "random", "--vs", "cautious", "cautious"], "--vs: 'cautious' and 'cautious' are one agent"),
        (
            ["--focus", "random", "--vs", "search:budget=16", "search:budget=016"],
            "argument --vs: 'search:budget=016' and 'search:budget=16' are one agent (search:budget=16)",
        ),
        (["--focus", "random", "--vs", "random", "random "], "argument --vs: 'random ' and 'random' are one agent"),
        (["--agents", "random", "--players", "7"], "argument --players: invalid choice: 7"),
        (["--agents", "random", "--players", "3", "3"], "argument --players: 3 is listed twice"),
        (["--agents", "random", "--deck", "french"], "argument --deck: invalid choice: 'french'"),
        (["--agents", "nosuch"], "argument --agents: unknown Friday the 13th agent 'nosuch'; known agents: ["),
        (["--agents", "random", "search:budget=x"], "argument --agents: search option budget must be a positive int"),
        (["--focus", "nosuch", "--vs", "random"], "argument --focus: unknown Friday the 13th agent 'nosuch'"),
        (["--focus", "random", "--vs", "random", "nosuch"], "argument --vs: unknown Friday the 13th agent 'nosuch'"),
        (["--focus", "endgame:policy=x.npz", "--vs", "random"], "argument --focus: endgame option policy: 'x.npz'"),
        (["--focus", "ensemble-v1:greedy=no", "--vs", "random"], "argument --focus: greedy must be True or False"),
        (["--focus", "random"], "--focus needs --vs"),
        (["--agents", "random", "--matrix"], "at least two different agents"),
        (
            ["--agents", "ensemble-v1", "--deck", "german"],
            "plays the 'standard' deck, but this table plays the 'german' deck",
        ),
    ],
)
def test_bad_arguments_are_blamed_on_their_flag_before_any_game(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    error = error_of(argv, capsys)
    assert message in error
    assert "Traceback" not in error and len(error) < 2_000


@pytest.mark.usefixtures("no_games")
def test_a_bad_seed_is_not_blamed_on_the_agents(capsys: pytest.CaptureFixture[str]) -> None:
    error = error_of(["--agents", "random", "cautious", "--seed", "-1"], capsys)
    assert "--agents" not in error.splitlines()[-1]


@pytest.mark.usefixtures("no_games")
@pytest.mark.parametrize("flag", ["--json", "--markdown", "--plot"])
def test_an_unwritable_output_is_refused_before_any_game(
    flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suffix = {"--json": "json", "--markdown": "md", "--plot": "png"}[flag]
    if flag == "--plot":
        pytest.importorskip("matplotlib")
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    cases = [
        (f"/proc/out.{suffix}", f"argument {flag}: cannot write /proc/out.{suffix}"),
        (str(blocker / f"out.{suffix}"), f"argument {flag}: cannot create the folder {blocker}"),
        (str(tmp_path), f"argument {flag}: {tmp_path} is a folder"),
    ]
    for path, message in cases:
        error = error_of(["--agents", "random", flag, path], capsys)
        assert message in error
    assert not (tmp_path / f"out.{suffix}").exists()


@pytest.mark.usefixtures("no_games")
def test_two_outputs_on_one_path_or_an_unknown_plot_format_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = str(tmp_path / "r.out")
    error = error_of(["--agents", "random", "--json", same, "--markdown", same], capsys)
    assert "--json and --markdown both write" in error
    pytest.importorskip("matplotlib")
    error = error_of(["--agents", "random", "--plot", str(tmp_path / "r.xyz")], capsys)
    assert re.search(r"argument --plot: matplotlib cannot write '\.xyz' files; use one of .*\.png", error)


def test_outputs_go_to_new_folders_and_agents_are_specs_as_agents_make_takes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "deep" / "er"
    argv = ["--focus", "search:budget=300", "--vs", "endgame:budget=300", "ensemble-v1", "--games", "3"]
    argv += ["--rounds", "1", "--players", "3", "--no-progress", "--json", str(out / "r.json")]
    argv += ["--markdown", str(out / "md" / "r.md")]
    command.main(argv)
    printed = capsys.readouterr().out
    assert "search:budget=300 vs endgame:budget=300" in printed
    data = json.loads((out / "r.json").read_text())
    assert [m["label"] for m in data["matchups"]] == [
        "search:budget=300 vs endgame:budget=300",
        "search:budget=300 vs ensemble-v1",
    ]
    for matchup in data["matchups"]:
        for agent in matchup["agents"]:
            interval = agent["win_rate"]
            assert interval["ci_low"] is None or 0.0 <= interval["ci_low"] <= interval["ci_high"] <= 1.0
    assert (out / "md" / "r.md").read_text().startswith("# Evaluation")
    assert not list(out.glob("*.tmp")) and not list((out / "md").glob("*.tmp"))


def test_friday13_evaluate_is_the_same_command(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--agents", "random", "cautious", "--games", "3", "--players", "3", "--no-progress", "--rounds", "1"]
    command.main(argv)
    direct = capsys.readouterr().out
    assert cli.main(["evaluate", *argv]) == 0
    via_cli = capsys.readouterr().out
    assert via_cli.split("\n")[:-2] == direct.split("\n")[:-2]  # the last line holds the wall time
    with pytest.raises(SystemExit) as exited:
        cli.main(["evaluate", "--agents", "random", "--seed", "-1"])
    assert exited.value.code == 2
    assert "argument --seed" in capsys.readouterr().err
    assert agents.names()  # the help text lists them


def test_json_or_markdown_to_dash_go_to_stdout_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--json -`` prints only the JSON on stdout (for a pipe); the tables and notes go to stderr."""
    monkeypatch.chdir(tmp_path)
    argv = ["--agents", "random", "cautious", "--games", "6", "--players", "3", "--rounds", "1", "--no-progress"]
    command.main([*argv, "--json", "-"])
    printed = capsys.readouterr()
    data = json.loads(printed.out)
    assert [(m["label"], m["games"]) for m in data["matchups"]] == [("random, cautious", 6)]
    assert "3 players (equal seat win rate 0.333)" in printed.err
    command.main([*argv, "--markdown", "-"])
    assert capsys.readouterr().out.startswith("# Evaluation\n")
    assert not (tmp_path / "-").exists()
    error = error_of([*argv, "--json", "-", "--markdown", "-"], capsys)
    assert "--json and --markdown both write -" in error


def start_evaluation(argv: list[str], **options: Any) -> subprocess.Popen[bytes]:
    """``friday13 evaluate`` in a new process group (as a terminal runs it), its output piped."""
    pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
    return subprocess.Popen(
        [sys.executable, "-m", "friday13_env.cli", "evaluate", *argv], start_new_session=True, **{**pipes, **options}
    )


def wait_for_progress_bar(process: subprocess.Popen[bytes]) -> bytes:
    """What the process wrote to stderr up to its progress bar: by then it plays (or starts its workers)."""
    assert process.stderr is not None
    seen = b""
    while b"|" not in seen:
        chunk = os.read(process.stderr.fileno(), 4096)
        assert chunk, f"the evaluation ended before playing: {seen.decode()}"
        seen += chunk
    return seen


@pytest.mark.parametrize(("signum", "workers"), [(signal.SIGINT, 1), (signal.SIGINT, 2), (signal.SIGTERM, 1)])
def test_ctrl_c_or_sigterm_stops_with_one_line_and_leaves_the_output_as_it_was(
    signum: signal.Signals, workers: int, tmp_path: Path
) -> None:
    pytest.importorskip("tqdm")
    out = tmp_path / "r.json"
    out.write_text("previous\n")
    argv = ["--agents", "random", "cautious", "--games", "100000", "--workers", str(workers), "--json", str(out)]
    process = start_evaluation(argv)
    seen = wait_for_progress_bar(process)
    if signum == signal.SIGINT:
        os.killpg(process.pid, signum)  # Ctrl-C reaches the whole process group, workers included
    else:
        process.send_signal(signum)
    _, rest = process.communicate(timeout=120)
    error = (seen + rest).decode()
    assert process.returncode == 128 + signum
    assert "Traceback" not in error and "KeyboardInterrupt" not in error
    message = f"stopped by {signum.name}: nothing was written"
    assert error.count(message) == 1 and error.splitlines()[-1].endswith(message)  # a bar cut short may precede it
    assert out.read_text() == "previous\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["r.json"]


@pytest.mark.slow
def test_sigkill_at_random_moments_never_leaves_a_partial_json(tmp_path: Path) -> None:
    """Soak: kill small evaluations at seeded random moments; the JSON is the previous file or the whole result."""
    out = tmp_path / "r.json"
    argv = ["--agents", "random", "cautious", "--games", "300", "--players", "3", "--rounds", "1", "--no-progress"]
    argv += ["--json", str(out)]

    def figures(path: Path) -> dict[str, Any]:
        data = json.loads(path.read_text())
        del data["elapsed_s"]
        return data

    start = time.perf_counter()
    reference = start_evaluation(argv)
    reference.communicate(timeout=300)
    assert reference.returncode == 0
    duration = time.perf_counter() - start  # only spreads the kills over a run's life, nothing is asserted on it
    expected = figures(out)
    rng = np.random.default_rng(43)
    outcomes = set()
    for attempt in range(12):
        previous = None if attempt % 2 else f"previous {attempt}\n"
        out.unlink(missing_ok=True)
        if previous is not None:
            out.write_text(previous)
        process = start_evaluation(argv, stderr=subprocess.DEVNULL)
        try:
            process.wait(timeout=rng.uniform(0.3, 2.0) * duration)  # past 1.0 most runs finish, even on a busy CPU
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if not out.exists():
            assert previous is None
            outcomes.add("absent")
        elif out.read_text() == previous:
            outcomes.add("previous")
        else:
            assert figures(out) == expected  # a whole, valid file, equal to the uninterrupted run's
            outcomes.add("complete")
    assert {"complete"} < outcomes  # some runs were killed before writing, some finished


def test_seatings_permutations_play_every_order_of_a_mixed_table(capsys: pytest.CaptureFixture[str]) -> None:
    """``--seatings permutations``: 3! games a deal for three different agents (3 with rotations), named in the
    JSON and the header; an unknown seating is a usage error naming the choices."""
    argv = ["--agents", "random", "cautious", "majority", "--games", "12", "--players", "3", "--rounds", "1"]
    command.main([*argv, "--no-progress", "--json", "-", "--seatings", "permutations"])
    printed = capsys.readouterr()
    data = json.loads(printed.out)
    assert data["seatings"] == "permutations" and "mean of its seat permutations" in printed.err
    assert [(m["games"], m["deals"]) for m in data["matchups"]] == [(12, 2)]
    command.main([*argv, "--no-progress", "--json", "-"])
    data = json.loads(capsys.readouterr().out)
    assert data["seatings"] == "rotations" and [(m["games"], m["deals"]) for m in data["matchups"]] == [(12, 4)]
    error = error_of([*argv, "--seatings", "all"], capsys)
    assert "argument --seatings: invalid choice: 'all'" in error and "permutations" in error and "rotations" in error
