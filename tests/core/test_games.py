"""One conformance suite for every game, through the protocol each declares (``friday13_env.core.game.Game``).

What a game promises, tested the same way for each: its ids are registered, its environment exposes its
observation layout, every agent it names plays legal, seeded moves, every zoo policy has its model card and
loads, every render mode renders, its evaluation is seeded, its engine offers the rules functions, and
MaskablePPO trains on it. A third game gets all of this by being added to ``friday13_env.games``.
"""

from __future__ import annotations

import dataclasses
import re
import types

import gymnasium as gym
import numpy as np
import pytest

from friday13_env import games
from friday13_env.core.game import Game
from friday13_env.games import GAME_KEYS, all_games, game

GAMES = all_games()
STEPS = 40
"""Moves per seeded episode check: enough to pass through every phase's first decisions, cheap for search."""


def by_key(function: object) -> object:
    return pytest.mark.parametrize("declared", GAMES, ids=[declared.key for declared in GAMES])(function)


def test_every_game_is_declared_once_and_looked_up_by_key() -> None:
    assert [declared.key for declared in GAMES] == list(GAME_KEYS)
    assert len({declared.env_id for declared in GAMES}) == len(GAMES)
    with pytest.raises(ValueError, match=re.escape(f"unknown game 'chess'; allowed values: {list(GAME_KEYS)}")):
        game("chess")


@by_key
def test_the_environment_is_registered_and_exposes_its_layout(declared: Game) -> None:
    assert declared.env_id in gym.registry
    env = declared.make_env()
    layout = env.unwrapped.layout  # type: ignore[attr-defined]
    observation, _ = env.reset(seed=0)
    assert env.observation_space.shape == (layout.size,) == observation.shape
    views = layout.views(observation)
    assert list(views) == [block.name for block in layout.blocks]
    assert np.array_equal(np.concatenate([view.ravel() for view in views.values()]), observation)


def play(declared: Game, spec: str, seed: int) -> list[int]:
    """Up to ``STEPS`` moves of ``spec`` in the game's single-agent environment, each checked legal."""
    env = declared.make_env()
    agent = declared.agents.make(spec, seed=seed)
    observation, info = env.reset(seed=seed)
    moves = []
    for _ in range(STEPS):
        action = agent.act({"observation": observation, "action_mask": info["action_mask"]})
        assert info["action_mask"][action] == 1, (spec, action)
        moves.append(int(action))
        observation, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            observation, info = env.reset(seed=seed + len(moves))
    return moves


@by_key
def test_every_agent_plays_legal_moves_and_a_seed_repeats_them(declared: Game) -> None:
    names = declared.agents.names()
    assert set(declared.zoo()) <= set(names)
    for spec in names:
        assert play(declared, spec, seed=5) == play(declared, spec, seed=5), spec


@by_key
def test_every_zoo_policy_has_its_model_card_and_loads(declared: Game) -> None:
    assert declared.agents.zoo_package == declared.package, "the registry's zoo is the game's own"
    assert declared.zoo(), "a game ships at least one trained policy"
    for name, path in declared.zoo().items():
        card = path.with_suffix(".md")
        assert card.is_file(), f"{name} has no model card"
        assert card.read_text().startswith(f"# `{name}`"), f"{card.name} does not open with its name"
        policy = declared.agents.make(name).policy  # type: ignore[attr-defined]
        assert policy.metadata.env_version == declared.env_version


@by_key
def test_every_render_mode_renders(declared: Game, capsys: pytest.CaptureFixture[str]) -> None:
    assert "ansi" in declared.render_modes
    for mode in declared.render_modes:
        env = declared.make_env(render_mode=mode)
        env.reset(seed=1)
        drawn = env.render()
        if mode == "ansi":
            assert isinstance(drawn, str) and drawn.strip()
        elif mode == "rgb_array":
            assert isinstance(drawn, np.ndarray) and drawn.dtype == np.uint8 and drawn.ndim == 3 and drawn.shape[2] == 3
        elif mode == "human":
            assert drawn is None and capsys.readouterr().out.strip()


@by_key
def test_the_evaluation_is_seeded_and_gives_rates_with_intervals(declared: Game) -> None:
    first = declared.evaluate("random", 8, 3)
    assert first and first == declared.evaluate("random", 8, 3)
    for name, interval in first.items():
        assert 0.0 <= interval.low <= interval.value <= interval.high <= 1.0, (name, interval)


@by_key
def test_the_engine_offers_the_rules_functions(declared: Game) -> None:
    for function in ("new_game", "legal_actions", "action_mask"):
        assert callable(getattr(declared.engine, function, None)), f"{declared.key}: engine.{function}"


@by_key
def test_maskable_ppo_trains_on_the_game(declared: Game) -> None:
    pytest.importorskip("sb3_contrib", reason="the train extra is not installed")
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks
    from stable_baselines3.common.env_util import make_vec_env

    vec_env = make_vec_env(declared.env_id, n_envs=2, seed=0, env_kwargs={"render_mode": None})  # SB3's default: rgb
    vec_env.reset()
    masks = get_action_masks(vec_env)
    assert masks.shape == (2, vec_env.action_space.n) and masks.any(axis=1).all()
    model = MaskablePPO("MlpPolicy", vec_env, n_steps=64, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    assert model.num_timesteps >= 128
    observation = vec_env.reset()
    actions, _ = model.predict(observation, action_masks=get_action_masks(vec_env))
    assert all(mask[action] for mask, action in zip(get_action_masks(vec_env), np.asarray(actions), strict=True))
    vec_env.close()


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("render_modes", "ansi", r"Game.render_modes must be a tuple of str, got 'ansi'"),
        ("key", "my-game", r"Game.key must be the game's package name under friday13_env, got 'my-game'"),
        ("env_id", "", r"Game.env_id must be a non-empty str, got ''"),
        ("engine", types.SimpleNamespace(new_game=print), r"Game.engine .* lacks \['legal_actions', 'action_mask'\]"),
        ("evaluate", None, r"Game.evaluate must be callable"),
    ],
)
def test_a_declaration_that_cannot_serve_the_tools_is_refused_when_made(
    field: str, value: object, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        dataclasses.replace(GAMES[0], **{field: value})


def test_a_game_module_whose_declaration_is_not_a_game_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(games, "import_module", lambda name: types.SimpleNamespace(GAME={"key": "friday"}))
    with pytest.raises(TypeError, match=r"friday13_env.friday.game.GAME is a dict, not a friday13_env.core.game.Game"):
        game("friday")
    monkeypatch.setattr(games, "import_module", lambda name: types.SimpleNamespace(GAME=GAMES[0]))
    with pytest.raises(ValueError, match=r"declares the key 'friday13'; a game's key is its package, 'friday'"):
        game("friday")
