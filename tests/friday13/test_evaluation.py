"""The evaluation tournament: statistics, duplicate dealing, reproducibility, files and the CLI."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.core.stats import mean_interval, t_quantile
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.agents import RandomAgent, legal_actions
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.encoding import observation_layout
from friday13_env.friday13.engine import Rules, deal
from friday13_env.friday13.evaluation import (
    AgentSpec,
    Matchup,
    evaluate,
    evaluate_agent,
    focus_matchups,
    matrix_matchups,
    parse_spec,
)
from friday13_env.friday13.evaluation.duplicate import deal_seed, play_deal, seatings
from friday13_env.friday13.evaluation.report import (
    format_markdown,
    format_text,
    plot_win_rates,
    write_json,
    write_markdown,
)
from friday13_env.friday13.evaluation.stats import average_ranks, win_shares

REPO = Path(__file__).resolve().parents[2]
CLI = REPO / "training" / "evaluate.py"
needs_baselines = pytest.mark.skipif(
    not {"cautious", "majority"} <= set(agents.names()), reason="the cautious and majority agents are not registered"
)


class LowestAgent:
    """Always plays the lowest-numbered legal action: deterministic and clearly weaker than random."""

    name = "lowest"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(legal_actions(observation)[0])


class HighestAgent:
    """Always plays the highest-numbered legal action: deterministic."""

    name = "highest"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(legal_actions(observation)[-1])


class RecordingAgent(LowestAgent):
    """Remembers the hand it holds at each of its moves, with the round it was in."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.moves: list[tuple[int, tuple[int, ...]]] = []

    def act(self, observation: dict[str, np.ndarray]) -> int:
        views = observation_layout(get_deck("standard")).views(observation["observation"])
        self.moves.append((int(views["round"][0]), tuple(int(c) for c in views["hand"])))
        return super().act(observation)

    def dealt_hands(self) -> list[tuple[int, ...]]:
        """The hand at the agent's first move of each round: still the full dealt hand."""
        return [hand for i, (rnd, hand) in enumerate(self.moves) if i == 0 or self.moves[i - 1][0] != rnd]


# -- statistics on hand-made outcomes ----------------------------------------------------------


def test_shared_wins_are_split_between_the_tied_players() -> None:
    assert win_shares([10, 7, 7, 12]) == [0.0, 0.5, 0.5, 0.0]
    assert win_shares([5, 5, 5]) == [1 / 3, 1 / 3, 1 / 3]
    assert win_shares([9, 3, 4, 5, 6]) == [0.0, 1.0, 0.0, 0.0, 0.0]


def test_tied_players_get_the_average_of_their_ranks() -> None:
    assert average_ranks([10, 7, 7, 12]) == [3.0, 1.5, 1.5, 4.0]
    assert average_ranks([4, 4, 4, 4]) == [2.5, 2.5, 2.5, 2.5]
    assert average_ranks([8, 2, 8, 1, 8]) == [4.0, 2.0, 4.0, 1.0, 4.0]


def test_t_quantiles_match_closed_forms_and_tables() -> None:
    assert t_quantile(0.975, 1) == pytest.approx(math.tan(0.475 * math.pi), rel=1e-12)  # Cauchy
    assert t_quantile(0.975, 2) == pytest.approx(0.95 * math.sqrt(2 / (1 - 0.95**2)), rel=1e-12)
    assert round(t_quantile(0.975, 3), 3) == 3.182
    assert round(t_quantile(0.975, 9), 3) == 2.262
    assert round(t_quantile(0.975, 30), 3) == 2.042


def test_interval_is_t_times_standard_error_on_a_known_sample() -> None:
    estimate = mean_interval([0.0, 1.0, 1.0, 0.0])
    # s = sqrt(1/3), standard error s / sqrt(4), t(0.975, 3) = 3.1824463...
    assert estimate.mean == 0.5
    assert estimate.samples == 4
    assert estimate.half_width == pytest.approx(0.918693115518, rel=1e-9)
    assert (estimate.low, estimate.high) == pytest.approx((0.5 - 0.918693115518, 0.5 + 0.918693115518))


def test_one_sample_has_no_interval() -> None:
    estimate = mean_interval([0.25])
    assert estimate.mean == 0.25 and math.isnan(estimate.half_width)
    assert estimate.to_dict()["half_width"] is None


def test_intervals_are_clipped_to_the_values_a_metric_can_take() -> None:
    samples = [1.0, 1.0, 1.0, 0.5]
    free = mean_interval(samples)
    assert free.high > 1.0
    clipped = mean_interval(samples, (0.0, 1.0))
    assert clipped.half_width == free.half_width
    assert (clipped.low, clipped.high) == (free.low, 1.0)
    assert clipped.clipped and not mean_interval([0.5, 0.6, 0.4, 0.5], (0.0, 1.0)).clipped
    assert clipped.to_dict()["ci_high"] == 1.0 and clipped.to_dict()["ci_low"] == free.low
    assert str(clipped) == f"0.875 [{free.low:.3f}, 1.000]"
    with pytest.raises(ValueError, match="low <= high"):
        mean_interval(samples, (1.0, 0.0))


def test_reported_win_rates_never_leave_zero_to_one() -> None:
    # Nine one-round games of majority against random: it wins most, and its t interval passes 1.
    result = evaluate([Matchup.versus("majority", "random")], 9, 3, seed=1, num_rounds=1)
    win_rate = result.matchups[0].stats("majority").win_rate
    assert win_rate.mean + win_rate.half_width > 1.0
    assert win_rate.high == 1.0 and 0.0 <= win_rate.low <= win_rate.mean
    for matchup in result.to_dict()["matchups"]:
        for agent in matchup["agents"]:
            assert 0.0 <= agent["win_rate"]["ci_low"] <= agent["win_rate"]["ci_high"] <= 1.0
            assert 1.0 <= agent["rank"]["ci_low"] <= agent["rank"]["ci_high"] <= 3.0
            assert agent["points"]["ci_low"] >= 0.0
    row = next(line for line in format_text(result).splitlines() if line.startswith("majority vs random  majority"))
    assert f"{win_rate.mean:.3f} [{win_rate.low:.3f}, 1.000]" in row


# -- specs and matchups --------------------------------------------------------------------------


def test_spec_options_are_parsed_into_typed_values() -> None:
    spec = parse_spec("search:budget=200,greedy=true,c=1.5,mode=fast")
    assert spec == AgentSpec("search", (("budget", 200), ("greedy", True), ("c", 1.5), ("mode", "fast")))
    assert spec.label == "search:budget=200,greedy=true,c=1.5,mode=fast"
    assert parse_spec(" random ") == AgentSpec("random")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("random:=3", "bad option '=3'"),
        ("random:a b=3", "bad option 'a b=3'"),
        (":budget=3", "no agent name"),
        ("search:a=1,a=2", "option 'a' is given twice"),
        ("", "empty agent spec"),
    ],
)
def test_bad_spec_syntax_is_rejected(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_spec(text)


def test_unknown_agents_and_options_are_rejected_before_playing() -> None:
    with pytest.raises(ValueError, match=r"unknown Friday the 13th agent 'nosuch'; known agents: \["):
        evaluate([Matchup.versus("nosuch", "random")], 4)
    with pytest.raises(ValueError, match=r"agent 'random' has no option\(s\) \['depth'\]; its options: \[\]"):
        evaluate([Matchup.versus("random:depth=3", "random")], 4)
    with pytest.raises(ValueError, match="search option budget must be a positive int"):
        evaluate([Matchup.versus(AgentSpec("search", (("budget", "x"),)), "random")], 4)
    with pytest.raises(ValueError, match=r"player count must be one of \[3, 4, 5, 6\], got 7"):
        evaluate([Matchup.table("random")], 4, 7)
    with pytest.raises(ValueError, match="plays the 'standard' deck, but this table plays the 'german' deck"):
        evaluate([Matchup.versus("ensemble-v1", "random")], 4, deck="german")
    with pytest.raises(ValueError, match="cannot be sent to worker processes"):
        evaluate([Matchup.versus(LowestAgent(), "random")], 4, workers=2)


def test_entrants_are_specs_exactly_as_agents_make_takes_them() -> None:
    matchup = Matchup.versus("search:budget=300", "endgame:policy=ensemble-v1,budget=300")
    assert matchup.label == "search:budget=300 vs endgame:policy=ensemble-v1,budget=300"
    assert Matchup.table("ensemble-v1", "random").entrants == (AgentSpec("ensemble-v1"), AgentSpec("random"))
    result = evaluate([matchup], 3, 3, seed=0, num_rounds=1)
    assert result.matchups[0].games == 3
    with pytest.raises(ValueError, match="unknown Friday the 13th agent 'a'"):
        matrix_matchups(["a", "b"])
    with pytest.raises(ValueError, match=r"endgame option policy: 'x\.npz' is neither a zoo policy"):
        evaluate([Matchup.versus("endgame:policy=x.npz", "random")], 3, 3)
    with pytest.raises(ValueError, match="expected an agent spec string, an AgentSpec or an Agent, got None"):
        Matchup.table(None)  # type: ignore[arg-type]


def test_lineups_fill_the_table() -> None:
    a, b, c = AgentSpec("a"), AgentSpec("b"), AgentSpec("c")
    assert Matchup.versus(a, b).lineup(5) == (a, b, b, b, b)
    assert Matchup.table(a, b).lineup(4) == (a, b, a, b)
    with pytest.raises(ValueError, match="more agents than the 3 seats"):
        Matchup.table(a, b, c, a).lineup(3)
    assert [m.label for m in matrix_matchups([a, b, c])] == [
        "a vs b",
        "a vs c",
        "b vs a",
        "b vs c",
        "c vs a",
        "c vs b",
    ]
    with pytest.raises(ValueError, match="at least two different agents"):
        matrix_matchups(["random", "random"])


def test_rotations_skip_repeated_tables() -> None:
    assert seatings(["A", "B", "B", "B"]) == [(0, 1, 2, 3), (3, 0, 1, 2), (2, 3, 0, 1), (1, 2, 3, 0)]
    assert seatings(["A", "B", "A", "B"]) == [(0, 1, 2, 3), (3, 0, 1, 2)]
    assert seatings(["A", "A", "A"]) == [(0, 1, 2)]


def test_permutations_seat_every_order_once() -> None:
    """Every distinct table once: n! for n different agents, the rotations' tables for "A against copies of B"."""
    tables = {tuple("ABCD"[p] for p in seating) for seating in seatings(list("ABCD"), "permutations")}
    assert len(seatings(list("ABCD"), "permutations")) == len(tables) == 24
    versus = seatings(["A", "B", "B", "B"], "permutations")
    assert {tuple("ABBB"[p] for p in s) for s in versus} == {
        tuple("ABBB"[p] for p in s) for s in seatings(list("ABBB"))
    }
    assert len(versus) == 4 and len(seatings(list("ABAB"), "permutations")) == 6
    assert seatings(["A", "A", "A"], "permutations") == [(0, 1, 2)]
    with pytest.raises(ValueError, match=r"seatings must be one of \['permutations', 'rotations'\], got 'all'"):
        seatings(list("AB"), "all")


def test_a_mixed_tables_permuted_figures_do_not_depend_on_the_listed_order() -> None:
    """Rotations keep who sits after whom, so two orders of one mixed table can differ; permutations play the same
    tables in both orders, so every figure is the same (deterministic agents: the games are the same games)."""

    def figures(order: list[str], mode: str) -> dict[str, tuple[float, float]]:
        entrants = {"lowest": LowestAgent(), "highest": HighestAgent()}
        result = evaluate([Matchup.table(*(entrants.get(n, n) for n in order))], 48, 4, seed=5, seating_mode=mode)
        (matchup,) = result.matchups
        return {label: (matchup.stats(label).win_rate.mean, matchup.stats(label).points.mean) for label in order}

    first, second = ["lowest", "cautious", "majority", "highest"], ["lowest", "majority", "cautious", "highest"]
    assert figures(first, "permutations") == figures(second, "permutations")
    assert figures(first, "rotations") != figures(second, "rotations")


# -- duplicate dealing ---------------------------------------------------------------------------


def test_every_agent_gets_every_seat_of_the_same_deal() -> None:
    rules = Rules(num_players=4)
    recorders = [RecordingAgent(f"r{i}") for i in range(4)]
    seed = deal_seed(3, 4, 0)
    play_deal(raw_env(num_players=4), recorders, seatings(["r0", "r1", "r2", "r3"]), seed)
    rng = np.random.default_rng(seed)
    dealt = [deal(rules, round_index, rng) for round_index in range(rules.num_rounds)]
    for position, recorder in enumerate(recorders):
        hands = recorder.dealt_hands()
        assert len(hands) == 4 * rules.num_rounds  # 4 rotations x 4 rounds
        for shift in range(4):
            seat = (position + shift) % 4
            for round_index in range(rules.num_rounds):
                assert hands[shift * rules.num_rounds + round_index] == tuple(dealt[round_index][seat])


def test_deal_counts_are_reported_honestly() -> None:
    result = evaluate([Matchup.versus(LowestAgent(), "random"), Matchup.table("random")], 10, 4)
    versus, table = result.matchups
    assert (versus.deals, versus.games) == (3, 12)  # 4 rotations per deal, rounded up to whole deals
    assert (table.deals, table.games) == (10, 10)  # four copies of one agent: one distinct rotation


def test_win_shares_and_ranks_add_up_over_the_table() -> None:
    result = evaluate(focus_matchups(LowestAgent(), ["random"]), 40, [3, 5], seed=2)
    for matchup in result.matchups:
        n = matchup.num_players
        focus, copies = matchup.stats("lowest"), matchup.stats("random")
        assert copies.seats == n - 1
        assert focus.win_rate.mean + (n - 1) * copies.win_rate.mean == pytest.approx(1.0)
        assert focus.rank.mean + (n - 1) * copies.rank.mean == pytest.approx(n * (n + 1) / 2)


def test_the_statistics_tell_a_weaker_agent_apart() -> None:
    matchup = evaluate([Matchup.versus("random", LowestAgent())], 240, 6, seed=0).matchups[0]
    random_stats, lowest_stats = matchup.stats("random"), matchup.stats("lowest")
    assert random_stats.win_rate.low > 1 / 6
    assert random_stats.points.high < lowest_stats.points.low


def test_quick_evaluation_of_an_agent_object() -> None:
    rates = evaluate_agent(LowestAgent(), ["random"], num_games=40, num_players=4, seed=1)
    assert list(rates) == ["random"]
    assert rates["random"].samples == 10
    assert 0.0 <= rates["random"].mean <= 1.0
    assert rates == evaluate_agent(LowestAgent(), ["random"], num_games=40, num_players=4, seed=1)


# -- reproducibility -----------------------------------------------------------------------------


def test_same_seed_same_results_and_workers_do_not_matter() -> None:
    matchups = [Matchup.table("random")]
    one = evaluate(matchups, 12, [3, 4], seed=5, chunk_deals=2)
    assert one == evaluate(matchups, 12, [3, 4], seed=5, chunk_deals=2)
    assert one != evaluate(matchups, 12, [3, 4], seed=6, chunk_deals=2)
    assert one == evaluate(matchups, 12, [3, 4], seed=5, chunk_deals=2, workers=2)


@needs_baselines
def test_workers_do_not_matter_between_different_agents() -> None:
    matchups = focus_matchups("cautious", ["random", "majority"])
    assert evaluate(matchups, 16, 4, seed=1, chunk_deals=1) == evaluate(
        matchups, 16, 4, seed=1, chunk_deals=1, workers=2
    )


def test_agents_do_not_share_random_numbers_with_the_deals() -> None:
    deals = {deal_seed(0, 4, index) for index in range(100)}
    assert len(deals) == 100
    assert deal_seed(0, 4, 7) == deal_seed(0, 4, 7) != deal_seed(0, 5, 7)
    assert RandomAgent(seed=1).rng.integers(1 << 30) == RandomAgent(seed=1).rng.integers(1 << 30)


# -- outputs -------------------------------------------------------------------------------------


def test_json_and_markdown_files_hold_the_results(tmp_path: Path) -> None:
    result = evaluate(focus_matchups(LowestAgent(), ["random"]), 8, [3, 4], seed=0)
    write_json(result, tmp_path / "r.json")
    write_markdown(result, tmp_path / "r.md")
    data = json.loads((tmp_path / "r.json").read_text())
    assert [(m["num_players"], m["deals"], m["games"]) for m in data["matchups"]] == [(3, 3, 9), (4, 2, 8)]
    focus = data["matchups"][1]["agents"][0]
    assert focus["label"] == "lowest"
    assert focus["win_rate"]["mean"] == result.matchups[1].stats("lowest").win_rate.mean
    markdown = (tmp_path / "r.md").read_text()
    assert markdown == format_markdown(result)
    table_rows = [line for line in markdown.splitlines() if line.startswith("| lowest vs random |")]
    assert len(table_rows) == 4  # two agents at each of two table sizes
    assert "| focus | random |" in markdown
    assert "lowest vs random" in format_text(result)


def test_plot_is_written(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    result = evaluate([Matchup.table("random")], 4, [3, 4])
    plot_win_rates(result, tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# -- command line --------------------------------------------------------------------------------


def test_cli_runs_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "out"
    command = [sys.executable, str(CLI), "--agents", "random", "random", "--games", "8", "--no-progress"]
    command += ["--players", "3", "4", "--json", str(out / "r.json"), "--markdown", str(out / "r.md")]
    completed = subprocess.run(command, capture_output=True, text=True, check=True, cwd=tmp_path)
    assert "3 players (equal seat win rate 0.333)" in completed.stdout
    assert "16 games (16 deals)" in completed.stdout
    data = json.loads((out / "r.json").read_text())
    assert [m["games"] for m in data["matchups"]] == [8, 8]
    assert (out / "r.md").read_text().startswith("# Evaluation")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "nosuch"], "argument --agents: unknown Friday the 13th agent 'nosuch'; known agents: ["),
        (["--agents", "random:budget"], "options are written key=value"),
        (["--agents", "random", "--players", "7"], "argument --players: invalid choice: 7 (choose from 3, 4, 5, 6)"),
        (["--focus", "random"], "--focus needs --vs"),
        (["--agents", "random", "--matrix"], "at least two different agents"),
        (["--agents", "random", "--games", "0"], "argument --games: must be a positive integer, got '0'"),
    ],
)
def test_cli_reports_bad_arguments_clearly(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    module_spec = importlib.util.spec_from_file_location("evaluate_cli", CLI)
    assert module_spec is not None and module_spec.loader is not None
    cli = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(cli)
    with pytest.raises(SystemExit) as exit_info:
        cli.main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
