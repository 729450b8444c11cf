"""A review of the public API as a hostile user (release 0.18.0): inputs that the scalar pieces refused and their
batched or vector counterparts took, and objects accepted at one door and failing at the next.

- An opponent of the vector environment answering an action out of range raised an ``IndexError`` from a mask lookup.
- The batched agents skipped their scalar versions' checks: a row without a legal action played action 0, a 1-d mask
  broadcast, a mask of 0.5 counted as legal, NaN or negative observations were played on, and rows of observations and
  masks need not match. The scalar agents took any non-zero mask entry as legal.
- ``make_batched`` never checked its deck, and ``GameBatch`` refused a deck name that every environment takes.
- ``register`` took a factory without a seed (then ``make`` failed with a bare ``TypeError``), a non-callable, and a
  factory returning a non-agent (which ``make`` handed back).
- ``Friday13-v0`` refused ``AgentSpec`` opponents that ``agents.make`` and the vector environment take.
- ``WinModel.load`` read a file of any size, and deeply nested JSON raised ``RecursionError``.
- ``decode_observation`` and ``get_deck`` met ``None``, ``5``, bytes or a list with ``AttributeError``/``TypeError``.
- The vector environment's ``reset(seed)`` seeded neither ``np_random`` nor ``action_space``, and ``render()`` raised.
- The SB3 adapter's ``indices`` took -1 as the last table, ignored indices past the last, and refused numpy integers.
- ``Deck`` built from any values: unequal lengths, copies of 0 or below, values above 13, a name that is no text.
- ``SelfPlayTables.step`` before ``reset()`` played the constructor's deal.
- ``greedy=np.True_`` was refused; ``GameBatch.random_actions(0)`` and ``load_states([1])`` raised ``AttributeError``.
- ``omen_type_groups``, ``majority_preview`` and ``state_layout``, documented as taking ``deck``, raised
  ``AttributeError`` for a deck name, and a list hit their caches as a ``TypeError``.
- ``seed_reset`` took a Gymnasium ``Env`` only, so the vector environment's ``reset`` mirrored its two lines.
- ``Deck`` took any number of copies: past 127 cards of a type the batched engine's int8 counts wrapped silently.
- ``PolicyAgent`` built directly kept ``greedy=np.True_`` as a numpy bool (the registry's door made it a bool).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest

import friday13_env  # noqa: F401  (registers the Gymnasium ids)
from friday13_env import agents
from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.seeds import ACTION_SAMPLER_KEY, derived_seed, seed_reset
from friday13_env.core.spaces import LegalMultiDiscrete
from friday13_env.core.specs import AgentSpec, parse_spec
from friday13_env.friday.agents.value import MAX_MODEL_BYTES, WinModel
from friday13_env.friday13.agents.registry import REGISTRY
from friday13_env.friday13.batched.agents import BatchedCautious, act_seated, make_batched
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import GameBatch
from friday13_env.friday13.batched.selfplay import SelfPlayTables
from friday13_env.friday13.batched.vector_env import Friday13VectorEnv
from friday13_env.friday13.cards import (
    CARD_COUNT_DTYPE,
    DECKS,
    GERMAN_DECK,
    MAX_CARDS_OF_A_TYPE,
    STANDARD_DECK,
    Deck,
    as_deck,
    get_deck,
)
from friday13_env.friday13.encoding import decode_observation, observation_layout, omen_type_groups, state_layout
from friday13_env.friday13.features import MajorityPreview, input_features, majority_preview
from friday13_env.friday13.single_agent import Friday13Env
from tests.friday13.test_review_0_17_env import assert_render_warns_and_returns_none

ZOO = "ensemble-v1"
BATCHED_SPECS = ["random", "cautious", "majority", ZOO]
READERS = ["cautious", "majority", ZOO]
"""The batched agents that read the observation (``random`` reads only the masks, as its scalar version does)."""
NOT_DECKS = [None, 5, b"standard", ["standard"], "french"]


def vector_env(**options: Any) -> Friday13VectorEnv:
    environment = gym.make_vec("friday13_env/Friday13-v0", vectorization_mode="vector_entry_point", **options)
    assert isinstance(environment.unwrapped, Friday13VectorEnv)
    return environment.unwrapped


def positions(games: int = 6, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Observations and boolean masks of ``games`` players to move, a few cards into their games."""
    batch = GameBatch(games, [3, 4, 5, 6], seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(7):
        batch.step(batch.random_actions(rng))
    return encode_observations(batch), batch.legal_mask()


class AnswersBeyond:
    """A batched opponent whose answers are integers, one per game, out of range (``shift`` past its legal move)."""

    def __init__(self, shift: int) -> None:
        self.name = f"beyond{shift}"
        self.shift = shift

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(masks).argmax(axis=1) + self.shift


class AnswersIllegal:
    """A batched opponent that plays a card it does not hold (an action in range)."""

    name = "illegal"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(masks).argmin(axis=1)


class DeckByName(BatchedCautious):
    """A user's batched agent that names its deck, as scalar agents may (``deck = "standard"``)."""

    name = "deck-by-name"

    def __init__(self, deck: str) -> None:
        super().__init__(get_deck(deck))
        self.deck = deck  # type: ignore[assignment]


# -- 1. opponents answering out of range ------------------------------------------------------------
@pytest.mark.parametrize("shift", [100, -30])
def test_an_opponent_answering_an_action_out_of_range_is_a_value_error_naming_it_not_an_index_error(
    shift: int,
) -> None:
    environment = vector_env(num_envs=3, opponent_pool=[AnswersBeyond(shift)])
    with pytest.raises(ValueError, match=rf"batched agent 'beyond{shift}' answered actions .* in 0\.\.17"):
        environment.reset(seed=0)


def test_act_seated_refuses_an_out_of_range_answer_before_the_engine_sees_it() -> None:
    batch = GameBatch(4, 4, seed=1)
    games = np.arange(4)
    seated = np.zeros((4, 6), dtype=np.int64)
    with pytest.raises(ValueError, match=r"'beyond18'.*in 0\.\.17"):
        act_seated([AnswersBeyond(18)], seated, batch, games, np.random.default_rng(0))


def test_an_opponent_answering_an_illegal_action_in_range_is_named() -> None:
    environment = vector_env(num_envs=3, opponent_pool=[AnswersIllegal()])
    with pytest.raises(ValueError, match=r"opponent 'illegal' at player_\d of table \d: illegal action \d+"):
        environment.reset(seed=0)


# -- 2. the batched agents check their input as their scalar versions do ----------------------------
@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_a_batched_agent_refuses_a_row_without_a_legal_action_instead_of_playing_action_0(spec: str) -> None:
    observations, masks = positions()
    masks[2] = False
    with pytest.raises(ValueError, match=r"needs a legal action.*row 2"):
        make_batched(spec, STANDARD_DECK).act_batch(observations, masks, np.random.default_rng(0))


@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_a_batched_agent_refuses_a_1d_mask_instead_of_broadcasting_it(spec: str) -> None:
    observations, masks = positions()
    with pytest.raises(ValueError, match=r"masks of shape \(6, (18|A)\).*got \(18,\)"):
        make_batched(spec, STANDARD_DECK).act_batch(observations, masks[0], np.random.default_rng(0))


@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_a_batched_agent_refuses_masks_and_observations_of_different_row_counts(spec: str) -> None:
    observations, masks = positions()
    with pytest.raises(ValueError, match=r"masks of shape \(2, (18|A)\).*got \(6, 18\)"):
        make_batched(spec, STANDARD_DECK).act_batch(observations[:2], masks, np.random.default_rng(0))


@pytest.mark.parametrize("bad", [0.5, 2, -1, np.nan])
@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_a_batched_agent_refuses_mask_values_other_than_0_and_1_instead_of_casting_them(spec: str, bad: float) -> None:
    observations, masks = positions()
    values = masks.astype(np.float64)
    values[1, np.flatnonzero(masks[1])[0]] = bad
    with pytest.raises(ValueError, match=r"action mask holds values other than 0 and 1"):
        make_batched(spec, STANDARD_DECK).act_batch(observations, values, np.random.default_rng(0))


@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_a_batched_agent_plays_masks_of_0_and_1_in_any_numeric_dtype_as_the_boolean_mask(spec: str) -> None:
    observations, masks = positions()
    agent = make_batched(spec, STANDARD_DECK)
    expected = agent.act_batch(observations, masks, np.random.default_rng(5))
    for dtype in (np.int8, np.int64, np.float32):
        moves = agent.act_batch(observations, masks.astype(dtype), np.random.default_rng(5))
        np.testing.assert_array_equal(moves, expected)


@pytest.mark.parametrize(("bad", "message"), [(np.nan, "non-finite"), (np.inf, "non-finite"), (-2.0, "negative")])
@pytest.mark.parametrize("spec", READERS)
def test_a_batched_agent_refuses_observations_its_scalar_version_refuses(spec: str, bad: float, message: str) -> None:
    """Not "weights overflow float32" for a NaN, nor a move played on a NaN or negative count."""
    observations, masks = positions()
    observations[3, 5] = bad
    with pytest.raises(ValueError, match=message):
        make_batched(spec, STANDARD_DECK).act_batch(observations, masks, np.random.default_rng(0))
    scalar = agents.make(spec)
    with pytest.raises(ValueError, match=message):
        scalar.act({"observation": observations[3], "action_mask": masks[3].astype(np.int8)})


@pytest.mark.parametrize("spec", READERS)  # random reads no observation: test_batched_random_reads_no_observations_...
def test_a_batched_agent_refuses_observations_that_are_not_one_row_per_game(spec: str) -> None:
    observations, masks = positions()
    with pytest.raises(ValueError, match=r"observations of shape"):
        make_batched(spec, STANDARD_DECK).act_batch(observations[0], masks, np.random.default_rng(0))


# -- 3. the scalar agents take masks of 0 and 1 only ------------------------------------------------
@pytest.mark.parametrize(
    ("dtype", "bad"), [(np.float64, 0.5), (np.float32, np.nan), (np.int8, -1), (np.uint8, 2), (np.int64, 2)], ids=repr
)
@pytest.mark.parametrize("spec", ["random", "cautious", "majority", ZOO])
def test_a_scalar_agent_refuses_mask_values_other_than_0_and_1(spec: str, dtype: type, bad: float) -> None:
    observations, masks = positions()
    mask = masks[0].astype(dtype)
    mask[~masks[0]] = bad  # an illegal action marked with a non-zero value: it used to count as legal
    with pytest.raises(ValueError, match=r"action mask holds values other than 0 and 1"):
        agents.make(spec, seed=0).act({"observation": observations[0], "action_mask": mask})


@pytest.mark.parametrize("spec", ["random", "cautious", ZOO])
def test_a_scalar_agent_takes_masks_of_0_and_1_in_any_numeric_dtype(spec: str) -> None:
    observations, masks = positions()
    moves = {
        agents.make(spec, seed=0).act({"observation": observations[0], "action_mask": masks[0].astype(dtype)})
        for dtype in (bool, np.int8, np.float32)
    }
    assert len(moves) == 1 and masks[0][moves.pop()]


# -- 4. decks given by name or as a Deck ----------------------------------------------------------------
@pytest.mark.parametrize("spec", BATCHED_SPECS)
def test_make_batched_takes_the_deck_by_name_as_the_environments_do(spec: str) -> None:
    observations, masks = positions()
    by_name = make_batched(spec, "standard").act_batch(observations, masks, np.random.default_rng(1))
    by_deck = make_batched(spec, STANDARD_DECK).act_batch(observations, masks, np.random.default_rng(1))
    np.testing.assert_array_equal(by_name, by_deck)


@pytest.mark.parametrize("deck", NOT_DECKS, ids=repr)
def test_make_batched_refuses_what_is_no_deck_listing_the_deck_names(deck: object) -> None:
    with pytest.raises(ValueError, match=r"unknown deck .*; allowed values: \['german', 'standard'\]"):
        make_batched("random", deck)  # type: ignore[arg-type]


def test_a_game_batch_takes_the_deck_by_name() -> None:
    by_name, by_deck = GameBatch(3, deck="german", seed=4), GameBatch(3, deck=GERMAN_DECK, seed=4)
    assert by_name.deck is GERMAN_DECK
    np.testing.assert_array_equal(by_name.hands, by_deck.hands)


@pytest.mark.parametrize("deck", NOT_DECKS, ids=repr)
def test_a_game_batch_refuses_what_is_no_deck_listing_the_deck_names(deck: object) -> None:
    with pytest.raises(ValueError, match=r"unknown deck .*; allowed values: \['german', 'standard'\]"):
        GameBatch(2, deck=deck)  # type: ignore[arg-type]


def test_a_batched_agent_whose_deck_is_a_name_is_seated_by_it() -> None:
    agent = DeckByName("standard")
    assert make_batched(agent, STANDARD_DECK) is agent
    assert vector_env(num_envs=2, opponent_pool=[agent]).opponent_names == ["deck-by-name"]
    with pytest.raises(ValueError, match=r"plays the 'standard' deck, this table the 'german' deck"):
        make_batched(agent, GERMAN_DECK)
    wrong = DeckByName("standard")
    wrong.deck = "tarot"  # type: ignore[assignment]
    with pytest.raises(ValueError, match=r"batched agent 'deck-by-name': unknown deck 'tarot'"):
        make_batched(wrong, STANDARD_DECK)


def test_as_deck_is_the_one_reading_of_a_deck_by_name_or_as_a_deck() -> None:
    assert as_deck("standard") is STANDARD_DECK and as_deck(GERMAN_DECK) is GERMAN_DECK
    with pytest.raises(ValueError, match=r"the table: unknown deck 5; allowed values"):
        as_deck(5, "the table")  # type: ignore[arg-type]


# -- 5. the registry ----------------------------------------------------------------------------------
@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``REGISTRY`` with its registrations restored after the test."""
    monkeypatch.setattr(REGISTRY, "_factories", dict(REGISTRY._factories))
    monkeypatch.setattr(REGISTRY, "_batched", dict(REGISTRY._batched))
    return REGISTRY


class Seedless:
    """A user's agent class that takes no seed."""

    name = "seedless"

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_registered_factory_without_a_seed_is_made_as_a_factory_spec_makes_it(registry: Any) -> None:
    registry.register("zz_seedless", Seedless)
    assert isinstance(agents.make("zz_seedless", seed=3), Seedless)
    environment = Friday13Env(opponent_pool=["zz_seedless"])
    _, info = environment.reset(seed=0)
    assert set(info["opponents"].values()) == {"zz_seedless"}


def test_a_registered_factory_that_returns_no_agent_is_refused_by_make(registry: Any) -> None:
    registry.register("zz_object", lambda seed=None: object())
    with pytest.raises(ValueError, match=r"'zz_object' returned a object; an agent needs a `name` and an `act"):
        agents.make("zz_object")


def test_a_registered_factory_that_raises_is_a_value_error_naming_it(registry: Any) -> None:
    def broken(seed: int | None = None) -> Any:
        raise RuntimeError("no table today")

    registry.register("zz_broken", broken)
    with pytest.raises(ValueError, match=r"'zz_broken' raised RuntimeError: no table today"):
        agents.make("zz_broken")


@pytest.mark.parametrize(
    ("factory", "batched", "message"),
    [
        (
            5,
            None,
            r"agent 'zz_bad' needs a callable factory \(a class or function\) or an entry point 'package.module:name', "
            r"got 5",
        ),
        (Seedless, 5, r"agent 'zz_bad': batched must be None, an entry point 'package.module:name' or a callable"),
    ],
)
def test_register_refuses_what_cannot_be_called(registry: Any, factory: Any, batched: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        registry.register("zz_bad", factory, batched=batched)
    assert "zz_bad" not in registry.names()


# -- 6. AgentSpec opponents in Friday13-v0 -----------------------------------------------------------
def test_friday13_env_takes_agent_spec_opponents_as_agents_make_and_the_vector_env_do() -> None:
    spec = parse_spec("majority:open_min=2")
    for options in ({"opponent_pool": [spec]}, {"opponents": [spec, "random", AgentSpec("cautious")]}):
        environment = gym.make("friday13_env/Friday13-v0", num_players=4, **options)
        _, info = environment.reset(seed=0)
        assert "majority:open_min=2" in info["opponents"].values()
    assert vector_env(num_envs=2, opponent_pool=[spec]).opponent_names == ["majority:open_min=2"]


def test_friday13_env_checks_an_agent_spec_opponent_when_it_is_built() -> None:
    with pytest.raises(ValueError, match=r"has no option\(s\) \['budget'\]"):
        Friday13Env(opponent_pool=[AgentSpec("majority", (("budget", 5),))])
    with pytest.raises(ValueError, match=r"plays the 'standard' deck, but this table plays the 'german' deck"):
        Friday13Env(deck="german", opponent_pool=[AgentSpec(ZOO)])


# -- 7. WinModel.load reads a bounded, shallow file -------------------------------------------------
def test_win_model_load_reads_no_device_and_no_file_over_its_cap(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"win model /dev/zero is not a regular file"):
        WinModel.load(Path("/dev/zero"))
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (MAX_MODEL_BYTES + 1))
    with pytest.raises(ValueError, match=r"over the \d+-byte limit"):
        WinModel.load(big)


def test_win_model_load_refuses_deeply_nested_json_with_a_value_error(tmp_path: Path) -> None:
    nested = tmp_path / "nested.json"
    nested.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ValueError, match=r"not a JSON file: nested too deeply"):
        WinModel.load(nested)


# -- 8. decks by name: anything else is a ValueError ------------------------------------------------
@pytest.mark.parametrize("deck", NOT_DECKS, ids=repr)
def test_decode_observation_and_get_deck_refuse_what_is_no_deck_name_with_a_value_error(deck: object) -> None:
    observation = positions()[0][0]
    with pytest.raises(ValueError, match=r"unknown deck .*; allowed values: \['german', 'standard'\]"):
        decode_observation(observation, deck)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"unknown deck .*; allowed values: \['german', 'standard'\]"):
        get_deck(deck)  # type: ignore[arg-type]


# -- 9. and 10. the vector environment's seeding and render ------------------------------------------
def test_the_vector_env_reset_seeds_np_random_and_the_action_space_as_the_scalar_env_does() -> None:
    first, second = vector_env(num_envs=3), vector_env(num_envs=3)
    first.reset(seed=3)
    second.reset(seed=3)
    assert first.np_random_seed == second.np_random_seed == 3
    samples = [first.action_space.sample() for _ in range(5)]
    assert all(np.array_equal(a, second.action_space.sample()) for a in samples)
    reference = LegalMultiDiscrete(np.full(3, 18))
    reference.seed(derived_seed(3, ACTION_SAMPLER_KEY))
    first.reset(seed=3)
    reference.legal_mask = first.action_masks()
    assert np.array_equal(first.action_space.sample(), reference.sample())
    scalar = gym.make("friday13_env/Friday13-v0")
    scalar.reset(seed=3)
    assert scalar.unwrapped.np_random_seed == 3


def test_the_vector_env_render_without_a_render_mode_warns_and_returns_none(caplog: pytest.LogCaptureFixture) -> None:
    assert_render_warns_and_returns_none(vector_env(num_envs=2), caplog)


# -- 11. the SB3 adapter's indices --------------------------------------------------------------------
@pytest.fixture
def sb3_env() -> Any:
    pytest.importorskip("stable_baselines3", reason="the train extra is not installed")
    from friday13_env.friday13.batched.sb3 import to_sb3

    environment = to_sb3(vector_env(num_envs=3, autoreset_mode="SameStep"))
    environment.reset()
    return environment


@pytest.mark.parametrize(
    ("indices", "expected"),
    [(None, [0, 1, 2]), (np.int64(1), [1]), (2, [2]), ([np.int32(0), 2], [0, 2]), (np.array([1, 0]), [1, 0])],
    ids=repr,
)
def test_the_sb3_adapter_takes_python_and_numpy_integer_indices(sb3_env: Any, indices: Any, expected: list) -> None:
    masks = sb3_env.env.action_masks()
    answer = sb3_env.env_method("action_masks", indices=indices)
    assert len(answer) == len(expected)
    assert all(np.array_equal(got, masks[table]) for got, table in zip(answer, expected, strict=True))
    assert len(sb3_env.get_attr("deck", indices=indices)) == len(expected)
    assert sb3_env.env_is_wrapped(gym.Wrapper, indices=indices) == [False] * len(expected)


@pytest.mark.parametrize(
    ("indices", "message"),
    [
        ([7, 8], r"table index 7 is outside 0\.\.2"),
        ([-1], r"table index -1 is outside 0\.\.2"),
        ([5], r"table index 5 is outside 0\.\.2"),
        (3, r"table index 3 is outside 0\.\.2"),
        (True, r"indices must be table indices \(ints in 0\.\.2\) or an iterable of them, got True"),
        ([0.0], r"got 0\.0"),
        ("0", r"got '0'"),
    ],
    ids=repr,
)
def test_the_sb3_adapter_refuses_indices_outside_its_tables(sb3_env: Any, indices: Any, message: str) -> None:
    for call in (
        lambda: sb3_env.env_method("action_masks", indices=indices),
        lambda: sb3_env.get_attr("deck", indices=indices),
        lambda: sb3_env.env_is_wrapped(gym.Wrapper, indices=indices),
    ):
        with pytest.raises(ValueError, match=message):
            call()


# -- 12. Deck validates its fields --------------------------------------------------------------------
VALUES = r"deck 'mine': omen_values must be a non-empty tuple of increasing ints in 0\.\.13"
COPIES = r"deck 'mine': omen_copies must be a tuple of ints >= 1, one per omen value \(3\)"


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"omen_copies": (3, 3)}, rf"{COPIES}, got \(3, 3\)"),
        ({"omen_copies": (3, 3, 3, 3)}, rf"{COPIES}, got \(3, 3, 3, 3\)"),
        ({"omen_copies": (3, 0, 3)}, rf"{COPIES}, got \(3, 0, 3\)"),
        ({"omen_copies": (-3, 3, 3)}, rf"{COPIES}, got \(-3, 3, 3\)"),
        ({"omen_copies": [3, 3, 3]}, rf"{COPIES}, got \[3, 3, 3\]"),
        ({"omen_values": (1, 2, 20)}, rf"{VALUES}, got \(1, 2, 20\)"),
        ({"omen_values": (-1, 2, 4)}, rf"{VALUES}, got \(-1, 2, 4\)"),
        ({"omen_values": (4, 2, 1)}, VALUES),
        ({"omen_values": (1, 1, 4)}, VALUES),
        ({"omen_values": (1, 2.5, 4)}, VALUES),
        ({"omen_values": (True, 2, 4)}, VALUES),
        ({"omen_values": [1, 2, 4]}, VALUES),
        ({"omen_values": (), "omen_copies": ()}, VALUES),
        ({"name": 5}, r"a deck's name must be a non-empty str, got 5"),
        ({"name": ""}, r"a deck's name must be a non-empty str"),
        ({"friday_value": 14}, r"deck 'mine': friday_value must be an int in 0\.\.13, got 14"),
        ({"friday_count": -1}, r"deck 'mine': friday_count must be an int >= 0, got -1"),
        ({"friday_count": 2.0}, r"deck 'mine': friday_count must be an int >= 0, got 2\.0"),
    ],
)
def test_a_deck_refuses_fields_that_break_the_rules(fields: dict[str, Any], message: str) -> None:
    arguments: dict[str, Any] = {"name": "mine", "omen_values": (1, 2, 4), "omen_copies": (3, 3, 3), **fields}
    with pytest.raises(ValueError, match=message):
        Deck(**arguments)


def test_the_packages_decks_and_a_valid_deck_of_ones_own_still_build() -> None:
    assert {name: Deck(deck.name, deck.omen_values, deck.omen_copies) for name, deck in DECKS.items()} == DECKS
    mine = Deck("mine", (0, 13), (1, 2), friday_count=0, friday_value=0)
    assert (mine.size, mine.num_actions) == (9, 9)


# -- 13. SelfPlayTables.step before reset ---------------------------------------------------------------
def test_self_play_tables_refuse_a_step_before_reset() -> None:
    tables = SelfPlayTables(3, seed=0)
    with pytest.raises(RuntimeError, match=r"step\(\) before reset\(\): call reset\(\) first"):
        tables.step(tables.batch.legal_mask().argmax(axis=1))
    turn = tables.reset()
    assert tables.step(turn.masks.argmax(axis=1)).rewards.shape == (3, 6)


# -- 14. numpy booleans for bool options; GameBatch's rng and states -----------------------------------
@pytest.mark.parametrize("greedy", [np.True_, np.False_])
def test_greedy_takes_a_numpy_bool_as_numpy_ints_are_taken_elsewhere(greedy: np.bool_) -> None:
    agent = agents.make(ZOO, greedy=greedy)
    assert agent.greedy is bool(greedy)  # type: ignore[attr-defined]
    assert make_batched(agent, STANDARD_DECK).greedy is bool(greedy)  # type: ignore[attr-defined]


@pytest.mark.parametrize("greedy", [np.int64(1), 1, "yes"], ids=repr)
def test_greedy_still_refuses_what_is_not_a_bool(greedy: object) -> None:
    with pytest.raises(ValueError, match=r"greedy must be True or False"):
        agents.make(ZOO, greedy=greedy)


@pytest.mark.parametrize("rng", [0, np.random.RandomState(0), None], ids=["0", "RandomState", "None"])
def test_game_batch_random_actions_refuses_what_is_not_a_generator(rng: object) -> None:
    batch = GameBatch(2, seed=0)
    with pytest.raises(ValueError, match=r"rng must be a numpy\.random\.Generator \(np\.random\.default_rng\(seed\)\)"):
        batch.random_actions(rng)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("states", "message"), [([1], r"states\[0\] is of type int, not a GameState"), ({}, r"a list")]
)
def test_game_batch_load_states_refuses_what_are_not_game_states(states: Any, message: str) -> None:
    batch = GameBatch(2, seed=0)
    hands = batch.hands.copy()
    with pytest.raises(ValueError, match=message):
        batch.load_states(states)
    np.testing.assert_array_equal(batch.hands, hands)


# -- 15. the documented deck readers of encoding and features take a deck name, as the environments do ----
def deck_readers() -> dict[str, Any]:
    """Every public function of ``encoding`` and ``features`` that takes a deck, as a function of the deck alone."""
    return {
        "observation_layout": observation_layout,
        "state_layout": state_layout,
        "omen_type_groups": omen_type_groups,
        "majority_preview": majority_preview,
        "MajorityPreview": MajorityPreview,
        "input_features": lambda deck: input_features(MajorityPreview.name, deck),
        "decode_observation": lambda deck: decode_observation(np.zeros(146, dtype=np.float32), deck),
    }


@pytest.mark.parametrize("reader", sorted(deck_readers()))
def test_omen_type_groups_majority_preview_and_state_layout_take_a_deck_name_not_only_a_deck(reader: str) -> None:
    """docs/friday13.md documents ``omen_type_groups(deck)``, ``majority_preview(deck)`` and ``state_layout(deck)``;
    given ``"standard"`` they raised ``AttributeError: 'str' object has no attribute 'num_kinds'``."""
    read = deck_readers()[reader]
    by_name, by_deck = read("standard"), read(STANDARD_DECK)
    if reader == "MajorityPreview":
        assert (by_name.deck, by_name.size) == (STANDARD_DECK, by_deck.size)
    elif reader == "decode_observation":
        assert by_name.keys() == by_deck.keys()
    else:
        assert by_name is by_deck  # one cached object per deck, however it was given


@pytest.mark.parametrize("deck", NOT_DECKS, ids=repr)
@pytest.mark.parametrize("reader", sorted(deck_readers()))
def test_the_deck_readers_refuse_what_is_no_deck_with_a_value_error_listing_the_names(
    reader: str, deck: object
) -> None:
    """Not an ``AttributeError`` from the deck's fields, nor a ``TypeError`` from hashing a list into a cache."""
    with pytest.raises(ValueError, match=r"unknown deck .*; allowed values: \['german', 'standard'\] \(or a Deck\)"):
        deck_readers()[reader](deck)


# -- 16. seed_reset seeds a vector environment too: Friday13VectorEnv.reset does not copy it -------------
def test_seed_reset_takes_a_vector_env_and_seeds_it_as_the_vector_env_reset_does() -> None:
    seeded, reset = vector_env(num_envs=3), vector_env(num_envs=3)
    seed_reset(seeded, 7)
    reset.reset(seed=7)
    assert seeded.np_random_seed == reset.np_random_seed == 7
    assert seeded.np_random.random() == gym.utils.seeding.np_random(7)[0].random()
    assert seeded.action_space.np_random.bit_generator.state == reset.action_space.np_random.bit_generator.state
    before = seeded.np_random.bit_generator.state
    seed_reset(seeded, None)  # None seeds nothing, as VectorEnv.reset(seed=None)
    assert seeded.np_random.bit_generator.state == before


# -- 17. a deck holds no more cards of a type than the batched engine's counts hold -----------------------
def test_a_deck_at_the_batched_engines_count_bound_builds_and_plays_a_batched_round() -> None:
    """Every card of a type ends in one pile here (zeros never capture), so a pile's count reaches the bound."""
    deck = Deck("full", (0,), (MAX_CARDS_OF_A_TYPE,), friday_count=0)
    batch = GameBatch(2, 4, deck=deck, num_rounds=1, seed=0, autoreset=False)
    assert batch.hands.dtype == batch.pile_cards.dtype == batch.captured.dtype == np.dtype(CARD_COUNT_DTYPE)
    rng = np.random.default_rng(0)
    while not batch.game_over.all():
        batch.step(batch.random_actions(rng))
    np.testing.assert_array_equal(batch.pile_cards[:, :, 0], MAX_CARDS_OF_A_TYPE)
    np.testing.assert_array_equal(batch.played[:, : deck.friday_kind], MAX_CARDS_OF_A_TYPE)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"omen_copies": (MAX_CARDS_OF_A_TYPE + 1,)}, r"omen_copies sum to 128 cards per omen type"),
        ({"omen_values": (1, 2), "omen_copies": (64, 64)}, r"omen_copies sum to 128 cards per omen type"),
        ({"friday_count": MAX_CARDS_OF_A_TYPE + 1}, r"friday_count is 128 cards"),
    ],
)
def test_a_deck_with_more_cards_of_a_type_than_the_batched_engine_counts_is_refused(
    fields: dict[str, Any], message: str
) -> None:
    """Counts are int8 in the batched engine: a 128th card of a type wrapped to -128 silently."""
    arguments: dict[str, Any] = {"name": "mine", "omen_values": (1,), "omen_copies": (3,), **fields}
    with pytest.raises(ValueError, match=rf"deck 'mine': {message}; at most 127 .*int8"):
        Deck(**arguments)


# -- 18. PolicyAgent built directly reads greedy as the registry does ------------------------------------
@pytest.mark.parametrize("greedy", [np.True_, np.False_])
def test_a_policy_agent_built_directly_stores_a_numpy_bool_greedy_as_a_bool(greedy: np.bool_) -> None:
    policy = agents.make(ZOO).policy  # type: ignore[attr-defined]
    agent = PolicyAgent(policy, "direct", greedy=greedy)  # type: ignore[arg-type]
    assert agent.greedy is bool(greedy)


@pytest.mark.parametrize("greedy", [np.int64(1), 1, "yes", None], ids=repr)
def test_a_policy_agent_built_directly_refuses_a_greedy_that_is_no_bool(greedy: object) -> None:
    policy = agents.make(ZOO).policy  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match=r"greedy must be True or False"):
        PolicyAgent(policy, "direct", greedy=greedy)  # type: ignore[arg-type]


# -- 19. regressions of the changes above, found by their review ------------------------------------------------
class SeededByOptions:
    """A user's agent class taking its seed among ``**options``, as ``factory(seed=..., **options)`` is documented."""

    name = "seeded-by-options"

    def __init__(self, **options: Any) -> None:
        self.seed = options.get("seed")

    def act(self, observation: dict[str, np.ndarray]) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_a_registered_factory_taking_keyword_arguments_gets_its_seed(registry: Any) -> None:
    """``make`` passed ``seed=`` only to a factory with a parameter named ``seed``: ``**options`` got none."""
    registry.register("zz_kw", SeededByOptions)
    agent = agents.make("zz_kw", seed=7)
    assert isinstance(agent, SeededByOptions) and agent.seed == 7
    registry.register("zz_seedless", Seedless)  # and a factory that takes no seed at all is still called without one
    assert isinstance(agents.make("zz_seedless", seed=3), Seedless)


def test_a_factory_of_the_users_own_raising_a_value_error_is_named_in_the_error(
    registry: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``module:factory`` spec's or a registered factory's own ``ValueError`` said only "invalid literal for
    int()", not which agent raised it."""
    (tmp_path / "zz_bad_agents.py").write_text("def Factory(seed=None):\n    return int('x')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ValueError, match=r"agent factory 'zz_bad_agents:Factory' raised ValueError: invalid literal"):
        agents.make("zz_bad_agents:Factory")

    def refuses(seed: int | None = None) -> Any:
        return int("x")

    registry.register("zz_refuses", refuses)
    with pytest.raises(ValueError, match=r"agent factory 'zz_refuses' raised ValueError: invalid literal"):
        agents.make("zz_refuses")


@pytest.mark.parametrize("spec", ["search:budget=-1", "majority:open_min=0", "endgame:policy=nope"])
def test_the_packages_agents_refuse_an_option_value_with_their_own_error(spec: str) -> None:
    """Their errors name the agent and the option already: passed on as they are, not wrapped."""
    with pytest.raises(ValueError) as refusal:
        agents.make(spec)
    assert type(refusal.value) is ValueError
    assert str(refusal.value).startswith(spec.partition(":")[0] + " option ")


def test_a_deck_takes_numpy_integers_and_stores_plain_ints() -> None:
    """A deck built from an array's entries (``tuple(np.array(values))``) was refused."""
    deck = Deck(
        "np",
        tuple(np.array(STANDARD_DECK.omen_values)),
        tuple(np.array(STANDARD_DECK.omen_copies, dtype=np.int8)),
        friday_count=np.int64(STANDARD_DECK.friday_count),  # type: ignore[arg-type]
        friday_value=np.uint8(STANDARD_DECK.friday_value),  # type: ignore[arg-type]
    )
    plain = Deck("np", STANDARD_DECK.omen_values, STANDARD_DECK.omen_copies)
    assert deck == plain and hash(deck) == hash(plain)
    fields = (*deck.omen_values, *deck.omen_copies, deck.friday_count, deck.friday_value)
    assert all(type(value) is int for value in fields)
    with pytest.raises(ValueError, match=r"omen_copies sum to 200 cards per omen type"):  # int8 counts: no wrap
        Deck("np", (1, 2), tuple(np.array([100, 100], dtype=np.int8)))
    for boolean in (True, np.True_):
        with pytest.raises(ValueError, match=r"friday_count must be an int >= 0"):
            Deck("np", (1,), (3,), friday_count=boolean)  # type: ignore[arg-type]


def test_batched_random_reads_no_observations_but_checks_their_rows() -> None:
    """``random`` reads only the masks: ``act_batch(None, masks, rng)`` played, and must still; observations of any
    width play too, but not a number of rows other than the masks'."""
    observations, masks = positions()
    agent = make_batched("random", STANDARD_DECK)
    expected = agent.act_batch(observations, masks, np.random.default_rng(2))
    np.testing.assert_array_equal(agent.act_batch(None, masks, np.random.default_rng(2)), expected)  # type: ignore[arg-type]
    np.testing.assert_array_equal(agent.act_batch(np.zeros((6, 3)), masks, np.random.default_rng(2)), expected)
    for rows in (np.zeros((2, 146)), np.zeros(146), np.float32(0)):
        with pytest.raises(ValueError, match=r"random: "):
            agent.act_batch(rows, masks, np.random.default_rng(2))
