"""Evaluations of any size start at once, use the CPUs there are, and never print or write a NaN.

Issue 43: ``--games 10**8`` built every unit of work before the first game (gigabytes), ``--workers 100000``
started that many processes, and a run too short for an interval printed ``0.000 ± nan``. The figures a seed
gives are pinned in ``tests/friday13/golden_evaluation.json``, made by this file's ``__main__`` with the code as it was
before work became lazy: the same deals, the same order of aggregation, so the same JSON (its solo figures made
again in 0.16.0, when each solo game's agent got a seed of its own).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from friday13_env.core import options, pool
from friday13_env.core.options import available_cpus
from friday13_env.core.stats import mean_interval
from friday13_env.friday.evaluation import evaluate as solo_evaluate
from friday13_env.friday.evaluation import format_markdown as solo_markdown
from friday13_env.friday.evaluation import format_table as solo_table
from friday13_env.friday.evaluation import results_to_json
from friday13_env.friday13.evaluation import Matchup, evaluate, focus_matchups, tournament
from friday13_env.friday13.evaluation.command import main as evaluate_main
from friday13_env.friday13.evaluation.report import format_markdown, format_text, write_json
from tests.scripts import load_training_script

GOLDEN = Path(__file__).parent / "golden_evaluation.json"


def friday13_figures() -> dict[str, Any]:
    """A small tournament: three matchups, two table sizes, deal counts that are not whole chunks."""
    matchups = [*focus_matchups("random", ["cautious", "majority"]), Matchup.table("random", "cautious")]
    data = evaluate(matchups, 30, [3, 4], seed=7, num_rounds=2, chunk_deals=3).to_dict()
    del data["elapsed_s"]  # wall time
    return data


def solo_figures() -> dict[str, Any]:
    results = [solo_evaluate("random", level, 9, seed=3) for level in (1, 4)]
    data = results_to_json(results, 3)
    for row in data["results"]:
        del row["ms_per_decision"]  # wall time
    return data


def strict_json(text: str) -> Any:
    """``json.loads`` that refuses ``NaN`` and ``Infinity``, which are not JSON."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in JSON output")

    return json.loads(text, parse_constant=refuse)


def test_a_seed_gives_the_figures_it_gave_before() -> None:
    golden = json.loads(GOLDEN.read_text())
    assert json.dumps(friday13_figures()) == json.dumps(golden["card"])
    assert json.dumps(solo_figures()) == json.dumps(golden["solo"])


class FirstChunk(Exception):
    """Raised by the first unit of work: the evaluation got as far as playing."""


def test_work_is_generated_as_it_is_played(monkeypatch: pytest.MonkeyPatch) -> None:
    """Memory before the first game does not grow with the games asked for (the most a run takes starts at once)."""

    def first(chunk: tournament.Chunk) -> None:
        raise FirstChunk(chunk)

    matchups = focus_matchups("random", ["cautious"])
    evaluate(matchups, 4, 4)  # imports and caches out of the measurement
    monkeypatch.setattr(tournament, "run_chunk", first)
    for games in (10**4, tournament.MAX_GAMES):
        tracemalloc.start()
        try:
            with pytest.raises(FirstChunk) as reached:
                evaluate(matchups, games, [3, 4], progress=False)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        chunk = reached.value.args[0]
        assert (chunk.matchup_index, chunk.num_players, chunk.first_deal, chunk.num_deals) == (0, 3, 0, 4)
        assert peak < 1_000_000, f"{peak:,} bytes traced before the first game of {games:,}"


def test_work_units_are_an_iterator_in_the_fixed_order() -> None:
    lineups = [Matchup.versus("random", "cautious").lineup(n) for n in (3, 4)]
    units = tournament.work_units([(0, lineups[0]), (0, lineups[1])], 10**20, 4, "standard", 4, 0)
    assert iter(units) is units
    first, second = next(units), next(units)
    assert (first.first_deal, first.num_deals, second.first_deal, second.index) == (0, 4, 4, 1)
    small = list(tournament.work_units([(0, lineups[0]), (1, lineups[1])], 30, 4, "standard", 4, 0))
    assert [(u.matchup_index, u.num_players, u.first_deal, u.num_deals) for u in small] == [
        (0, 3, 0, 4), (0, 3, 4, 4), (0, 3, 8, 2), (1, 4, 0, 4), (1, 4, 4, 4),
    ]  # fmt: skip


class PoolStarted(Exception):
    """Raised instead of starting a process pool; carries the number of processes asked for."""


@pytest.fixture
def two_cpus(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """This process may use 2 CPUs; a pool records its size and starts nothing."""
    monkeypatch.setattr(os, "process_cpu_count", lambda: 2, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    sizes: list[int] = []
    real_pool = pool.worker_pool

    def recorded_pool(processes: int) -> contextlib.AbstractContextManager[object]:
        if processes <= 1:
            return real_pool(processes)
        sizes.append(processes)
        raise PoolStarted(processes)

    monkeypatch.setattr(pool, "worker_pool", recorded_pool)
    return sizes


def test_workers_are_capped_by_the_cpus_this_process_may_use(
    two_cpus: list[int], capsys: pytest.CaptureFixture[str]
) -> None:
    assert available_cpus() == 2
    with pytest.raises(PoolStarted):
        evaluate([Matchup.table("random", "cautious")], 64, 4, workers=100_000)
    with pytest.raises(PoolStarted):
        evaluate_main(["--agents", "random", "cautious", "--games", "64", "--workers", "100000", "--no-progress"])
    assert two_cpus == [2, 2]
    note = capsys.readouterr().err.strip()
    assert note == "--workers 100000: capped at 2, the CPUs this process may use"


def test_one_unit_of_work_or_one_cpu_plays_in_this_process(
    two_cpus: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    table = [Matchup.table("random", "cautious")]
    assert evaluate(table, 4, 4, workers=8) == evaluate(table, 4, 4)  # 2 deals: one chunk
    monkeypatch.setattr(os, "process_cpu_count", lambda: 1, raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert evaluate(table, 4, 4, workers=8, chunk_deals=1) == evaluate(table, 4, 4, chunk_deals=1)  # 2 chunks
    assert two_cpus == []


def test_an_estimate_of_one_sample_says_its_interval_is_undefined() -> None:
    estimate = mean_interval([0.25])
    assert str(estimate) == "0.250 (interval undefined: n < 2)"
    assert estimate.to_dict() == {"mean": 0.25, "ci_low": None, "ci_high": None, "half_width": None, "samples": 1}
    assert str(mean_interval([0.25, 0.75])) == "0.500 ± 3.177"


def test_a_one_deal_evaluation_prints_and_writes_no_nan(tmp_path: Path) -> None:
    result = evaluate(focus_matchups("random", ["cautious"]), 4, 4)  # 4 games = 1 deal
    for text in (format_text(result), format_markdown(result)):
        assert "nan" not in text.lower() and "n/a" not in text
        assert "0.000 (interval undefined: n < 2)" in text
    write_json(result, tmp_path / "r.json")
    data = strict_json((tmp_path / "r.json").read_text())
    assert data["matchups"][0]["agents"][0]["win_rate"] == {
        "mean": 0.0, "ci_low": None, "ci_high": None, "half_width": None, "samples": 1,
    }  # fmt: skip


def test_a_one_game_solo_evaluation_says_its_score_interval_is_undefined() -> None:
    result = solo_evaluate("random", 2, 1, seed=3)
    assert result.mean_score.value == -74.0
    for text in (solo_table([result]), solo_markdown([result], 3)):
        assert "interval undefined: n < 2" in text and "nan" not in text.lower()
        assert "-74.00 [" not in text  # no interval of width 0
    data = strict_json(json.dumps(results_to_json([result], 3)))
    assert data["results"][0]["mean_score"] == {"value": -74.0, "low": None, "high": None}
    assert data["results"][0]["win_rate"]["low"] == 0.0  # a Wilson interval exists for one game


def test_the_solo_evaluation_script_stops_on_ctrl_c_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_training_script("evaluate_friday")

    def interrupted(*args: object, **kwargs: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the games are played

    monkeypatch.setattr(script, "play_level", interrupted)
    out = tmp_path / "r.json"
    out.write_text("previous\n")
    assert script.main(["--agents", "random", "--levels", "1", "--games", "3", "--json", str(out)]) == 130
    assert capsys.readouterr().err.splitlines() == ["stopped by SIGINT: nothing was written"]
    assert out.read_text() == "previous\n"


def test_the_solo_evaluation_script_gives_the_same_results_on_two_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each agent and level is one unit, played whole in one process: the files do not depend on ``--workers``
    (only the measured time per decision does). Two processes even where this machine has one CPU."""
    script = load_training_script("evaluate_friday")
    monkeypatch.setattr(options, "available_cpus", lambda: 2)  # what pool_size reads
    argv = ["--agents", "random", "heuristic:samples=1", "--levels", "1", "2", "--games", "3", "--seed", "4"]
    for workers in ("1", "2"):
        assert script.main([*argv, "--workers", workers, "--json", str(tmp_path / f"{workers}.json")]) == 0
    results = [json.loads((tmp_path / f"{workers}.json").read_text())["results"] for workers in ("1", "2")]
    for rows in results:
        for row in rows:
            row.pop("ms_per_decision")
    assert results[0] == results[1]
    assert [(row["agent"], row["level"]) for row in results[1]] == [
        ("random", 1),
        ("random", 2),
        ("heuristic:samples=1", 1),
        ("heuristic:samples=1", 2),
    ]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--games", "9" * 5000], "argument --games: must be an integer of at most 20 digits"),
        (["--games", "x"], "argument --games: must be a positive integer, got 'x'"),
        (["--seed", "-1"], "argument --seed: must be a non-negative integer, got '-1'"),
    ],
)
def test_the_solo_evaluation_script_refuses_bad_counts_like_the_card_game(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        load_training_script("evaluate_friday").parse_args(["--agents", "random", *argv])
    assert exited.value.code == 2 and message in capsys.readouterr().err


def test_a_stochastic_agent_object_gives_the_same_figures_for_the_same_seed() -> None:
    """An agent object is re-seeded from the chunk by its ``reset(seed)`` (every agent with a generator has one), so
    the same evaluation twice gives the same figures, whatever the object played before: equal seeds, equal
    results, as for specs."""
    from friday13_env import agents

    player = agents.make("random", seed=1)
    matchups = [Matchup.versus(player, "majority")]
    first = evaluate(matchups, 16, 4, seed=0).to_dict()
    second = evaluate(matchups, 16, 4, seed=0).to_dict()
    for data in (first, second):
        del data["elapsed_s"]
    assert first == second


@pytest.mark.parametrize("spec", ["random", "search:budget=400", "endgame:budget=400", "ppo-v4:greedy=false"])
def test_reset_reseeds_an_agent_as_building_it_anew_would(spec: str) -> None:
    """``reset(seed)`` on an agent that has played makes the moves of a fresh agent built with that seed."""
    import numpy as np

    from friday13_env import agents
    from friday13_env.friday13.aec import raw_env

    env = raw_env(num_players=4)
    env.reset(seed=3)
    observation = env.observe(env.agent_selection)
    used = agents.make(spec, seed=11)
    for _ in range(3):
        used.act(observation)
    used.reset(5)  # type: ignore[attr-defined]
    fresh = agents.make(spec, seed=5)
    assert [used.act(observation) for _ in range(4)] == [fresh.act(observation) for _ in range(4)]
    assert np.asarray(observation["action_mask"]).sum() > 1  # a position with a choice


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (["--json", "out/a.json", "--markdown", "out/a.json/b.md"], "--markdown is inside"),
        (["--json", "out2", "--replays", "out2/replays"], "--replays is inside"),
    ],
)
def test_outputs_inside_one_another_are_refused_before_any_game(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    outputs: list[str],
    message: str,
) -> None:
    """An output file whose path another output (or the replays folder) needs as a folder: refused before any game
    and any folder is made, not a failed write at the end of the run."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tournament, "evaluate", lambda *a, **k: pytest.fail("a game was played"))
    with pytest.raises(SystemExit) as exited:
        evaluate_main(["--agents", "random", "cautious", "--games", "4", "--no-progress", *outputs])
    assert exited.value.code == 2 and message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_an_evaluated_policy_or_a_pipe_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The checkpoint under evaluation as ``--json``, or a named pipe (which a write would replace by a file)."""
    import shutil

    from friday13_env import agents

    policy = tmp_path / "policy.npz"
    shutil.copy(agents.REGISTRY.policy_path("ppo-v1"), policy)
    with pytest.raises(SystemExit):
        evaluate_main(["--focus", str(policy), "--vs", "random", "--games", "4", "--json", str(policy)])
    assert "is an agent evaluated here and an output it would overwrite" in capsys.readouterr().err
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    with pytest.raises(SystemExit):
        evaluate_main(["--agents", "random", "cautious", "--games", "4", "--json", str(pipe)])
    assert "not a regular file" in capsys.readouterr().err


def test_the_solo_evaluation_script_refuses_two_outputs_on_one_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    same = str(tmp_path / "same.out")
    with pytest.raises(SystemExit) as exited:
        load_training_script("evaluate_friday").parse_args(["--agents", "random", "--json", same, "--markdown", same])
    assert exited.value.code == 2 and "--json and --markdown both write" in capsys.readouterr().err


if __name__ == "__main__":  # how tests/friday13/golden_evaluation.json was made (before the lazy rewrite)
    json.dump({"card": friday13_figures(), "solo": solo_figures()}, sys.stdout, indent=1)


DYING_AGENT = '''
import multiprocessing, os, signal

class Agent:
    """Plays its first legal card; in a worker process it dies as the system kills one that runs out of memory."""
    name = "dying"

    def act(self, observation):
        if multiprocessing.parent_process() is not None:
            os.kill(os.getpid(), signal.SIGKILL)
        return int(observation["action_mask"].nonzero()[0][0])
'''


def test_a_worker_that_dies_stops_the_command_with_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool used to wait for the dead worker's games without end."""
    (tmp_path / "dying_agent.py").write_text(DYING_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    output = tmp_path / "result.json"

    def waited_too_long(signum: int, frame: object) -> None:
        raise TimeoutError("the evaluation still waits for a dead worker's games")

    previous = signal.signal(signal.SIGALRM, waited_too_long)
    signal.alarm(120)
    try:
        with pytest.raises(SystemExit, match=r"^friday13 evaluate: stopped: a worker process ended before finishing"):
            evaluate_main(
                ["--agents", "dying_agent:Agent", "random", "random", "random", "--games", "64", "--workers", "2",
                 "--no-progress", "--json", str(output)]
            )  # fmt: skip
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert not output.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["benchmark", "--agent", "dying_agent:Agent", "--suite", "card-4p", "--workers", "2", "--no-progress"],
        ["ratings", "--agents", "dying_agent:Agent", "random", "cautious", "--tables", "64", "--workers", "2"],
    ],
    ids=["benchmark", "ratings"],
)
def test_the_benchmark_and_the_ratings_stop_on_a_dead_worker_with_one_line(
    argv: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("openskill", reason="the ratings need the benchmark extra")
    from friday13_env.cli import main

    (tmp_path / "dying_agent.py").write_text(DYING_AGENT)
    monkeypatch.syspath_prepend(str(tmp_path))
    output = tmp_path / "result.json"
    with pytest.raises(SystemExit, match=rf"^friday13 {argv[0]}: stopped: a worker process ended before finishing"):
        main([*argv, "--out", str(output)])
    assert not output.exists()
