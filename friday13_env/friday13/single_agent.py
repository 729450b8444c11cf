"""Friday the 13th as a single-agent Gymnasium environment: one learner against scripted opponents.

``gymnasium.make("friday13_env/Friday13-v0", num_players=4, opponents=["cautious", "majority", "search"])``
seats the learner at one table seat and lets the opponents play every other seat between the
learner's moves, so any single-agent algorithm (PPO, DQN, MaskablePPO) can train on the game.

Why it is built the way it is:

- **Speed.** This environment is the training bottleneck, so opponents act directly on the bare
  ``aec.raw_env`` (no PettingZoo wrapper stack), and the learner's observation is encoded once per
  learner step, never for the opponents' plies in between.
- **One policy for every table size.** The observation is the AEC ``observation`` vector, whose size
  does not depend on the player count; ``num_players`` may therefore be drawn per episode.
- **Masks without surprises.** ``info["action_mask"]`` and ``action_masks()`` (found by sb3-contrib's
  MaskablePPO, also through ``gymnasium.make``'s wrappers and VecEnvs) give the legal actions, and
  ``action_space.sample()`` draws a legal action. An illegal action is never replaced by a legal
  one: by default it ends the episode with a reward below anything legal play reaches
  (``rewards.illegal_action_reward``) and ``info["illegal_action"]``
  (the convention of the wrapped AEC ``env()``, which generic checkers rely on);
  ``illegal_action="raise"`` raises a ``ValueError`` naming the legal actions instead, and the
  episode can go on.
- **No half-played turns.** An exception while the table is being played (an opponent failing,
  say) leaves the environment refusing ``step`` until ``reset``; a rejected action changes nothing.
- **Reproducibility.** Every random choice (player count, seat, opponents, their seeds, the deals)
  is drawn from the Generator that ``reset(seed=...)`` seeds, so a seed and the learner's actions
  determine the whole episode. An agent object among the opponents is re-seeded with its seat's seed
  through its ``reset(seed)`` hook each episode; one without the hook plays on from its own state, so
  only a deterministic one keeps episodes reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeAlias

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from friday13_env.core import checks
from friday13_env.core.agent import check_reset_hook, reseeded
from friday13_env.core.failures import FailureLatch
from friday13_env.core.registry import agent_from_factory, check_seed
from friday13_env.core.seeds import seed_reset
from friday13_env.core.spaces import LegalDiscrete
from friday13_env.core.specs import AgentSpec
from friday13_env.friday13 import agents
from friday13_env.friday13.aec import NEUTRAL_INFO, as_action, raw_env
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.agents.seating import make_seated
from friday13_env.friday13.cards import Deck
from friday13_env.friday13.encoding import encode_observation, observation_bounds, observation_layout
from friday13_env.friday13.engine import (
    GameState,
    IllegalActionError,
    action_mask,
    illegal_action_error,
    is_legal,
)
from friday13_env.friday13.options import (
    DEFAULT_OPPONENT_POOL,
    ILLEGAL_ACTION_MODES,
    LearnerTable,
    check_reset_options,
)
from friday13_env.friday13.render import RENDER_MODES, check_render_mode, render_state
from friday13_env.friday13.render_image import TableCanvas, render_rgb

OpponentSpec: TypeAlias = "str | os.PathLike[str] | AgentSpec | Agent | Callable[..., Agent]"
"""An opponent: an agent spec for ``agents.make`` (a registered name, with options as in
``"search:budget=600"``, a zoo name such as ``"ensemble-v1"``, or a checkpoint path; as text or as the
``AgentSpec`` that ``parse_spec`` makes of it, as ``agents.make`` and the vector environment take it), an ``Agent``
object (used as it is, in every episode it is drawn for) or a factory called as
``factory(seed=...)`` once per episode."""
_SEED_BOUND = 2**32
"""Opponents and deals get seeds in ``0..2**32-1`` drawn from the environment's Generator."""


class Friday13Env(gym.Env[np.ndarray, np.int64]):
    """One learner seat at a Friday the 13th table; the other seats are played by opponents.

    Args:
        num_players: table size, an int in 3..6, or a sequence of them to draw from each episode.
        opponents: one opponent per other seat, in clockwise order from the learner (the first sits
            just after the learner). With a drawn ``num_players`` give ``max(num_players) - 1`` and a
            table of ``n`` players seats the first ``n - 1``. Exclusive with ``opponent_pool``.
        opponent_pool: each other seat draws its opponent uniformly from this pool every episode.
            The default, when neither option is given, is ``("random",)``.
        seat: the learner's seat (0-based; 0 starts the first round), or ``None`` to draw it each
            episode.
        deck, num_rounds, reward: passed to ``aec.raw_env``; the learner's reward for a step is the
            sum of the AEC rewards it received since its previous move (``reward`` mode ``points``:
            minus its bad-luck points when a round ends; ``win``; ``relative``; ``rival``: see
            ``rewards.REWARD_MODES``).
        render_mode: ``"ansi"`` (``render()`` returns text), ``"human"`` (printed every step) or
            ``"rgb_array"`` (the text as a ``uint8`` (H, W, 3) image, of one shape for the whole
            environment whatever table size is drawn).
        illegal_action: ``"end"`` (default): an illegal action ends the episode with reward
            ``rewards.illegal_action_reward`` (below every return legal play reaches: -1 under ``win``)
            and ``info["illegal_action"] = True``, nothing played;
            ``"raise"``: it raises a ``ValueError`` naming the legal actions and the episode goes on.
            Either way, a non-integer or out-of-range action is a ``ValueError``.

    ``info`` holds every key from ``reset`` on, with a neutral value until it means something:
    ``action_mask``; the learner's AEC info (``round``, ``round_over``: a round ended since the
    learner's previous move, ``round_points``: its points of that round, else 0, ``total_points``:
    its total so far, ``winner``: False until the game ends, then True on a shared or sole win,
    ``illegal_action``); ``rank`` (1 + players with a strictly lower total; 0 until the game ends),
    ``final_scores`` (every seat's total, absolute seat order; zeros until the game ends),
    ``num_players``, ``seat`` and ``opponents`` (``{"player_k": label}``).

    Opponents that declare a deck (policies) must play the table's: one made for the other deck is
    refused when the environment is made (names, objects) or when it is seated at ``reset`` (factories).

    Self-play: ``env.unwrapped.set_opponent_pool(specs)`` (or ``vec_env.env_method(
    "set_opponent_pool", specs)``) swaps the opponents in from the next reset on.
    """

    metadata: ClassVar[dict[str, Any]] = {  # type: ignore[misc]  # gymnasium declares it per instance
        "render_modes": list(RENDER_MODES),
        "render_fps": 1,
    }

    def __init__(
        self,
        num_players: int | Sequence[int] = 4,
        opponents: Sequence[OpponentSpec] | None = None,
        opponent_pool: Sequence[OpponentSpec] | None = None,
        seat: int | None = None,
        deck: str = "standard",
        num_rounds: int = 4,
        reward: str = "points",
        render_mode: str | None = None,
        illegal_action: str = "end",
    ) -> None:
        self.table: LearnerTable[OpponentSpec] = LearnerTable.checked(
            num_players, opponents, opponent_pool, seat, DEFAULT_OPPONENT_POOL
        )
        """The table sizes, the learner's seat and the opponents (``set_opponent_pool`` replaces them)."""
        check_render_mode(render_mode)
        if not (isinstance(illegal_action, str) and illegal_action in ILLEGAL_ACTION_MODES):
            raise ValueError(
                f"illegal_action must be one of {sorted(ILLEGAL_ACTION_MODES)} (end the episode with a penalty, "
                f"or raise a ValueError), got {illegal_action!r}"
            )
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        # One bare AEC environment per table size; building them validates deck, rounds and reward.
        self._tables = {
            n: raw_env(num_players=n, deck=deck, num_rounds=num_rounds, reward=reward) for n in self.table.player_counts
        }
        any_table = next(iter(self._tables.values()))
        self.deck: Deck = any_table.rules.deck
        """The deck of every table: opponents that declare another one are refused."""
        self.illegal_action_reward = any_table.illegal_action_reward
        """An illegal action's reward under ``illegal_action="end"`` (``rewards.illegal_action_reward``)."""
        self.canvas = TableCanvas.for_table(self.deck, max(self.table.player_counts))
        """The ``rgb_array`` image's size, the same at every table size this environment draws."""
        if self.table.opponents is None:
            _check_specs(self.table.opponent_pool, "opponent_pool", self.deck)
        else:
            _check_specs(self.table.opponents, "opponents", self.deck)
        # Same layout at every table size; the bounds (hand sizes) differ, so take the widest.
        high = np.maximum.reduce([observation_bounds(table.rules) for table in self._tables.values()])
        self.observation_space = spaces.Box(0.0, high, dtype=np.float32)
        self.layout = observation_layout(self.deck)
        """Named views of an observation: ``env.unwrapped.layout.views(observation)``."""
        self._legal_space = LegalDiscrete(any_table.rules.deck.num_actions)
        self.action_space = self._legal_space
        self._raw: raw_env | None = None
        self._game: GameState | None = None
        self._players: list[Agent | None] = []
        self._labels: dict[str, str] = {}
        self._seat = 0
        self._agent = ""
        self._no_moves = np.zeros(self._legal_space.n, dtype=np.int8)
        self._mask = self._no_moves.copy()
        self._done = False
        self._latch = FailureLatch("the table may be left mid-turn, so the episode cannot go on: call reset()")
        """Locked when an exception left the table mid-turn: ``step`` refuses to go on until ``reset``."""

    @property
    def game(self) -> GameState:
        """The engine state of the current episode, for analysis and tests (read it, do not change it)."""
        return self._require_game(even_if_failed=True)

    @property
    def seat(self) -> int:
        """The learner's seat in the current episode."""
        self._require_game(even_if_failed=True)
        return self._seat

    # -- opponents ---------------------------------------------------------------------------
    def set_opponent_pool(self, specs: Sequence[OpponentSpec]) -> None:
        """Draw every opponent seat from ``specs`` from the next ``reset`` on (replaces any fixed list).

        The hook for self-play: pass frozen snapshots as ``Agent`` objects (re-seeded each episode through
        their ``reset(seed)`` hook, if they have one) or as
        factories ``factory(seed=...) -> Agent`` (built afresh each episode with a seed from the
        environment's Generator, so episodes stay reproducible). Through a ``SubprocVecEnv``
        (``env_method("set_opponent_pool", specs)``) the entries must be picklable. Names and agents
        of the wrong deck are refused here; factories when their agent is seated.
        """
        table = self.table.with_pool(specs)
        _check_specs(table.opponent_pool, "opponent_pool", self.deck)
        self.table = table

    # -- gymnasium API -----------------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        """Draw table size, seat and opponents, deal, and play the opponents up to the learner's move.

        ``seed``: ``None`` or a non-negative int (a numpy integer counts as the same int), else a ``ValueError``
        before anything changes; it seeds the deal and, from a key of its own (``seeds.ACTION_SAMPLER_KEY``), the
        action space, so that rollouts of ``action_space.sample()`` are reproducible too. Takes no ``options`` (a
        ``ValueError`` for any). If seating or playing the opponents raises, the environment refuses ``step``
        until the next ``reset``.
        """
        check_seed(seed)
        check_reset_options(options)
        seed_reset(self, seed)
        rng = self.np_random
        table = self.table
        counts = table.player_counts
        n = counts[0] if len(counts) == 1 else int(counts[rng.integers(len(counts))])
        seat = int(rng.integers(n)) if table.seat is None else table.seat
        if table.opponents is not None:
            specs = table.opponents[: n - 1]
        else:
            specs = tuple(table.opponent_pool[i] for i in rng.integers(len(table.opponent_pool), size=n - 1))
        seeds = rng.integers(_SEED_BOUND, size=n).tolist()
        raw = self._tables[n]
        raw.reset(seed=seeds[-1])
        game = raw._require_game()
        self._raw, self._game = raw, game
        self._seat, self._agent = seat, raw.possible_agents[seat]
        self._players = [None] * n
        self._labels = {}
        self._done = False
        self._latch.clear()
        with self._latch.guard("reset()"):
            for offset, spec in enumerate(specs):
                other = (seat + 1 + offset) % n
                agent, label = _instantiate(spec, seeds[offset], self.deck)
                self._players[other] = agent
                self._labels[raw.possible_agents[other]] = label
            _, round_info = self._play_opponents(raw, game)
        return self._observe(game, round_info)

    def step(self, action: int | np.integer | np.ndarray) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's card, then the opponents' until the learner is to move or the game ends.

        Actions are Python or numpy integers, or 0-d integer arrays; anything else, and an
        out-of-range action, is a ``ValueError`` naming the legal actions (nothing is played). An
        illegal action ends the episode with ``rewards.illegal_action_reward`` or, with
        ``illegal_action="raise"``, raises likewise. ``RuntimeError`` after the episode ended, before
        the first reset, and after an exception left the table mid-turn.
        """
        raw = self._require_started()
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset() to start a new one")
        game = self._require_game()
        action = as_action(action, game)
        if not is_legal(game, action):
            if self.illegal_action == "end":
                raw.end_on_illegal_action()
                self._done = True
                observation, info = self._observe(game, raw.infos[self._agent])
                return observation, raw.rewards[self._agent], True, False, info
            raise illegal_action_error(game, action)
        with self._latch.guard("step()"):
            raw.step(action)
            reward = raw.rewards[self._agent]
            learner_info = raw.infos[self._agent]
            opponents_reward, opponents_info = self._play_opponents(raw, game)
            if not learner_info["round_over"]:
                learner_info = opponents_info
            self._done = game.game_over
            observation, info = self._observe(game, learner_info)
        return observation, reward + opponents_reward, self._done, False, info

    def action_masks(self) -> np.ndarray:
        """The learner's legal actions as booleans (sb3-contrib's MaskablePPO calls this)."""
        self._require_started()
        return self._mask.astype(bool)

    def render(self) -> str | np.ndarray | None:
        """The table from the learner's seat: text (``ansi``; ``human`` prints it) or an image (``rgb_array``)."""
        if self.render_mode is None:
            checks.no_render_mode()
            return None
        game = self._require_game(even_if_failed=True)
        if self.render_mode == "rgb_array":
            return render_rgb(game, self.canvas, show_hand_of=self._seat)
        text = render_state(game, show_hand_of=self._seat)
        if self.render_mode == "human":
            print(text)
            return None
        return text

    # -- internals ---------------------------------------------------------------------------
    def _play_opponents(self, raw: raw_env, game: GameState) -> tuple[float, dict[str, Any]]:
        """Let opponents move until the learner is to move or the game is over.

        Returns the learner's reward over those plies and its latest AEC info (that of a round end
        if a round ended on the way).
        """
        me, players, names = self._agent, self._players, raw.possible_agents
        reward = 0.0
        info = raw.infos[me]
        while game.current != self._seat and not game.game_over:
            name = names[game.current]
            player = players[game.current]
            assert player is not None, f"no opponent seated at {name}"
            action = player.act(raw.observe(name))
            try:
                raw.step(action)
            except IllegalActionError as error:
                raise ValueError(
                    f"opponent {self._labels[name]!r} at {name} chose an illegal action: {error}"
                ) from error
            reward += raw.rewards[me]
            if not info["round_over"]:
                info = raw.infos[me]
        return reward, info

    def _observe(self, game: GameState, learner_info: dict[str, Any]) -> tuple[np.ndarray, dict[str, Any]]:
        """The learner's observation and the full info: its AEC info, the mask and the table."""
        self._mask = self._no_moves.copy() if self._done else np.array(action_mask(game), dtype=np.int8)
        self._legal_space.legal_mask = self._mask
        if self.render_mode == "human":
            self.render()
        n = len(self._players)
        info: dict[str, Any] = {
            "action_mask": self._mask.copy(),
            **NEUTRAL_INFO,
            **learner_info,
            "rank": 0,
            "final_scores": [0] * n,
            "num_players": n,
            "seat": self._seat,
            "opponents": dict(self._labels),
        }
        if game.game_over:
            scores = game.scores
            info["final_scores"] = list(scores)
            info["rank"] = 1 + sum(score < scores[self._seat] for score in scores)
        return encode_observation(game, self._seat), info

    def _require_started(self) -> raw_env:
        if self._raw is None:
            raise RuntimeError("the environment must be reset() before it is used")
        self._latch.check()
        return self._raw

    def _require_game(self, even_if_failed: bool = False) -> GameState:
        if self._raw is None:
            raise RuntimeError("the environment must be reset() before it is used")
        if not even_if_failed:
            self._require_started()
        assert self._game is not None
        return self._game


def _check_specs(specs: tuple[OpponentSpec, ...], option: str, deck: Deck) -> None:
    """Validate opponent specs up front, so a typo or a wrong deck fails at construction and not mid-training."""
    for spec in specs:
        if isinstance(spec, str | os.PathLike | AgentSpec) or (not isinstance(spec, type) and isinstance(spec, Agent)):
            # Builds a named agent once: unknown names and options list what is allowed, and a policy shows its deck.
            make_seated(spec, 0, deck)
            check_reset_hook(spec)
        elif not callable(spec):
            raise ValueError(
                f"{option} entries must be agent specs {agents.names()} (with options as 'search:budget=600'; "
                "text or AgentSpec), "
                f"checkpoint paths, Agent objects or factories factory(seed=...) -> Agent; got {spec!r}"
            )


def _instantiate(spec: OpponentSpec, seed: int, deck: Deck) -> tuple[Agent, str]:
    """The agent for one seat and one episode, with the label reported in ``info["opponents"]``."""
    if isinstance(spec, AgentSpec):
        return make_seated(spec, seed, deck), spec.label
    if isinstance(spec, str | os.PathLike):
        return make_seated(spec, seed, deck), os.fspath(spec)
    if isinstance(spec, type) or not isinstance(spec, Agent):
        agent = agent_from_factory(spec, seed, repr(getattr(spec, "__qualname__", spec)))
        check_reset_hook(agent)
    else:
        agent = spec
        reseeded(agent, seed)  # through its reset(seed) hook: its play does not depend on earlier episodes
    return make_seated(agent, seed, deck), agent.name
