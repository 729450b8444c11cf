"""The benchmark review of 0.16: each test pins one defect found there, fixed.

``friday13 ratings`` refuses to write over an agent's checkpoint or an existing file (without ``--overwrite``); a
run checks its output path before any game; a partial file's implausible cost, an oversized or endless leaderboard
page, a ratings file of more games than its tables play, a long integer literal and rows of texts or booleans are
refused by name; the default result file is named after the canonical spec; the pre-check refuses an illegal or
non-integer action; the messages after Ctrl-C and after saving replays say what happened; a suite file with unknown
keys, repeated or unprintable cell names, or references that would invert its scores is refused.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import command, fingerprints, ratings, runner
from friday13_env.benchmark.leaderboard import result_name
from friday13_env.benchmark.results import read_result
from friday13_env.benchmark.suite import Cell, Suite, get_suite, suite_from_dict, suites
from friday13_env.core.agent import IllegalMoveError, Observation
from friday13_env.core.signals import Interrupted
from friday13_env.friday13.agents import REGISTRY
from friday13_env.friday13.engine import IllegalActionError
from friday13_env.friday13.evaluation.duplicate import seatings
from tests.benchmark.helpers import CARD_CELLS, SOLO_CELLS, friday13, made_result, small_suite

THREE = ["random", "cautious", "majority"]
DEALS = 5
"""Two units per cell (``UNIT_DEALS`` is 4): the second one short."""


@pytest.fixture(scope="module")
def suite() -> Suite:
    return small_suite(deals=DEALS)


def played(*args: object, **kwargs: object) -> None:
    raise AssertionError("a game was played")


@pytest.fixture
def no_game(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any game played, of a benchmark or of a ratings run, fails the test."""
    monkeypatch.setattr(runner, "play_unit", played)
    monkeypatch.setattr(command, "prepare", played)
    monkeypatch.setattr(ratings, "play_tables", played)


def partial_with(suite: Suite, out: Path, units: dict[str, Any]) -> Path:
    """``OUT.partial`` with this run's header (``majority`` on ``suite``) and ``units``."""
    header = runner.prepare("majority", suite, workers=1).header
    path = runner.partial_path(out)
    path.write_text(json.dumps({**header, "complete": False, "units": units}))
    return path


# -- 1. friday13 ratings --out -----------------------------------------------------------------------------


@pytest.mark.parametrize("spec", ["{policy}", "{policy}:greedy=false"])
def test_ratings_refuses_an_output_on_an_agents_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_ratings: list[dict[str, Any]], spec: str
) -> None:
    """``--out`` on the checkpoint of one of ``--agents`` (with or without ``--overwrite``): exit 2 with the message
    ``friday13 benchmark`` gives, and the checkpoint is left as it was."""
    policy = tmp_path / "pol.npz"
    shutil.copy(REGISTRY.zoo()["ppo-v1"], policy)
    before = policy.read_bytes()
    for overwrite in ([], ["--overwrite"]):
        argv = ["ratings", "--agents", "random", "cautious", spec.format(policy=policy), "--tables", "1"]
        code, printed = friday13([*argv, "--workers", "1", "--out", str(policy), *overwrite])
        assert code == 2
        error = capsys.readouterr().err
        assert "is an agent evaluated here and an output it would overwrite; write elsewhere" in error, error
        assert policy.read_bytes() == before and printed == ""
    assert fake_ratings == []


def test_an_output_on_a_zoo_policys_file_is_refused(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake_ratings: list[dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A zoo name stands for its file: ``ratings`` (named, or in its default pool of every agent) and ``benchmark``
    refuse an ``--out`` on it, even with ``--overwrite`` (the zoo is a copy here, so nothing shipped is at risk)."""
    policy = tmp_path / "ppo-v1.npz"
    shutil.copy(REGISTRY.zoo()["ppo-v1"], policy)
    before = policy.read_bytes()
    monkeypatch.setattr(type(REGISTRY), "zoo", lambda registry: {"ppo-v1": policy})
    commands = [
        ["ratings", "--agents", "random", "cautious", "ppo-v1", "--tables", "1", "--workers", "1", "--overwrite"],
        ["ratings", "--tables", "1", "--workers", "1", "--overwrite"],
        ["benchmark", "--agent", "ppo-v1", "--suite", "card-4p-quick", "--workers", "1", "--overwrite"],
    ]
    for argv in commands:
        code, printed = friday13([*argv, "--out", str(policy)])
        assert code == 2
        error = capsys.readouterr().err
        assert "ppo-v1 is an agent evaluated here and an output it would overwrite" in error, (argv, error)
        assert policy.read_bytes() == before and printed == ""
    assert fake_ratings == []


KEPT_RATINGS = '{"format": "friday13-ratings", "format_version": 1}'
"""An earlier ratings file (only a ratings file is replaced, ``test_review_0_27``)."""


def test_ratings_keeps_an_existing_output_unless_told(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake_ratings: list[dict[str, Any]]
) -> None:
    """An existing ``--out`` (the default ``results/benchmark/ratings.json`` included) is refused before any game,
    exit 2 naming ``--overwrite``; with ``--overwrite`` it is replaced."""
    out = tmp_path / "ratings.json"
    out.write_text(KEPT_RATINGS)
    argv = ["ratings", "--agents", *THREE, "--tables", "1", "--workers", "1", "--out", str(out)]
    code, _ = friday13(argv)
    assert code == 2
    assert f"argument --out: {out} exists; --overwrite replaces it" in capsys.readouterr().err
    assert out.read_text() == KEPT_RATINGS and fake_ratings == []
    code, printed = friday13([*argv, "--overwrite"])
    assert code == 0 and f"wrote {out}" in printed
    assert json.loads(out.read_text())["format"] == ratings.RATINGS_FORMAT


def test_ratings_default_output_is_kept_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_game: None
) -> None:
    """Without ``--out``, the default file is not replaced silently."""
    pytest.importorskip("openskill")
    monkeypatch.chdir(tmp_path)
    default = tmp_path / "results" / "benchmark" / "ratings.json"
    default.parent.mkdir(parents=True)
    default.write_text(KEPT_RATINGS)
    code, _ = friday13(["ratings", "--agents", *THREE, "--tables", "1", "--workers", "1"])
    assert code == 2 and "results/benchmark/ratings.json exists; --overwrite replaces it" in capsys.readouterr().err
    assert default.read_text() == KEPT_RATINGS


def test_ratings_overwrite_is_refused_with_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_game: None
) -> None:
    """``--overwrite`` with ``--out -`` would mean nothing: refused rather than ignored."""
    monkeypatch.chdir(tmp_path)
    code, _ = friday13(["ratings", "--agents", *THREE, "--out", "-", "--overwrite"])
    assert code == 2
    assert "--overwrite replaces a file at --out; --out - writes to stdout" in capsys.readouterr().err


# -- 2. prepare checks its output path ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("out", "message"),
    [
        ("folder", r"out .*folder is a folder; give a file name"),
        ("file.txt/r.json", r"cannot create the folder .*file\.txt: .*file\.txt is a file"),
    ],
)
def test_prepare_refuses_an_output_it_cannot_write_before_any_game(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, out: str, message: str
) -> None:
    """An ``out`` that is a folder, or below a file: a ``ValueError`` from ``prepare``, before any game, and no
    partial file left."""
    monkeypatch.setattr(runner, "play_unit", played)
    (tmp_path / "folder").mkdir()
    (tmp_path / "file.txt").write_text("a file")
    with pytest.raises(ValueError, match=message):
        runner.prepare("majority", suite, workers=1, out=tmp_path / out)
    with pytest.raises(ValueError, match=message):
        runner.run_benchmark("majority", suite, workers=1, out=tmp_path / out)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["file.txt", "folder"]


def test_prepare_refuses_an_output_that_is_not_a_path(suite: Suite) -> None:
    with pytest.raises(ValueError, match=r"out must be a path .*, not 3"):
        runner.prepare("majority", suite, workers=1, out=3)  # type: ignore[arg-type]


# -- 3. a partial file's cost --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cost", "message"),
    [
        ({"act_seconds": 1e308, "decisions": 100}, r"unit 0:0 took 1e\+308 s of moves, over the"),
        ({"act_seconds": 1e300, "decisions": 1}, r"unit 0:0 took 1e\+300 s of moves, over the"),
        ({"act_seconds": 1.0, "decisions": 10**400}, r"unit 0:0 has 1000.* moves, over the"),
    ],
)
def test_a_partial_file_of_an_implausible_cost_is_refused(
    suite: Suite, tmp_path: Path, cost: dict[str, Any], message: str
) -> None:
    """A unit's time or count of moves beyond any real run (which would make the cost per move infinite, or fail to
    convert, after every game): the file is refused by name before any game."""
    out = tmp_path / "out.json"
    partial_with(suite, out, {"0:0": {"rows": [[0.5, 1.0]] * 4, **cost}})
    with pytest.raises(ValueError, match=rf"out\.json\.partial is a damaged partial benchmark file \({message}"):
        runner.prepare("majority", suite, workers=1, out=out)


# -- 4. friday13 leaderboard --check reads its page capped ----------------------------------------------------


@pytest.fixture
def page_fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe as the page; a thread feeds a reader that opens it (so that code reading it ends, not hangs)."""
    if not hasattr(os, "mkfifo"):
        pytest.skip("no named pipes here")
    path = tmp_path / "page.md"
    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        while not stop.is_set():
            try:
                handle = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # no reader yet
                time.sleep(0.01)
                continue
            os.write(handle, b"a page\n")
            os.close(handle)
            return

    thread = threading.Thread(target=feed, daemon=True)
    thread.start()
    yield path
    stop.set()
    thread.join(5)


def test_leaderboard_check_refuses_a_pipe_as_its_page(
    page_fifo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command, "generate", lambda results: "# Leaderboard\n")
    code, _ = friday13(["leaderboard", "--results", str(tmp_path), "--out", str(page_fifo), "--check"])
    assert code == 2
    assert f"argument --out: leaderboard page {page_fifo} is not a regular file; not read" in capsys.readouterr().err


def test_leaderboard_check_refuses_a_device_or_an_oversized_page(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A link to a device, or a page over the cap (a sparse file: nothing is written): exit 2, not read."""
    monkeypatch.setattr(command, "generate", lambda results: "# Leaderboard\n")
    device = tmp_path / "device.md"
    device.symlink_to(os.devnull)
    code, _ = friday13(["leaderboard", "--results", str(tmp_path), "--out", str(device), "--check"])
    assert code == 2 and "is not a regular file; not read" in capsys.readouterr().err
    big = tmp_path / "big.md"
    with big.open("wb") as handle:
        handle.truncate(command.MAX_PAGE_BYTES + 1)
    code, _ = friday13(["leaderboard", "--results", str(tmp_path), "--out", str(big), "--check"])
    assert code == 2
    assert "-byte limit; not read" in capsys.readouterr().err


# -- 5. a ratings file's games -------------------------------------------------------------------------------


def ratings_data(tables: list[dict[str, Any]], agents: list[str] = THREE) -> dict[str, Any]:
    """A ratings file's content whose ratings are what ``tables`` give."""
    return {
        "format": ratings.RATINGS_FORMAT,
        "format_version": 1,
        "agents": agents,
        "fingerprints": dict.fromkeys(agents, "0" * 16),
        "tables": len(tables),
        "seed": 0,
        "model": "openskill PlackettLuce, tau=0, games in table order",
        "ratings": ratings.fit(tables, agents),
        "provenance": {"command": None},
        "games": tables,
    }


def rotations(lineup: list[str], games: int | None = None) -> dict[str, Any]:
    """A table of ``lineup`` with one game per seat rotation (or ``games`` games)."""
    count = len(seatings(lineup)) if games is None else games
    return {"lineup": lineup, "points": [[seat * 3 + game % 2 for seat in range(len(lineup))] for game in range(count)]}


def read_back(tmp_path: Path, data: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "ratings.json"
    path.write_text(json.dumps(data))
    return ratings.read_ratings(path)


@pytest.mark.parametrize("games", [0, 2, 4, 1000])
def test_a_ratings_table_holds_one_game_per_seat_rotation(tmp_path: Path, games: int) -> None:
    """A table of 3 agents plays 3 games (one per rotation): more or fewer is a damaged file, refused by name before
    its games are fitted again."""
    pytest.importorskip("openskill")
    good = ratings_data([rotations(THREE), rotations(THREE[::-1])])
    assert read_back(tmp_path, good) == good
    bad = ratings_data([rotations(THREE), rotations(THREE[::-1], games)])
    with pytest.raises(ValueError, match=r"ratings file .*: table 1 holds \d+ games, not the 3 of its lineup's seat"):
        read_back(tmp_path, bad)


def test_a_ratings_file_of_too_many_tables_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("openskill")
    monkeypatch.setattr(ratings, "MAX_TABLES", 2, raising=False)
    data = ratings_data([rotations(THREE)] * 3)
    with pytest.raises(ValueError, match=r"ratings file .*: it holds 3 tables, over the 2 a ratings run plays"):
        read_back(tmp_path, data)


def test_a_ratings_run_of_too_many_tables_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_game: None
) -> None:
    """``tables`` over ``MAX_TABLES``: a ``ValueError`` from ``run_ratings`` and exit 2 from the command, before any
    game: a run never writes a file it would refuse to read."""
    pytest.importorskip("openskill")
    monkeypatch.setattr(ratings, "MAX_TABLES", 2, raising=False)
    with pytest.raises(ValueError, match=r"tables must be 1 to 2"):
        ratings.run_ratings(THREE, 3, seed=0, workers=1)
    out = tmp_path / "ratings.json"
    code, _ = friday13(["ratings", "--agents", *THREE, "--tables", "3", "--workers", "1", "--out", str(out)])
    assert code == 2 and "tables must be 1 to 2" in capsys.readouterr().err
    assert not out.exists()


def test_a_ratings_game_of_implausible_points_is_refused(tmp_path: Path) -> None:
    """Points too large for a float (which the fit would meet with an ``OverflowError``): refused by name."""
    pytest.importorskip("openskill")
    data = ratings_data([rotations(THREE)])
    data["games"][0]["points"][0][0] = 10**400
    with pytest.raises(ValueError, match=r"ratings file .*: its games must be tables of 3-6"):
        read_back(tmp_path, data)


def test_the_shipped_ratings_file_still_loads() -> None:
    path = Path(__file__).resolve().parents[2] / "results" / "benchmark" / "ratings.json"
    if not path.exists():
        pytest.skip("no ratings file committed")
    pytest.importorskip("openskill")
    assert ratings.read_ratings(path)["tables"] == 400


# -- 6. the default result file's name -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("majority: keep_min=3", "majority_keep_min_3.json"),
        ("search:budget=0600", "search_budget_600.json"),
        (" random ", "random.json"),
    ],
)
def test_the_default_result_file_is_named_after_the_canonical_spec(suite: Suite, spec: str, name: str) -> None:
    """The name the leaderboard expects (``result_name`` of the spec as the result records it)."""
    assert result_name(REGISTRY.check(spec).label) == name
    assert command.default_out(suite, spec, "test").name == name
    assert command.default_out(suite, spec, "dev").name == name.replace(".json", ".dev.json")


@pytest.mark.parametrize(
    ("typed", "name"),
    [
        ("majority: keep_min=3", "majority_keep_min_3.json"),
        ("majority:open_min=3,keep_min=2", "majority.json"),  # both options at their defaults (0.28.0)
    ],
)
def test_a_complete_result_under_the_canonical_name_is_kept(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, no_game: None,
    typed: str, name: str,
) -> None:  # fmt: skip
    """``--agent "majority: keep_min=3"`` finds the result ``majority:keep_min=3`` wrote, and keeps it; a spec of
    defaults only finds ``majority.json``."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    existing = tmp_path / "results" / "benchmark" / "tiny-v1" / name
    existing.parent.mkdir(parents=True)
    kept = json.dumps({"format": runner.RESULT_FORMAT, "format_version": runner.RESULT_FORMAT_VERSION})
    existing.write_text(kept)
    code, _ = friday13(["benchmark", "--agent", typed, "--suite", "tiny", "--no-progress"])
    assert code == 2
    assert f"{name} holds a complete result; --overwrite replaces it" in capsys.readouterr().err
    assert existing.read_text() == kept


# -- 7. the pre-check's actions ------------------------------------------------------------------------------


class Answers:
    """An agent that answers every position with ``answer(observation)``."""

    def __init__(self, name: str, answer: Any) -> None:
        self.name = name
        self.answer = answer

    def act(self, observation: Observation) -> Any:
        return self.answer(observation)


def lowest(observation: Observation) -> int:
    return int(np.flatnonzero(observation["action_mask"])[0])


def forbidden(observation: Observation) -> int:
    return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])


@pytest.mark.parametrize("game", ["friday13", "friday"])
@pytest.mark.parametrize(
    ("answer", "shown"),
    [
        (lambda observation: 0.7, "0.7"),
        (lambda observation: float(lowest(observation)), r"\d\.0"),
        (lambda observation: "x", "'x'"),
        (lambda observation: True, "True"),
        (lambda observation: None, "None"),
        (lambda observation: np.float64(lowest(observation)), r"(np\.float64\()?\d\.0\)?"),  # numpy < 2: 0.0
        (forbidden, r"\d+"),
        (lambda observation: 10**6, "1000000"),
        (lambda observation: -1, "-1"),
        (lambda observation: np.array([lowest(observation)]), r"array\(\[\d+\]\)"),
        (lambda observation: np.array(float(lowest(observation))), r"array\(\d\.\)"),
    ],
)
def test_the_pre_check_refuses_an_action_that_is_not_a_legal_int(game: str, answer: Any, shown: str) -> None:
    """A float (even a whole one), a text, a bool, None, an illegal or out-of-range action at a probe position: a
    ``ValueError`` naming the agent, the action and the legal ones, never a silent ``int()``."""
    agent = Answers("odd-agent", answer)
    with pytest.raises(ValueError, match=rf"agent 'odd-agent' chose action {shown} .*legal actions are \[\d"):
        fingerprints.behaviour_fingerprint(agent, game)


@pytest.mark.parametrize("game", ["friday13", "friday"])
def test_the_pre_check_takes_numpy_integers_and_0d_integer_arrays(game: str) -> None:
    """A numpy integer is an integer, and a 0-d integer array (what SB3's ``predict`` returns for one observation)
    is an action the environments take: the same fingerprint as the plain int."""
    plain = fingerprints.behaviour_fingerprint(Answers("plain", lowest), game)
    numpy = fingerprints.behaviour_fingerprint(Answers("numpy", lambda obs: np.int64(lowest(obs))), game)
    array = fingerprints.behaviour_fingerprint(Answers("array", lambda obs: np.array(lowest(obs))), game)
    assert plain == numpy == array


def test_prepare_refuses_an_agent_of_illegal_moves_before_any_game(
    suite: Suite, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runner, "play_unit", played)
    with pytest.raises(ValueError, match=r"agent 'illegal' chose action \d+ .*legal actions are"):
        runner.prepare(Answers("illegal", forbidden), suite, workers=1)
    with pytest.raises(ValueError, match=r"agent 'illegal' chose action \d+ .*legal actions are"):
        runner.prepare(Answers("illegal", forbidden), small_suite(SOLO_CELLS, deals=2), workers=1)


def test_an_illegal_move_mid_run_is_a_clean_error(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An illegal move while the games are played (one the probes did not meet; either game's error): exit 2 with
    its message, as the command's other errors, not a traceback. Any other ``ValueError`` (a bug in an agent's own
    code, say) is not a usage error: it keeps its traceback."""
    errors = [
        IllegalActionError("agent 'x' in seat player_1: illegal action 7; legal actions: [1, 2]"),
        IllegalMoveError("agent 'x' played an illegal move: illegal action 7; legal actions: [1, 2]"),
    ]
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    monkeypatch.setattr(command, "prepare", lambda *args, **kwargs: types.SimpleNamespace(processes=1))
    out = tmp_path / "out.json"
    argv = ["benchmark", "--agent", "majority", "--suite", "tiny", "--no-progress", "--out", str(out)]
    for error in errors:

        def illegal(plan: object, progress: object = None, error: Exception = error) -> None:
            raise error

        monkeypatch.setattr(command, "execute", illegal)
        code, _ = friday13(argv)
        assert code == 2
        assert "illegal action 7; legal actions: [1, 2]" in capsys.readouterr().err
        assert not out.exists()

    def broken(plan: object, progress: object = None) -> None:
        raise ValueError("a bug in the agent's own code")

    monkeypatch.setattr(command, "execute", broken)
    with pytest.raises(ValueError, match="a bug in the agent's own code"):
        friday13(argv)


# -- 8. Ctrl-C keeps the partial file, and says so ------------------------------------------------------------


def test_ctrl_c_says_the_partial_file_was_kept(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped after its first unit, the command names ``OUT.partial`` and says the same command continues it
    (not "nothing was written"); exit 130, as the shells do."""

    def stopped(plan: runner.Plan, progress: Any = None) -> dict[str, Any]:
        calls: list[int] = []

        def stop_after_one_unit(done: int, total: int) -> None:
            calls.append(done)
            if len(calls) > 1:
                raise Interrupted(signal.SIGINT)

        return runner.execute(plan, stop_after_one_unit)

    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    monkeypatch.setattr(command, "execute", stopped)
    out = tmp_path / "out.json"
    code, _ = friday13(["benchmark", "--agent", "majority", "--suite", "tiny", "--no-progress", "--out", str(out)])
    assert code == 128 + signal.SIGINT
    error = capsys.readouterr().err
    assert f"kept the finished units in {out}.partial; the same command continues it" in error, error
    assert "nothing was written" not in error
    assert runner.partial_path(out).exists() and not out.exists()


# -- 9. long integer literals ----------------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["partial benchmark file", "ratings file", "benchmark result"])
def test_an_integer_of_too_many_digits_names_the_file(tmp_path: Path, what: str) -> None:
    """JSON's integers have no length limit, Python's conversion has one (4,300 digits): the ``ValueError`` names
    the file as any other file that is not JSON."""
    path = tmp_path / "file.json"
    path.write_text('{"format": "friday13-benchmark-result", "x": ' + "1" * 5000 + "}")
    with pytest.raises(ValueError, match=rf"{what} {path} is not JSON: "):
        runner.read_json(path, what)
    if what == "ratings file":
        with pytest.raises(ValueError, match=rf"ratings file {path} is not JSON: "):
            ratings.read_ratings(path)


# -- 10. rows and counts of the right kind ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "edit",
    [
        lambda rows: [[str(value) for value in row] for row in rows],
        lambda rows: [[bool(row[0]), row[1]] for row in rows],
        lambda rows: [[True, rows[0][1]], *rows[1:]],
        lambda rows: [[rows[0][0], 10**400], *rows[1:]],
    ],
)
def test_a_result_of_rows_that_are_not_numbers_is_refused(suite: Suite, tmp_path: Path, edit: Any) -> None:
    """Texts ``"1.0"``, booleans, an integer too large for a float in a result's rows: refused, never converted."""
    data = made_result(suite, "majority")
    path = tmp_path / suite.id / "majority.json"
    path.parent.mkdir()
    path.write_text(json.dumps(data))
    assert read_result(path, {suite.id: suite})[2] == data
    data["rows"][0] = edit(data["rows"][0])
    path.write_text(json.dumps(data))
    message = r"cell 4p-vs-random's rows are not numbers, or not 5 rows of 2: a row holds 2 finite numbers \(not"
    with pytest.raises(ValueError, match=message):
        read_result(path, {suite.id: suite})


@pytest.mark.parametrize(
    "rows",
    [[["0.5", "1.0"]] * 4, [[True, 1.0]] * 4, [[1.0, False]] * 4, [[0.5, 10**400]] * 4, [[0.5, None]] * 4],
)
def test_a_partial_file_of_rows_that_are_not_numbers_is_refused(suite: Suite, tmp_path: Path, rows: Any) -> None:
    out = tmp_path / "out.json"
    partial_with(suite, out, {"0:0": {"rows": rows, "act_seconds": 0.0, "decisions": 1}})
    with pytest.raises(ValueError, match=r"is a damaged partial benchmark file \(unit 0:0 has rows .*numbers"):
        runner.prepare("majority", suite, workers=1, out=out)


def test_a_ratings_file_of_counts_that_are_not_ints_is_refused(tmp_path: Path) -> None:
    """``"tables": true`` for one table, ``"games": 3.0``: refused, not read as 1 and 3."""
    pytest.importorskip("openskill")
    data = ratings_data([rotations(THREE)])
    assert read_back(tmp_path, data) == data
    data["tables"] = True
    with pytest.raises(ValueError, match=r"its table count and seed must be those of its games"):
        read_back(tmp_path, data)
    data = ratings_data([rotations(THREE)])
    data["ratings"]["random"]["games"] = float(data["ratings"]["random"]["games"])
    with pytest.raises(ValueError, match=r"the rating of random is not what its games give"):
        read_back(tmp_path, data)


# -- 11. what --replays saved ----------------------------------------------------------------------------------


def benchmark_with_replays(suite: Suite, agent: str, out: Path, replays: Path) -> tuple[int, str]:
    argv = ["benchmark", "--agent", agent, "--suite", "tiny", "--workers", "1", "--no-progress", "--out", str(out)]
    return friday13([*argv, "--replays", str(replays), "--replay-deals", "1"])


def test_the_replays_message_counts_the_files_and_names_the_cells_not_played(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``random`` meets copies of itself in ``4p-vs-random``, which is not played: its games are not saved, and the
    message says how many files were and why that cell has none."""
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    replays = tmp_path / "replays"
    code, printed = benchmark_with_replays(suite, "random", tmp_path / "out.json", replays)
    assert code == 0, capsys.readouterr().err
    saved = sorted(path.name for path in replays.iterdir())
    assert len(saved) == 3 and all(name.startswith("01-3p-") for name in saved)  # deal 0 of 3p-vs-cautious
    assert f"saved 3 replay files in {replays}" in printed, printed
    assert "none for 4p-vs-random (the agent against copies of itself: not played)" in printed
    assert "of each cell" not in printed.replace("of each cell played", "")


def test_the_replays_message_says_continued_units_saved_none(
    suite: Suite, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run continued from ``OUT.partial`` does not play its finished units again, so saves none of their games;
    the message counts what it saved and says so."""
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    out = tmp_path / "out.json"
    calls: list[int] = []

    def stop_after_one_unit(done: int, total: int) -> None:
        calls.append(done)
        if len(calls) > 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        runner.execute(runner.prepare("majority", suite, workers=1, out=out), stop_after_one_unit)
    replays = tmp_path / "replays"
    code, printed = benchmark_with_replays(suite, "majority", out, replays)
    assert code == 0, capsys.readouterr().err
    saved = sorted(path.name for path in replays.iterdir())
    assert len(saved) == 3 and all(name.startswith("01-3p-") for name in saved)  # cell 0's deal 0 was played before
    assert f"saved 3 replay files in {replays}" in printed, printed
    assert f"none for the 1 unit continued from {out}.partial (played in an earlier run)" in printed


def test_the_replays_help_says_which_games_are_saved(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = friday13(["benchmark", "--help"])
    assert code == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert "each card-game cell played in this run" in flat
    assert "copies of itself" in flat and "continued from OUT.partial" in flat


# -- 12. suite files --------------------------------------------------------------------------------------------


def suite_data(name: str = "card-4p") -> dict[str, Any]:
    return json.loads(json.dumps(get_suite(name).to_dict()))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: (d.pop("num_rounds"), d.update(num_round=2)), r"unknown key\(s\) \['num_round'\]; a suite has"),
        (lambda d: d.update(extra=1), r"unknown key\(s\) \['extra'\]"),
        (lambda d: d["cells"][0].update(level=3), r"cell 4p-vs-random: unknown key\(s\) \['level'\]; a card-game"),
        (lambda d: d["splits"]["test"].update(deal=3), r"split test: unknown key\(s\) \['deal'\]; a split has"),
        (lambda d: d["cells"][1].update(name=d["cells"][0]["name"]), r"cell name\(s\) \['4p-vs-random'\] repeated"),
        (lambda d: d["cells"][0].update(name="a|b"), r"cell name 'a\|b' must be 1-"),
        (lambda d: d["cells"][0].update(name="a`b"), r"cell name 'a`b' must be 1-"),
        (lambda d: d["cells"][0].update(name="a\nb"), r"cell name 'a\\nb' must be 1-"),
        (
            lambda d: d["references"].update(search=[0.1, 0.5, 0.5, 0.5], random=[0.25, 0.1, 0.1, 0.1]),
            r"cell 4p-vs-random's references give search \(0.1\) a lower win share than random \(0.25\)",
        ),
    ],
)
def test_a_suite_file_with_unknown_keys_or_bad_cells_is_refused(edit: Any, message: str) -> None:
    """A misspelt key (which would silently take a default), a key of the other game's cells, a repeated or
    unprintable cell name, references under which ``search`` scores below ``random`` (inverted intervals)."""
    data = suite_data()
    edit(data)
    with pytest.raises(ValueError, match=message):
        suite_from_dict(data)


def test_a_solo_suite_cell_with_a_card_key_is_refused() -> None:
    data = suite_data("friday-levels")
    data["cells"][0]["players"] = 4
    with pytest.raises(ValueError, match=r"cell level-1: unknown key\(s\) \['players'\]; a solo-game cell has"):
        suite_from_dict(data)


def test_a_suite_object_with_repeated_cell_names_is_refused() -> None:
    """``definition_problems`` checks a ``Suite`` object as a file: two cells of one name would be one row."""
    twice = small_suite((CARD_CELLS[0], Cell(CARD_CELLS[0].name, 3, "standard", ("cautious",) * 2)), deals=2)
    with pytest.raises(ValueError, match=r"cell name\(s\) \['4p-vs-random'\] repeated"):
        runner.prepare("majority", twice, workers=1)


def test_every_shipped_suite_still_loads_unchanged() -> None:
    """The shipped files pass the stricter checks, and read back to the same definitions."""
    for name, shipped in suites().items():
        again = suite_from_dict(json.loads(json.dumps(shipped.to_dict())))
        assert again == shipped and again.definition_sha256 == shipped.definition_sha256, name
