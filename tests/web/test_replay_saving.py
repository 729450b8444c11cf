"""``--replays DIR`` of ``friday13 evaluate`` and ``friday13 benchmark``: the games of the first deals of each
matchup or cell are saved as replay files that ``record.load`` accepts, whose replayed scores are the ones the
command measured; saving changes no result; the solo game's seed is ``np.random.default_rng``'s; bad option
values exit 2 before any game."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gymnasium.utils import seeding

from friday13_env import cli
from friday13_env.benchmark import command as benchmark_command
from friday13_env.benchmark import play, runner
from friday13_env.benchmark.suite import get_suite
from friday13_env.core.specs import AgentSpec
from friday13_env.friday import engine as solo_engine
from friday13_env.friday.agents import make as make_solo
from friday13_env.friday.env import FridayEnv, observation_dict
from friday13_env.friday13.evaluation import command as evaluate_command
from friday13_env.friday13.evaluation import tournament
from friday13_env.friday13.evaluation.duplicate import ReplaySaving
from friday13_env.friday13.evaluation.results import EvaluationResult
from friday13_env.friday13.evaluation.specs import Matchup
from friday13_env.friday13.evaluation.stats import win_shares
from friday13_env.web import record
from tests.benchmark.helpers import CARD_CELLS, SOLO_CELLS, small_suite


def run(argv: list[str]) -> tuple[int, str]:
    """``friday13 ARGV`` in this process: its exit code and what it printed."""
    output = io.StringIO()
    try:
        code = cli.main(argv, output_stream=output)
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, output.getvalue()


def card_final_scores(game: record.Record) -> list[int]:
    """A card game's final totals per seat, replayed by the engine from its record (which must be whole)."""
    assert isinstance(game, record.CardRecord)
    _, steps = record.card_positions(game)
    assert steps[-1].after.game_over and len(game.deals) == game.rounds
    return list(steps[-1].after.scores)


def solo_final_score(game: record.Record) -> int:
    assert isinstance(game, record.SoloRecord)
    state, action = record.solo_positions(game)[-1]
    assert action is None and state.done
    return solo_engine.final_score(state)


def figures(result: EvaluationResult) -> str:
    """Everything an evaluation measured (not its time), as text (an undefined interval's ``NaN`` equals itself)."""
    return json.dumps([matchup.to_dict() for matchup in result.matchups])


# -- friday13 evaluate ---------------------------------------------------------------------------------------


def test_evaluate_saves_every_game_of_the_first_deals_and_their_scores_are_the_results(tmp_path: Path) -> None:
    """At 3 and 4 players, ``--replay-deals`` covers every deal played, so the agents' mean points and win rates
    computed from the replayed files are the ones in ``--json``; the files are named by matchup, table size,
    deal and seat shift, and seat the agents by label as each rotation did."""
    replays, out = tmp_path / "replays", tmp_path / "result.json"
    argv = ["evaluate", "--focus", "random", "--vs", "cautious", "--players", "3", "4", "--games", "4"]
    code, printed = run([*argv, "--no-progress", "--json", str(out), "--replays", str(replays), "--replay-deals", "2"])
    assert code == 0
    assert f"saved the games of the first 2 deal(s) of each matchup in {replays}" in printed
    deals = {3: 2, 4: 1}  # 4 games: 2 deals of 3 rotations, 1 deal of 4
    expected = [(n, k, s) for n, count in deals.items() for k in range(count) for s in range(n)]
    names = {f"00-{n}p-random-cautious-deal{k}-shift{s}.json" for n, k, s in expected}
    assert {path.name for path in replays.iterdir()} == names
    result = json.loads(out.read_text())
    for matchup in result["matchups"]:
        n = matchup["num_players"]
        points: dict[str, list[float]] = {"random": [], "cautious": []}
        wins: dict[str, list[float]] = {"random": [], "cautious": []}
        for k in range(deals[n]):
            for s in range(n):
                game = record.load(replays / f"00-{n}p-random-cautious-deal{k}-shift{s}.json")
                assert isinstance(game, record.CardRecord)
                assert game.seats == ["cautious"] * s + ["random"] + ["cautious"] * (n - 1 - s)
                assert game.source == {"command": "friday13 evaluate", "deal": str(k), "shift": str(s), "seed": "0"}
                scores, shares = card_final_scores(game), win_shares(card_final_scores(game))
                for label in points:
                    seats = [seat for seat, name in enumerate(game.seats) if name == label]
                    points[label].append(float(np.mean([scores[seat] for seat in seats])))
                    wins[label].append(float(np.mean([shares[seat] for seat in seats])))
        for agent in matchup["agents"]:
            assert agent["points"]["mean"] == pytest.approx(np.mean(points[agent["label"]]))
            assert agent["win_rate"]["mean"] == pytest.approx(np.mean(wins[agent["label"]]))


def test_saving_replays_changes_no_result_and_stops_at_the_deals_asked(tmp_path: Path) -> None:
    """The same results with and without replays (one process and a spawn pool of two); only the first
    ``deals`` deals of each matchup are saved, whichever chunk plays them."""
    matchups = [Matchup.versus("majority", "random"), Matchup.versus("cautious", "majority")]
    options: dict[str, Any] = {"seed": 5, "chunk_deals": 1}
    plain = tournament.evaluate(matchups, 9, [3], **options)
    saving = ReplaySaving(tmp_path, deals=2, prefix="x-")
    for workers in (1, 2):
        saved = tournament.evaluate(matchups, 9, [3], workers=workers, replays=saving, **options)
        assert figures(saved) == figures(plain)
    names = sorted(path.name for path in tmp_path.iterdir())
    assert names == sorted(
        f"x-{m:02d}-3p-{agents}-deal{k}-shift{s}.json"
        for m, agents in enumerate(["majority-random", "cautious-majority"])
        for k in range(2)
        for s in range(3)
    )
    for path in tmp_path.iterdir():
        card_final_scores(record.load(path))


def test_evaluate_says_how_many_deals_it_saved_not_how_many_were_asked(tmp_path: Path) -> None:
    replays = tmp_path / "replays"
    argv = ["evaluate", "--agents", "random", "cautious", "majority", "--players", "3", "--games", "6", "--no-progress"]
    code, printed = run([*argv, "--replays", str(replays), "--replay-deals", "99999999999999999999"])
    assert code == 0
    assert f"saved the games of the first 2 deal(s) of each matchup in {replays}" in printed  # 6 games, 3 rotations
    assert len(list(replays.iterdir())) == 6


# -- friday13 benchmark --------------------------------------------------------------------------------------


def test_benchmark_card_replays_give_the_rows_of_the_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A small card suite: each saved deal's rotations, replayed, give the agent's win share and margin of that
    deal's row in the result file; the rows are those of a run without replays. The dev split's files are
    named apart."""
    suite = small_suite(CARD_CELLS, deals=3)
    monkeypatch.setattr(benchmark_command, "suites", lambda: {"tiny": suite})
    replays, out = tmp_path / "replays", tmp_path / "majority.json"
    argv = ["benchmark", "--agent", "majority", "--suite", "tiny", "--workers", "1", "--no-progress"]
    code, printed = run([*argv, "--out", str(out), "--replays", str(replays)])
    assert code == 0
    rotations = sum(cell.players for cell in CARD_CELLS)  # 2 deals, each at every rotation of its cell
    assert f"saved {2 * rotations} replay files in {replays}: every game of the first 2 deals of each cell" in printed
    result = json.loads(out.read_text())
    assert runner.reproduces(result, runner.run_benchmark("majority", suite, workers=1))
    names = set()
    for index, cell in enumerate(CARD_CELLS):
        n = cell.players
        for k in range(2):
            shares, margins = [], []
            for s in range(n):
                path = replays / f"{index:02d}-{n}p-majority-{cell.opponents[0]}-deal{k}-shift{s}.json"
                names.add(path.name)
                game = record.load(path)
                assert isinstance(game, record.CardRecord)
                assert game.source["command"] == "friday13 benchmark" and game.source["cell"] == cell.name
                assert (game.source["suite"], game.source["split"], game.source["deal"]) == (suite.id, "test", str(k))
                scores = card_final_scores(game)
                seat = game.seats.index("majority")
                shares.append(win_shares(scores)[seat])
                margins.append((sum(scores) - scores[seat]) / (n - 1) - scores[seat])
            assert result["rows"][index][k] == pytest.approx([np.mean(shares), np.mean(margins)])
    assert {path.name for path in replays.iterdir()} == names

    dev = ["--split", "dev", "--out", str(tmp_path / "dev.json"), "--replays", str(replays), "--replay-deals", "1"]
    assert run([*argv, *dev])[0] == 0
    added = {path.name for path in replays.iterdir()} - names
    assert added == {f"dev-{name}" for name in names if "-deal0-" in name}


def test_benchmark_friday_levels_saves_solo_games_that_replay_to_their_scores(tmp_path: Path) -> None:
    """``friday-levels`` with ``--replay-deals 1``: one game per level, named ``levelL-game0.json``, whose
    replay from its seed ends with the score of the result's row."""
    pytest.importorskip("scipy", reason="a suite with references needs the benchmark extra")
    replays, out = tmp_path / "replays", tmp_path / "random.json"
    argv = ["benchmark", "--agent", "random", "--suite", "friday-levels", "--workers", "1", "--no-progress"]
    code, printed = run([*argv, "--out", str(out), "--replays", str(replays), "--replay-deals", "1"])
    assert code == 0
    assert f"saved 4 replay files in {replays}: every game of the first 1 game of each level" in printed
    result = json.loads(out.read_text())
    names = [f"random-level{level}-game0.json" for level in range(1, 5)]  # the agent's: two agents' games apart
    assert sorted(path.name for path in replays.iterdir()) == names
    for level in range(1, 5):
        game = record.load(replays / f"random-level{level}-game0.json")
        assert isinstance(game, record.SoloRecord)
        assert (game.level, game.player) == (level, "random")
        assert game.seed == play.solo_game_seed(get_suite("friday-levels").split("test").seed, level, 0)
        assert game.source == {
            "command": "friday13 benchmark",
            "suite": "friday-levels-v2",
            "split": "test",
            "cell": f"level-{level}",
            "game": "0",
        }
        assert solo_final_score(game) == result["rows"][level - 1][0][1]


def test_a_solo_unit_gives_the_same_rows_with_replays_and_saves_dev_games_apart(tmp_path: Path) -> None:
    """``play_unit`` of a solo unit: the same rows with replays; the dev split's files carry its prefix."""
    suite = small_suite(SOLO_CELLS, deals=3)
    unit = next(play.units(suite, "dev", AgentSpec("heuristic")))
    assert (unit.cell.level, unit.count) == (1, 3)
    saving = ReplaySaving(tmp_path, deals=2, prefix="dev-", source=(("split", "dev"),))
    plain, saved = play.play_unit(unit), play.play_unit(dataclasses.replace(unit, replays=saving))
    np.testing.assert_array_equal(plain.rows, saved.rows)
    names = ["dev-heuristic-level1-game0.json", "dev-heuristic-level1-game1.json"]
    assert sorted(path.name for path in tmp_path.iterdir()) == names
    for game in range(2):
        assert solo_final_score(record.load(tmp_path / f"dev-heuristic-level1-game{game}.json")) == plain.rows[game][1]


# -- the solo game's seed ------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**63, 2**64 - 1])
def test_the_solo_environment_seeds_as_default_rng_does(seed: int, tmp_path: Path) -> None:
    """``FridayEnv.reset(seed=s)`` builds the generator ``np.random.default_rng(s)`` builds: a game recorded with
    its seed and moves, saved and loaded, replays to the environment's final ``info["score"]``."""
    assert seeding.np_random(seed)[0].bit_generator.state == np.random.default_rng(seed).bit_generator.state
    env = FridayEnv(level=2, illegal_action="raise")
    observation, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    solo_engine.new_game(2, rng)  # what reset draws
    assert env.np_random.bit_generator.state == rng.bit_generator.state
    agent = make_solo("random", seed=seed % 1000)
    game = record.SoloRecord(2, seed, "random")
    done = False
    while not done:
        action = agent.act(observation_dict(observation, info))
        game.move(action)
        observation, _, done, _, info = env.step(action)
    loaded = record.load(record.save(game, tmp_path / "game.json"))
    assert solo_final_score(loaded) == info["score"]


# -- bad options ---------------------------------------------------------------------------------------------


@pytest.fixture
def no_games(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test if a game is played: the options are checked first."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a game was played before the options were checked")

    monkeypatch.setattr(evaluate_command, "evaluate", refuse)
    monkeypatch.setattr(runner, "play_unit", refuse)


COMMANDS = (["evaluate", "--agents", "random", "cautious"], ["benchmark", "--agent", "random", "--suite", "card-4p"])


@pytest.mark.usefixtures("no_games")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda argv: argv[0])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--replays", "{tmp}/r", "--replay-deals", "0"],
            "argument --replay-deals: must be a positive integer, got '0'",
        ),
        (["--replays", "{tmp}/r", "--replay-deals", "-1"], "argument --replay-deals: must be a positive integer"),
        (["--replays", "{tmp}/r", "--replay-deals", "two"], "argument --replay-deals: must be a positive integer"),
        (["--replay-deals", "3"], "--replay-deals goes with --replays DIR"),
        (["--replays", "{tmp}/file"], "argument --replays: {tmp}/file is a file, not a folder"),
        (["--replays", "{tmp}/file/sub"], "argument --replays: {tmp}/file is a file, not a folder"),
        (["--replays", "{tmp}/out.json", "--out", "{tmp}/out.json"], "--replays both write {tmp}/out.json"),
    ],
)
def test_bad_replay_options_exit_2_before_any_game(
    command: list[str], options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "file").write_text("")
    if "--out" in options and command[0] == "evaluate":
        options = [option.replace("--out", "--json") for option in options]
    if "--out" not in options and "--json" not in options and command[0] == "benchmark":
        options = [*options, "--out", str(tmp_path / "out.json")]
    code, _ = run([*command, "--no-progress", *(option.format(tmp=tmp_path) for option in options)])
    assert code == 2
    assert message.format(tmp=tmp_path) in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
