"""The baseline agents: legal play everywhere, faithful determinisation, and their documented choices.

Hand-built positions are engine states written with card names (see ``conftest``) and handed to
the agents as the observation of the player to move, exactly what the environment would produce.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from friday13_env import agents
from friday13_env.friday13.aec import raw_env
from friday13_env.friday13.agents import CautiousAgent, MajorityAgent, RandomAgent, SearchAgent
from friday13_env.friday13.agents.search import TIEBREAK, WorldSampler, play_out
from friday13_env.friday13.agents.table import Table
from friday13_env.friday13.cards import DECKS, STANDARD_DECK
from friday13_env.friday13.encoding import encode_observation, observation_layout
from friday13_env.friday13.engine import GameState, Rules, accounting_errors, action_mask, play
from friday13_env.friday13.scenario import from_hands
from tests.conftest import action, counts, pile
from tests.friday13.reference_rollout import rollout as reference_rollout

SMALL_BUDGET = 300
"""Enough for one world per move: tests check behaviour, not strength."""


def observe(state: GameState) -> dict[str, np.ndarray]:
    """The observation dict of the player to move, as ``raw_env.observe`` builds it."""
    return {
        "observation": encode_observation(state, state.current),
        "action_mask": np.array(action_mask(state), dtype=np.int8),
    }


def lineup(num_players: int, seed: int) -> list[agents.Agent]:
    """The four baselines round the table, starting with a different one for each seed."""
    names = ["search", "cautious", "majority", "random"]
    return [
        agents.make(name, seed=seed + seat, **({"budget": SMALL_BUDGET} if name == "search" else {}))
        for seat, name in enumerate(names[(seed + i) % 4] for i in range(num_players))
    ]


def play_legal_game(env: raw_env, table: list[agents.Agent]) -> int:
    """Play a reset game to its end with one agent per seat, checking every move is a legal ``int``; the moves made."""
    moves = 0
    for agent in env.agent_iter():
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        chosen = table[int(agent.split("_")[1])].act(observation)
        assert type(chosen) is int
        assert observation["action_mask"][chosen] == 1
        env.step(chosen)
        moves += 1
    return moves


@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_every_agent_plays_only_legal_actions(num_players: int, deck: str) -> None:
    env = raw_env(num_players=num_players, deck=deck)
    env.reset(seed=num_players)
    table = lineup(num_players, seed=num_players)
    moves = play_legal_game(env, table)
    assert moves == env.rules.num_rounds * env.rules.cards_per_round


def mid_round_observations(num_players: int, deck: str, seed: int) -> list[dict[str, np.ndarray]]:
    """Observations of the player to move at every 7th turn of a random round."""
    env = raw_env(num_players=num_players, deck=deck, num_rounds=1)
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    found = []
    for turn, _ in enumerate(env.agent_iter()):
        observation, _, terminated, truncated, _ = env.last()
        if terminated or truncated:
            env.step(None)
            continue
        if turn % 7 == 3:
            found.append(observation)
        legal = np.flatnonzero(observation["action_mask"])
        env.step(int(legal[rng.integers(legal.size)]))
    return found


def world_state(table: Table, hands: np.ndarray) -> GameState:
    """One sampled world as an engine state (validated by ``from_hands``), observer in seat 0 to move."""
    deck = table.deck
    played = [deck.kind_counts[k] - table.hand[k] - table.unseen[k] for k in range(deck.num_kinds)]
    seats = hands.tolist()
    return from_hands(
        Rules(num_players=table.num_players, deck=deck, num_rounds=table.rounds_left),
        seats if table.has_dummy else seats[:-1],
        current=0,
        piles=[[kind for kind, count in enumerate(pile) for _ in range(count)] for pile in table.pile_counts],
        captured=table.captured,
        played=played,
        scores=table.scores,
    )


@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", [3, 4, 6])
def test_sampled_worlds_are_consistent_with_the_observation(num_players: int, deck: str) -> None:
    rng = np.random.default_rng(0)
    layout = observation_layout(DECKS[deck])
    for observation in mid_round_observations(num_players, deck, seed=num_players):
        table = Table.read(observation)
        for hands in WorldSampler(table).sample(rng, 3):
            world = world_state(table, hands)
            assert accounting_errors(world) == []
            assert world.hands[0] == table.hand
            assert [sum(hand) for hand in world.hands] == table.hand_sizes
            np.testing.assert_array_equal(hands.sum(axis=0), np.add(table.hand, table.unseen))
            if num_players != 3:
                assert hands[-1].sum() == 0
            # The world seen from seat 0 is the observation itself, up to the round counter.
            mine = layout.views(encode_observation(world, 0))
            theirs = layout.views(observation["observation"])
            for block in ("hand", "pile_totals", "pile_cards", "captured", "unseen", "hand_sizes", "scores", "dummy"):
                np.testing.assert_array_equal(mine[block], theirs[block], err_msg=block)


def test_worlds_differ_between_samples() -> None:
    observation = mid_round_observations(4, "standard", seed=1)[0]
    hands = WorldSampler(Table.read(observation)).sample(np.random.default_rng(0), 5)
    assert len({hands[w, 1:].tobytes() for w in range(5)}) == 5


@pytest.mark.parametrize("deck", sorted(DECKS))
@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_batched_rollouts_match_the_card_by_card_reference(num_players: int, deck: str) -> None:
    """Every (world, move) pair ends the round with exactly the points of the engine-based rollout."""
    rng = np.random.default_rng(num_players)
    checked = 0
    for observation in mid_round_observations(num_players, deck, seed=10 + num_players):
        table = Table.read(observation)
        hands = WorldSampler(table).sample(rng, 4)
        points = play_out(table, hands[:, :num_players]).reshape(num_players, len(table.legal), 4)
        for w, world_hands in enumerate(hands):
            world = world_state(table, world_hands)
            for a, move in enumerate(table.legal):
                state = world.copy()
                play(state, move)
                reference_rollout(state)
                assert state.round_over
                assert points[:, a, w].tolist() == state.last_round_points
                checked += 1
    assert checked > 20


def test_search_is_deterministic_for_a_seed() -> None:
    observations = mid_round_observations(4, "standard", seed=2)[:4]
    first = SearchAgent(seed=7, budget=2_000)
    second = SearchAgent(seed=7, budget=2_000)
    for observation in observations:
        table = Table.read(observation)
        assert first.search(table) == second.search(table)


# -- hand-built positions -----------------------------------------------------------------------
D = STANDARD_DECK


def position(
    hands: list[list[str]],
    piles: list[list[str]] | None = None,
    captured: list[list[int]] | None = None,
    scores: list[int] | None = None,
) -> dict[str, np.ndarray]:
    """The observation of player_0 to move, 4 players, in the last round.

    Every card outside the hands counts as played, so the unseen cards are exactly the other
    hands: the search agent's worlds are then the real position, up to who holds what.
    """
    in_hands = [counts(D, *hand) for hand in hands]
    played = [total - sum(hand[k] for hand in in_hands) for k, total in enumerate(D.kind_counts)]
    state = from_hands(
        Rules(num_players=4),
        in_hands,
        round_index=3,
        current=0,
        piles=[pile(D, *cards) for cards in piles or [[], [], []]],
        captured=captured,
        played=played,
        scores=scores,
    )
    return observe(state)


FRIDAY_TRAP = position(
    # The Friday card captures two Friday cards on the cat pile and two ladders (player_1 leads
    # ladders) on the ladder pile; on the empty mirror pile it is safe, and so is everything after.
    hands=[["f13"], ["mirror 1"], ["mirror 1"], ["mirror 2"]],
    piles=[["f13", "f13", "cat 4"], [], ["ladder 5", "ladder 5"]],
    captured=[[0, 0, 0, 0], [0, 0, 3, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
)

MAJORITY_GRAB = position(
    # player_0 and player_2 hold 4 mirrors each: a tie, so both pay 4. The Friday card on the mirror
    # pile takes 2 more mirrors: player_0's 6 are discarded and it wins the game outright; played
    # anywhere else (safe) it leaves the tie and loses. No other card can change that.
    hands=[["f13"], ["ladder 1"], ["ladder 1"], ["ladder 2"]],
    piles=[[], ["mirror 7", "mirror 5"], []],
    captured=[[0, 4, 0, 0], [0, 0, 0, 0], [0, 4, 0, 0], [0, 0, 0, 0]],
    scores=[9, 10, 10, 10],
)


@pytest.mark.parametrize("name", ["cautious", "majority", "search"])
def test_every_baseline_avoids_an_obvious_capture(name: str) -> None:
    assert agents.make(name, seed=0).act(FRIDAY_TRAP) == action(D, "f13 mirror")


def test_search_values_the_obvious_moves_exactly() -> None:
    agent = SearchAgent(seed=0, budget=SMALL_BUDGET)
    # Last round: the win share, plus TIEBREAK times the points relative to the others' mean.
    # After the safe play everybody ends on 0 points: a four-way shared win. The cat pile costs
    # 2 Friday cards (its cat is discarded: nobody else holds cats), the ladder pile 2 ladders.
    assert agent.search(Table.read(FRIDAY_TRAP))[1] == pytest.approx(
        {action(D, "f13 cat"): -4 * TIEBREAK, action(D, "f13 mirror"): 0.25, action(D, "f13 ladder"): -2 * TIEBREAK}
    )
    # Taking the mirrors leaves player_2 alone with 4 points (4/3 above the others' mean).
    assert agent.search(Table.read(MAJORITY_GRAB)) == (
        action(D, "f13 mirror"),
        pytest.approx(
            {
                action(D, "f13 cat"): -8 / 3 * TIEBREAK,
                action(D, "f13 mirror"): 1 + 4 / 3 * TIEBREAK,
                action(D, "f13 ladder"): -8 / 3 * TIEBREAK,
            }
        ),
    )


def test_search_takes_an_obvious_win_that_cautious_misses() -> None:
    assert SearchAgent(seed=0, budget=SMALL_BUDGET).act(MAJORITY_GRAB) == action(D, "f13 mirror")
    assert CautiousAgent().act(MAJORITY_GRAB) == action(D, "f13 cat")


def test_cautious_dumps_its_highest_safe_card() -> None:
    # cat 7 captures (cat pile 10); mirror 5 and cat 1 are safe: the 5 goes first.
    observation = position(
        hands=[["cat 7", "cat 1", "mirror 5"], ["ladder 1"] * 3, ["ladder 2"] * 3, ["ladder 4"] * 2],
        piles=[["cat 5", "cat 5"], [], []],
    )
    assert CautiousAgent().act(observation) == action(D, "mirror 5")


def test_cautious_takes_the_pile_it_pays_least_for() -> None:
    # Both cards capture. The cat pile holds a Friday card (2 points) and 2 cats; the mirror pile 3
    # mirrors, but player_0 leads mirrors 6 to 0, so more mirrors are all but free.
    observation = position(
        hands=[["cat 5", "mirror 7"], ["ladder 1"], ["ladder 1"], ["ladder 2"]],
        piles=[["f13", "cat 2", "cat 7"], ["mirror 7", "mirror 4", "mirror 2"], []],
        captured=[[0, 6, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    )
    assert CautiousAgent().act(observation) == action(D, "mirror 7")


def test_majority_targets_the_type_its_hand_can_collect() -> None:
    # Nothing captured yet: the ladders hold the most high cards (ladder 5, 7, 7).
    observation = position(
        hands=[
            ["ladder 5", "ladder 7", "ladder 7", "cat 7", "cat 1", "mirror 1", "mirror 2", "mirror 4"],
            ["cat 1"] * 2 + ["f13"] * 6,
            ["cat 2"] * 3 + ["cat 4"] * 2 + ["f13"] * 2 + ["mirror 1"],
            ["mirror 5"] * 3 + ["mirror 7"] * 3 + ["cat 5"] * 2,
        ],
    )
    assert MajorityAgent().target(Table.read(observation)) == 2


def test_majority_keeps_the_type_it_leads() -> None:
    # Its hand favours ladders, but it already leads cats 3 to 1: cats stay the target.
    observation = position(
        hands=[
            ["ladder 5", "ladder 7", "ladder 7", "cat 1"],
            ["cat 2"] * 3 + ["mirror 2"],
            ["cat 4"] * 2 + ["mirror 4"] * 2,
            ["mirror 1"] * 3 + ["ladder 1"],
        ],
        captured=[[3, 0, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
    )
    assert MajorityAgent().target(Table.read(observation)) == 0


def test_majority_grabs_a_clean_target_pile_that_cautious_avoids() -> None:
    # Ladder pile: three ladders and no Friday card; the ladder 7 takes it and the lead in ladders.
    observation = position(
        hands=[["ladder 7", "ladder 5", "cat 1"], ["cat 2"] * 3, ["cat 4"] * 2 + ["mirror 1"], ["mirror 1"] * 2],
        piles=[[], [], ["ladder 2", "ladder 4", "ladder 5"]],
    )
    assert MajorityAgent().act(observation) == action(D, "ladder 7")
    assert CautiousAgent().act(observation) == action(D, "cat 1")


def test_majority_leaves_a_target_pile_with_a_friday_card() -> None:
    observation = position(
        hands=[["ladder 7", "ladder 5", "cat 1"], ["cat 2"] * 3, ["cat 4"] * 2 + ["mirror 1"], ["mirror 1"] * 2],
        piles=[[], [], ["ladder 2", "f13", "ladder 5"]],
    )
    assert MajorityAgent().act(observation) == action(D, "cat 1")


# -- registry and options -------------------------------------------------------------------------
BASELINES = ["cautious", "endgame", "majority", "netsearch", "random", "search"]


def test_make_builds_every_registered_and_zoo_agent_by_name() -> None:
    zoo = agents.REGISTRY.zoo()
    assert "ensemble-v1" in zoo
    assert agents.names() == sorted([*BASELINES, *zoo])
    for name in agents.names():
        agent = agents.make(name, seed=3)
        assert isinstance(agent, agents.Agent)
        assert agent.name == name
    assert agents.make("search", budget=500, objective="relative").budget == 500
    assert agents.make("search:budget=500,objective=relative").objective == "relative"


@pytest.mark.parametrize("name", agents.names())
def test_every_name_plays_a_full_legal_game_with_no_options(name: str) -> None:
    """What ``pip install`` promises: every listed name works as it is, at every seat of a real game."""
    env = raw_env(num_players=4, num_rounds=1)
    env.reset(seed=5)
    table = [agents.make(name, seed=seat) for seat in range(4)]
    moves = play_legal_game(env, table)
    assert env.game is not None and env.game.game_over
    assert moves == env.rules.cards_per_round


def test_unknown_agent_lists_the_known_names() -> None:
    known = re.escape(str(agents.names()))
    with pytest.raises(ValueError, match=rf"unknown Friday the 13th agent 'nosuch'; known agents: {known}"):
        agents.make("nosuch")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (None, r"an agent spec must be a string; expected an agent name, zoo name or checkpoint path.*got None"),
        ("", "empty agent spec; expected an agent name"),
        ("   ", "empty agent spec"),
        (7, "an agent spec must be a string.*got 7"),
        (["search"], "an agent spec must be a string"),
    ],
)
def test_a_missing_or_non_text_spec_is_a_clear_error(spec: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec)  # type: ignore[arg-type]


def test_a_huge_name_is_an_unknown_agent_not_an_os_error() -> None:
    with pytest.raises(ValueError, match=r"unknown Friday the 13th agent 'xxxxxxxx.*\(5000 characters\); known agents"):
        agents.make("x" * 5000)
    with pytest.raises(ValueError, match=r"no policy checkpoint at '.*\(5004 characters\)"):
        agents.make("x" * 5000 + ".npz")


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("search", {"bugdet": 10}, r"agent 'search' has no option\(s\) \['bugdet'\]; its options: \['budget'"),
        ("cautious", {"budget": 10}, r"agent 'cautious' has no option\(s\) \['budget'\]; its options: \[\]"),
        ("cautious:greedy=true", {}, r"agent 'cautious' has no option\(s\) \['greedy'\]; its options: \[\]"),
        ("search", {"budget": 0}, "search option budget must be a positive int"),
        ("search", {"budget": 2.5}, "search option budget must be a positive int"),
        ("search", {"budget": "8"}, r"search option budget must be a positive int.*got '8'"),
        ("search:budget=8.0", {}, r"search option budget must be a positive int.*got 8.0"),
        ("search", {"budget": True}, "search option budget must be a positive int"),
        ("search", {"budget": 4_558_849}, r"search option budget must be a positive int, at most 4,558,848 \("),
        ("search:budget=99999999999999999999", {}, r"search option budget must be a positive int, at most 4,558,848"),
        ("endgame", {"budget": 10**9}, r"endgame option budget must be a positive int, at most 4,558,848"),
        ("search", {"objective": "fun"}, r"search option objective must be one of \['rank', 'relative'\], got 'fun'"),
        ("search", {"objective": ["rank"]}, r"search option objective must be one of \['rank', 'relative'\]"),
        ("search", {"objective": 5}, r"search option objective must be one of \['rank', 'relative'\], got 5"),
        ("majority", {"open_min": 0}, "majority option open_min must be an int >= 1"),
        ("majority", {"keep_min": "2"}, r"majority option keep_min must be an int >= 1 .*got '2'"),
        ("majority", {"keep_min": [1]}, "majority option keep_min must be an int >= 1"),
        ("ensemble-v1", {"greedy": "no"}, r"greedy must be True or False, got 'no'"),
        ("ensemble-v1:greedy=1", {}, r"greedy must be True or False, got 1"),
        (
            "ensemble-v1",
            {"budget": 3},
            r"agent 'ensemble-v1' has no option\(s\) \['budget'\]; its options: \['greedy'\]",
        ),
    ],
)
def test_bad_options_raise_clearly(spec: str, options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        agents.make(spec, **options)


@pytest.mark.parametrize("seed", [-1, 2.5, "1", True])
@pytest.mark.parametrize("agent_class", [CautiousAgent, MajorityAgent, SearchAgent, RandomAgent])
def test_constructors_reject_a_bad_seed(agent_class: type, seed: object) -> None:
    with pytest.raises(ValueError, match=r"seed must be None or a non-negative int"):
        agent_class(seed=seed)


# -- observations that no table produced ----------------------------------------------------------
def broken(original: dict[str, np.ndarray], **changes: object) -> dict[str, object]:
    return {**original, **changes}


@pytest.mark.parametrize("name", ["cautious", "majority", "search"])
def test_a_malformed_observation_is_a_clear_value_error(name: str) -> None:
    agent = agents.make(name, seed=0, **({"budget": SMALL_BUDGET} if name == "search" else {}))
    vector, mask = FRIDAY_TRAP["observation"], FRIDAY_TRAP["action_mask"]
    nan = vector.copy()
    nan[3] = np.nan
    negative = vector.copy()
    negative[observation_layout(D).slices["hand"].start] = -1
    no_seats = vector.copy()
    no_seats[observation_layout(D).slices["seat_present"]] = 0
    cases = [
        (broken(FRIDAY_TRAP, observation=vector[:-1]), r"an observation of length \d+ matches no deck"),
        (broken(FRIDAY_TRAP, observation=np.append(vector, 0.0)), "matches no deck"),
        (broken(FRIDAY_TRAP, observation=nan), "non-finite"),
        (broken(FRIDAY_TRAP, observation=vector.astype(str)), "non-numeric|matches no deck"),
        (broken(FRIDAY_TRAP, observation=vector.reshape(1, -1)), r"1-d|shape"),
        (broken(FRIDAY_TRAP, action_mask=mask[:-1]), r"action mask of shape \(\d+,\)"),
        (broken(FRIDAY_TRAP, observation=negative), "negative"),
        (broken(FRIDAY_TRAP, observation=no_seats), r"seat_present.*0 seats"),
        ({"action_mask": mask}, "'observation'"),
        (vector, "observation dict"),
    ]
    for observation, message in cases:
        with pytest.raises(ValueError, match=message):
            agent.act(observation)  # type: ignore[arg-type]


def test_a_policy_refuses_a_negative_entry_like_every_other_agent() -> None:
    observation = mid_round_observations(4, "standard", seed=0)[0]
    vector = observation["observation"].copy()
    vector[0] = -1.0
    broken = {"observation": vector, "action_mask": observation["action_mask"]}
    for name in ("ensemble-v1", "cautious", "search"):
        with pytest.raises(ValueError, match="negative values"):
            agents.make(name, seed=0).act(broken)


def test_the_largest_search_budget_is_the_one_above_which_no_decision_plays_more_worlds() -> None:
    """4,096 worlds of the costliest position a registered deck can show (every action legal, every card in a hand):
    a larger budget would be the same agent under another name."""
    from friday13_env.friday13.agents.search import MAX_BUDGET, MAX_WORLDS
    from friday13_env.friday13.cards import DECKS

    assert MAX_BUDGET == MAX_WORLDS * max(deck.num_actions * deck.size for deck in DECKS.values()) == 4_558_848
    assert agents.make("search", budget=MAX_BUDGET).budget == MAX_BUDGET
