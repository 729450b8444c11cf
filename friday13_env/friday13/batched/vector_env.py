"""``Friday13-v0`` for N tables at once: a native ``gymnasium.vector.VectorEnv`` on the batched engine.

``gymnasium.make_vec("friday13_env/Friday13-v0", num_envs=4096, vectorization_mode="vector_entry_point",
num_players=4, opponent_pool=["cautious", "majority"])`` seats one learner at each of N tables and lets
batched opponents play every other seat between the learner's moves, all N tables in lockstep: one
``step`` plays the learner's card at every table, then the opponents' until the learner is to move
again. It takes the scalar environment's options and gives the same observations, masks and rewards;
opponents are batched agents (:mod:`friday13_env.friday13.batched.agents`: ``random``, ``cautious``,
``majority``, any network policy), so the ``search`` agents cannot sit here.

Autoreset follows Gymnasium 1.x (``autoreset_mode``): ``"NextStep"`` (default: the step after a game
ends starts a new one and ignores its action), ``"SameStep"`` (the new game starts in the same step;
the final observation and info are in ``infos["final_obs"]`` / ``infos["final_info"]``) or
``"Disabled"`` (finished tables wait for ``reset(options={"reset_mask": mask})``).

An exception while the tables are being played (an opponent failing, an interrupt) leaves the environment
refusing ``step``, ``action_masks`` and a masked reset until a full ``reset()``: some tables may be mid-turn,
and only re-dealing every table repairs that. A refused call (bad actions, an illegal one under
``illegal_action="raise"``, a finished table under ``Disabled``) changes nothing and the environment plays on.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, TypeAlias

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv

from friday13_env.core.checks import counted, exact_array, no_render_mode
from friday13_env.core.failures import FailureLatch
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.registry import check_seed
from friday13_env.core.seeds import seed_reset
from friday13_env.core.spaces import LegalMultiDiscrete
from friday13_env.friday13.batched.agents import BatchedAgent, act_seated, make_batched
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import MAX_SEATS, GameBatch, StepResult, check_num_games
from friday13_env.friday13.batched.seating import seat_learners
from friday13_env.friday13.cards import check_deck_name, get_deck
from friday13_env.friday13.encoding import observation_bounds
from friday13_env.friday13.engine import IllegalActionError, Rules, winning_seats
from friday13_env.friday13.options import (
    DEFAULT_OPPONENT_POOL,
    ILLEGAL_ACTION_MODES,
    LearnerTable,
    check_choice,
)
from friday13_env.friday13.rewards import REWARD_MODES, illegal_action_reward, seat_rewards

BatchedOpponentSpec: TypeAlias = "str | os.PathLike[str] | MLPPolicy | BatchedAgent"
AUTORESET_MODES = {mode.value: mode for mode in AutoresetMode}
NO_OPPONENT = -1
"""``infos["opponents"]`` entry of the learner's own seat and of empty seats."""


class Friday13VectorEnv(VectorEnv):
    """N learner seats at N Friday the 13th tables, the other seats played by batched opponents.

    Args:
        num_envs: N, the number of tables.
        num_players, opponents, opponent_pool, seat, deck, num_rounds, reward, illegal_action: as in
            the scalar ``Friday13-v0`` (:class:`~friday13_env.friday13.single_agent.Friday13Env`), for
            every table; opponents are batched agent specs (a name among ``random``, ``cautious``,
            ``majority`` with options, a zoo policy or checkpoint path), ``MLPPolicy`` objects (a
            frozen snapshot) or batched agents. Each table draws its size, the learner's seat and,
            with a pool, each opponent seat's agent when a game starts there.
        autoreset_mode: ``"NextStep"``, ``"SameStep"`` or ``"Disabled"`` (see the module docstring).

    ``infos`` holds, for every table, from ``reset`` on (as the scalar ``Friday13-v0``'s): ``action_mask``
    (N, A) int8; ``round`` (the round being played, or the one that just ended); ``round_over`` (a round
    ended since the learner's previous move) and ``round_points`` (its points of that round, else 0); ``total_points``;
    ``winner`` (the game is over and the learner shares the lowest total); ``illegal_action``; ``rank``
    (1 + players with a strictly lower total, 0 until the game ends); ``final_scores`` (N, 6; zeros
    until the game ends); ``num_players``; ``seat``; ``opponents`` (N, 6: index into
    ``opponent_names`` of the agent at each absolute seat, ``NO_OPPONENT`` for the learner and empty seats).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": [], "autoreset_mode": AutoresetMode.NEXT_STEP}  # type: ignore[misc]

    def __init__(
        self,
        num_envs: int = 1,
        num_players: int | Sequence[int] = 4,
        opponents: Sequence[BatchedOpponentSpec] | None = None,
        opponent_pool: Sequence[BatchedOpponentSpec] | None = None,
        seat: int | None = None,
        deck: str = "standard",
        num_rounds: int = 4,
        reward: str = "points",
        illegal_action: str = "end",
        autoreset_mode: str | AutoresetMode = AutoresetMode.NEXT_STEP,
        render_mode: None = None,
    ) -> None:
        self.num_envs = check_num_games(num_envs, "num_envs")
        self.table: LearnerTable[BatchedOpponentSpec] = LearnerTable.checked(
            num_players, opponents, opponent_pool, seat, DEFAULT_OPPONENT_POOL
        )
        """The table sizes, the learner's seat and the opponents (``set_opponent_pool`` replaces them)."""
        check_deck_name(deck)
        check_choice("reward mode", reward, REWARD_MODES)
        check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        mode = autoreset_mode.value if isinstance(autoreset_mode, AutoresetMode) else autoreset_mode
        check_choice("autoreset_mode", mode, AUTORESET_MODES)
        if render_mode is not None:
            raise ValueError(f"render_mode must be None (the vector environment does not render), got {render_mode!r}")
        self.deck = get_deck(deck)
        rules = [Rules(num_players=n, deck=self.deck, num_rounds=num_rounds) for n in self.table.player_counts]
        self.num_rounds = rules[0].num_rounds
        self.reward_mode = reward
        self.illegal_action_reward = illegal_action_reward(reward, self.deck, self.num_rounds)
        """The reward of a table's illegal action under ``illegal_action="end"`` (``rewards.illegal_action_reward``)."""
        self.illegal_action = illegal_action
        self.autoreset_mode = AUTORESET_MODES[mode]
        self.metadata = {**self.metadata, "autoreset_mode": self.autoreset_mode}  # type: ignore[misc]
        self.render_mode = None
        self._opponents = np.full((self.num_envs, MAX_SEATS), NO_OPPONENT, dtype=np.int64)
        self.opponent_names: list[str] = []
        self._agents: list[BatchedAgent] = []
        self._set_agents(self.table.opponent_pool if self.table.opponents is None else self.table.opponents)

        high = np.maximum.reduce([observation_bounds(rule) for rule in rules])
        self.single_observation_space = spaces.Box(0.0, high, dtype=np.float32)
        self.single_action_space = spaces.Discrete(self.deck.num_actions)
        self.observation_space = spaces.Box(0.0, np.broadcast_to(high, (self.num_envs, high.size)), dtype=np.float32)
        self._legal_space = LegalMultiDiscrete(np.full(self.num_envs, self.deck.num_actions))
        self.action_space = self._legal_space  # its sample() draws legal actions (core.spaces)
        n = self.num_envs
        self._batch: GameBatch | None = None
        self._seats = np.zeros(n, dtype=np.int64)
        self._ended = np.zeros(n, dtype=bool)
        self._illegal = np.zeros(n, dtype=bool)
        self._round_over = np.zeros(n, dtype=bool)
        self._round_points = np.zeros(n, dtype=np.int64)
        self._mask = np.zeros((n, self.deck.num_actions), dtype=np.int8)
        self._latch = FailureLatch(
            "some tables may be left mid-turn, so their games cannot go on: call reset() without a reset_mask "
            "(only re-dealing every table repairs them)"
        )
        """Locked when an exception left tables mid-turn: ``step`` and masked resets refuse until a full reset."""

    # -- opponents ---------------------------------------------------------------------------
    def set_opponent_pool(self, specs: Sequence[BatchedOpponentSpec]) -> None:
        """Draw every opponent seat from ``specs`` in each game that starts from now on (self-play: pass frozen
        ``MLPPolicy`` snapshots beside heuristics). Games under way keep their opponents."""
        table = self.table.with_pool(specs)
        self._set_agents(table.opponent_pool)
        self.table = table

    def _set_agents(self, specs: Sequence[BatchedOpponentSpec]) -> None:
        """Build the batched agents (every spec checked before any replaces the current ones)."""
        built = [make_batched(spec, self.deck) for spec in specs]
        # Games under way keep the agents they started with; agents no game uses any more are dropped.
        in_use = np.unique(self._opponents[self._opponents != NO_OPPONENT])
        renumbered = np.full(len(self._agents) + 1, NO_OPPONENT, dtype=np.int64)  # the last entry maps NO_OPPONENT
        renumbered[in_use] = np.arange(in_use.size)
        self._opponents = renumbered[self._opponents]
        self._agents = [*(self._agents[index] for index in in_use), *built]
        self.opponent_names = [agent.name for agent in self._agents]
        self._choices = np.arange(len(in_use), len(self._agents))

    # -- Gymnasium API -----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        """Start a game at every table (or, with ``options={"reset_mask": mask}``, at the masked tables only: at least
        one, and the infos' ``_key`` marks are True at those alone, as in Gymnasium's own vector environments).

        ``seed`` (an int) seeds ``np_random``, the one Generator behind deals, table sizes, seats and opponents
        (``np_random_seed`` is then ``seed``), and, from a key of its own (``seeds.ACTION_SAMPLER_KEY``), the action
        space, as the scalar ``Friday13-v0`` does: rollouts of ``action_space.sample()`` are reproducible. The deals
        are drawn for the whole batch: they depend on ``num_envs`` too, and are not the deals a scalar environment
        (or ``vectorization_mode="sync"``) draws from the same seed. After an
        exception left tables mid-turn only a full reset (no ``reset_mask``) is accepted; if this reset raises
        (an opponent failing before a learner's first move), the environment refuses to go on likewise.
        """
        mask = self._reset_mask(options)
        if mask is not None and seed is not None:
            raise ValueError("a seed re-deals every table: give reset() a seed or a reset_mask, not both")
        check_seed(seed)
        if mask is not None:
            self._latch.check()
        self._latch.clear()
        with self._latch.guard("reset()"):
            seed_reset(self, seed)  # seeded as the scalar env seeds its own
            if self._batch is None or seed is not None:
                self._batch = GameBatch(
                    self.num_envs, self.table.player_counts, self.deck, self.num_rounds,
                    seed=int(self.np_random.integers(2**63)), autoreset=False,
                )  # fmt: skip
            games = np.arange(self.num_envs) if mask is None else np.flatnonzero(mask)
            self._start(games)
            # Tables a masked reset left finished offer no action; its infos are marked at the tables it reset.
            return self._observe(self._ended.copy(), marked=mask)

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """Play each table's learner card, then its opponents' until the learner is to move or the game ends.

        Bad actions (see ``check_actions``), an illegal one under ``illegal_action="raise"`` and, under
        ``Disabled``, a finished table are refused before anything is played; an exception after that (an
        opponent failing) leaves the environment refusing to go on until a full ``reset()``.
        """
        batch = self._require_batch()
        self._latch.check()
        actions = check_actions(actions, self.num_envs, self.deck.num_actions)
        restarting = (
            self._ended.copy() if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros_like(self._ended)
        )
        waiting = self._ended & ~restarting
        if waiting.any() and self.autoreset_mode == AutoresetMode.DISABLED:
            count = int(waiting.sum())
            raise RuntimeError(
                f"the {'game is' if count == 1 else 'games are'} over at {counted(count, 'table')}: "
                "restart finished tables with reset(options={'reset_mask': mask})"
            )
        playing = np.flatnonzero(~restarting)
        legal = self._mask[playing, actions[playing]] == 1
        if not legal.all() and self.illegal_action == "raise":
            bad = int(playing[np.flatnonzero(~legal)[0]])
            raise ValueError(
                f"illegal action {int(actions[bad])} ({self.deck.action_name(int(actions[bad]))}) at table {bad}; "
                f"legal actions: {np.flatnonzero(self._mask[bad]).tolist()} (nothing was played)"
            )
        with self._latch.guard("step()"):
            return self._play(batch, actions, restarting, playing, legal)

    def _play(
        self, batch: GameBatch, actions: np.ndarray, restarting: np.ndarray, playing: np.ndarray, legal: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        """``step`` once its checks passed: the learners' cards where legal, the opponents', the autoresets."""
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        self._round_over[:] = False
        self._round_points[:] = 0
        self._illegal[:] = False
        self._illegal[playing[~legal]] = True
        rewards[playing[~legal]] = self.illegal_action_reward
        movers = playing[legal]
        if movers.size:
            rewards[movers] += self._learner_rewards(batch.step(actions[movers], movers), movers)
            rewards += self._play_opponents(movers)
        self._start(np.flatnonzero(restarting))
        terminated = (batch.game_over | self._illegal) & ~restarting
        self._ended = terminated.copy()
        truncated = np.zeros(self.num_envs, dtype=bool)
        if self.autoreset_mode == AutoresetMode.SAME_STEP and terminated.any():
            final_obs, final_info = self._observe(terminated)
            done = np.flatnonzero(terminated)
            self._start(done)
            observations, infos = self._observe(np.zeros(self.num_envs, dtype=bool))
            infos["final_obs"] = np.full(self.num_envs, None, dtype=object)
            for game in done.tolist():
                infos["final_obs"][game] = final_obs[game]
            infos["_final_obs"] = terminated.copy()
            # Gymnasium's convention: a key's mask is True where the game ended, each mask an array of its own
            infos["final_info"] = {
                key: terminated.copy() if key.startswith("_") else value for key, value in final_info.items()
            }
            infos["_final_info"] = terminated.copy()
            self._ended[:] = False
            return observations, rewards, terminated, truncated, infos
        observations, infos = self._observe(terminated)
        return observations, rewards, terminated, truncated, infos

    def render(self) -> None:
        """Nothing to render (the vector environment takes only ``render_mode=None``): ``None`` with a warning, as the
        other environments' ``render()`` without a render mode, so a loop that always calls it runs on."""
        no_render_mode()

    def action_masks(self) -> np.ndarray:
        """``(N, A)`` booleans: each learner's legal actions (none once its game is over)."""
        self._require_batch()
        self._latch.check()
        return self._mask.astype(bool)

    @property
    def batch(self) -> GameBatch:
        """The engine holding every table (read it, do not change it)."""
        return self._require_batch()

    @property
    def seats(self) -> np.ndarray:
        """The learner's seat at each table."""
        self._require_batch()
        return self._seats.copy()

    # -- internals ---------------------------------------------------------------------------
    def _start(self, games: np.ndarray) -> None:
        """Deal new games at ``games``, draw seats and opponents, and play up to each learner's first move."""
        if games.size == 0:
            return
        batch = self._require_batch()
        rng = self.np_random
        batch.reset_games(games)
        n = batch.num_players[games]
        fixed = self.table.opponents is not None
        seating = seat_learners(rng, games, n, pool_size=None if fixed else self._choices.size, seat=self.table.seat)
        seats = seating.learner_seats
        self._seats[games] = seats
        offsets = (np.arange(MAX_SEATS)[None, :] - seats[:, None] - 1) % n[:, None]  # 0 = just after the learner
        if seating.opponents is None:
            drawn = self._choices[np.minimum(offsets, self._choices.size - 1)]
        else:
            drawn = self._choices[seating.opponents]
        present = np.arange(MAX_SEATS)[None, :] < n[:, None]
        learner = np.arange(MAX_SEATS)[None, :] == seats[:, None]
        self._opponents[games] = np.where(present & ~learner, drawn, NO_OPPONENT)
        self._ended[games] = False
        self._round_over[games] = False
        self._round_points[games] = 0
        self._illegal[games] = False
        self._play_opponents(games)

    def _play_opponents(self, games: np.ndarray) -> np.ndarray:
        """Opponents move at ``games`` until each learner is to move or its game is over; the learners'
        rewards over those plays, ``(N,)``."""
        batch = self._require_batch()
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        while True:
            waiting = (batch.current[games] != self._seats[games]) & ~batch.game_over[games]
            games = games[waiting]
            if games.size == 0:
                return rewards
            actions = act_seated(self._agents, self._opponents, batch, games, self.np_random)
            try:
                result = batch.step(actions, games)
            except IllegalActionError as error:  # nothing was played: name the opponent, as Friday13-v0 does
                bad = int(np.flatnonzero(~batch.legal_mask(games)[np.arange(games.size), actions])[0])
                game, seat = int(games[bad]), int(batch.current[games[bad]])
                name = self._agents[self._opponents[game, seat]].name
                raise IllegalActionError(f"opponent {name!r} at player_{seat} of table {game}: {error}") from error
            rewards[games] += self._learner_rewards(result, games)

    def _learner_rewards(self, result: StepResult, games: np.ndarray) -> np.ndarray:
        """Each learner's reward from one play at ``games`` (the scalar environment's reward modes)."""
        rows = np.arange(games.size)
        seats = self._seats[games]
        own = result.round_points[rows, seats]
        ended = np.flatnonzero(result.round_over)
        self._round_over[games[ended]] = True
        self._round_points[games[ended]] = own[ended]
        return seat_rewards(result, self.reward_mode)[rows, seats]

    def _observe(self, done: np.ndarray, marked: np.ndarray | None = None) -> tuple[np.ndarray, dict[str, Any]]:
        """Every learner's observation and the infos; ``done`` tables get no legal actions. The infos' ``_key`` marks
        are True at the ``marked`` tables (every table for ``None``)."""
        batch = self._require_batch()
        everything = np.arange(self.num_envs)
        observations = encode_observations(batch, everything, self._seats)
        self._mask = batch.legal_mask().astype(np.int8)
        self._mask[done | batch.game_over | (batch.current != self._seats)] = 0
        self._legal_space.legal_mask = self._mask
        rows = np.arange(self.num_envs)
        n = batch.num_players
        scores = batch.scores
        totals = scores[rows, self._seats]
        over = batch.game_over
        present = np.arange(MAX_SEATS)[None, :] < n[:, None]
        infos: dict[str, Any] = {
            "action_mask": self._mask.copy(),
            "round": batch.round - (self._round_over & ~over),
            "round_over": self._round_over.copy(),
            "round_points": self._round_points.copy(),
            "total_points": totals,
            "winner": over & winning_seats(scores, n)[rows, self._seats],
            "illegal_action": self._illegal.copy(),
            "rank": np.where(over, 1 + (np.where(present, scores, totals[:, None]) < totals[:, None]).sum(axis=1), 0),
            "final_scores": np.where(over[:, None], scores, 0),
            "num_players": n.copy(),
            "seat": self._seats.copy(),
            "opponents": self._opponents.copy(),
        }
        marks = np.ones(self.num_envs, dtype=bool) if marked is None else marked  # Gymnasium's: whose info this is
        infos.update({f"_{key}": marks.copy() for key in list(infos)})  # one array each
        return observations, infos

    def _reset_mask(self, options: dict[str, Any] | None) -> np.ndarray | None:
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be None or a dict such as {{'reset_mask': mask}}, got {options!r}")
        if not options:
            return None
        unknown = sorted(set(options) - {"reset_mask"})
        if unknown:
            raise ValueError(f"reset() takes only the option 'reset_mask', got {unknown}")
        mask = np.asarray(options["reset_mask"])
        if mask.shape != (self.num_envs,) or mask.dtype != bool:
            raise ValueError(
                f"reset_mask must be a boolean array of shape ({self.num_envs},), got {mask.shape} {mask.dtype}"
            )
        if not mask.any():
            raise ValueError("reset_mask resets no table: it must hold at least one True (as Gymnasium's own do)")
        if self._batch is None:
            raise RuntimeError("the first reset() must start every table (no reset_mask)")
        return mask

    def _require_batch(self) -> GameBatch:
        if self._batch is None:
            raise RuntimeError("the environment must be reset() before it is used")
        return self._batch


def check_actions(actions: Any, num_envs: int, num_actions: int) -> np.ndarray:
    """``actions`` as ``(num_envs,)`` int64, or a ``ValueError`` naming the allowed shape and range.

    Integer arrays (or lists of ints) only: floats, NaN, bools (a list's too) and strings are refused, never
    truncated or cast into a card (``legal + 0.99`` is not ``legal``); a masked array too (``exact_array``). Shared
    by ``Friday13VectorEnv.step`` and the SB3 adapter's ``step_async``, so both refuse the same actions with the same
    words.
    """
    array = exact_array(actions, "actions")
    if array.shape != (num_envs,) or array.dtype.kind not in "iu":
        raise ValueError(
            f"actions must be {counted(num_envs, 'integer')} (one per table) in 0..{num_actions - 1}, "
            f"got shape {array.shape} of dtype {array.dtype}"
        )
    if array.size and (array.min() < 0 or array.max() >= num_actions):
        raise ValueError(f"actions must be in 0..{num_actions - 1}, got values from {array.min()} to {array.max()}")
    return array.astype(np.int64)
