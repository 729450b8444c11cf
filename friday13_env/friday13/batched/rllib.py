"""Friday the 13th's batched tables as a Ray RLlib environment: many games per env runner on the batched engine.

RLlib's multi-agent env runner steps a ``VectorMultiAgentEnv`` of sub-environments, one ``MultiAgentEpisode`` per
game in each. Its own vectoriser steps Python env objects one after another; here a runner's vector env is
:class:`BatchedTables`, whose ``num_envs_per_env_runner`` sub-environments are the tables of one ``GameBatch``: one
numpy call plays a card at every table and encodes every next observation, and one forward pass per module serves
all tables. :class:`TablesEnvRunner` is RLlib's ``MultiAgentEnvRunner`` with ``make_env`` replaced to build it and
its per-card step counters summed per ``sample()`` call; two connectors (:class:`TableObservations`,
:class:`TableActions`) replace RLlib's default env-to-module and module-to-env pipelines, which handle each table
item by item and look up each action's episode in a scan of all of them. ``use_batched_tables(config, options)``
sets all of that on an algorithm's config. Episodes, GAE, the loss, checkpoints and metrics stay RLlib's own.

An agent ID is ``seat + 6 * module number`` (``agent_id``; module 0 is the learner, ``k`` the ``k``-th frozen
opponent), so a policy mapping is a pure function of the ID (``module_number``) and the seating is drawn, seeded,
by the environment (:func:`~friday13_env.friday13.batched.seating.seat_learners`). Rewards (a mode of
:mod:`friday13_env.friday13.rewards`) are credited to the seat that earned them: RLlib holds a seat's reward until
that seat's next observation and adds it to its latest move, and each seat's moves form their own chain for GAE.
Not chosen: the single-agent vector env (``Friday13-v0``), which cannot give every seat to one policy, and one
``MultiAgentEnv`` holding all tables, which makes every table-seat an agent of one endless episode, with RLlib's
per-agent metrics growing with the number of tables.

Needs the ``rllib`` extra (Ray RLlib 2.60; ``TablesEnvRunner`` replaces one of its private methods): importing this
module without it is a ``ModuleNotFoundError`` naming the extra. Nothing else in the package imports it;
``training/train_rllib.py`` trains on it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import gymnasium as gym
import numpy as np

from friday13_env.core.checks import check_choice
from friday13_env.core.extras import RLLIB_EXTRA, missing_extra
from friday13_env.core.failures import FailureLatch
from friday13_env.core.registry import check_seed
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import MAX_SEATS, GameBatch, StepResult, check_num_games
from friday13_env.friday13.batched.seating import seat_learners
from friday13_env.friday13.cards import check_deck_name, get_deck
from friday13_env.friday13.encoding import observation_bounds
from friday13_env.friday13.engine import Rules, check_player_counts
from friday13_env.friday13.options import check_reset_options
from friday13_env.friday13.rewards import REWARD_MODES, seat_rewards

try:
    import torch
    from ray.rllib.algorithms.algorithm_config import AlgorithmConfig
    from ray.rllib.connectors.connector_v2 import ConnectorV2
    from ray.rllib.connectors.module_to_env import GetActions
    from ray.rllib.core.columns import Columns
    from ray.rllib.env.multi_agent_env import MultiAgentEnv
    from ray.rllib.env.multi_agent_env_runner import MultiAgentEnvRunner
    from ray.rllib.env.multi_agent_episode import MultiAgentEpisode
    from ray.rllib.env.vector.vector_multi_agent_env import VectorMultiAgentEnv
    from ray.rllib.utils.metrics import (
        NUM_AGENT_STEPS_SAMPLED,
        NUM_AGENT_STEPS_SAMPLED_LIFETIME,
        NUM_ENV_STEPS_SAMPLED,
        NUM_ENV_STEPS_SAMPLED_LIFETIME,
        NUM_EPISODES,
        NUM_EPISODES_LIFETIME,
        NUM_MODULE_STEPS_SAMPLED,
        NUM_MODULE_STEPS_SAMPLED_LIFETIME,
    )
    from ray.rllib.utils.numpy import convert_to_numpy
except ModuleNotFoundError as missing:
    if not missing_extra(missing, __name__, RLLIB_EXTRA):
        raise
    raise missing from None


class TablesOptions(TypedDict):
    """``BatchedTables``' options (RLlib's ``env_config``)."""

    players: Sequence[int]
    """The table sizes, one drawn per game."""
    deck: str
    reward: str
    """A mode of ``rewards.REWARD_MODES``."""
    num_opponents: int
    """Frozen opponent modules (numbered 1..``num_opponents``)."""
    opponent_share: float
    """The share of games where the learner holds one seat and opponent modules the others."""


def check_tables_options(config: TablesOptions | dict[str, Any]) -> None:
    """A ``ValueError`` naming the allowed values for any bad :class:`TablesOptions` entry, before anything is
    built: a misspelt reward mode trained on another mode's rewards, an ``opponent_share`` of 7 was taken."""
    if not isinstance(config, Mapping):
        raise ValueError(
            f"the tables' options must be a dict of {sorted(TablesOptions.__annotations__)}, got {config!r}"
        )
    missing = sorted(set(TablesOptions.__annotations__) - set(config))
    unknown = sorted(set(config) - set(TablesOptions.__annotations__))
    if missing or unknown:
        raise ValueError(f"the tables' options lack {missing} and do not take {unknown}")
    check_player_counts(config["players"])
    check_deck_name(config["deck"])
    check_choice("reward mode", config["reward"], REWARD_MODES)
    opponents, share = config["num_opponents"], config["opponent_share"]
    if isinstance(opponents, bool) or not isinstance(opponents, int | np.integer) or opponents < 0:
        raise ValueError(f"num_opponents must be a non-negative int, got {opponents!r}")
    if isinstance(share, bool) or not isinstance(share, int | float | np.number) or not 0 <= share <= 1:
        raise ValueError(f"opponent_share must be a number in 0..1, got {share!r}")


def use_batched_tables(config: AlgorithmConfig, options: TablesOptions) -> AlgorithmConfig:
    """``config`` sampling from :class:`BatchedTables` with ``options``: its runner and its connectors."""
    return config.environment(env_config=dict(options)).env_runners(
        env_runner_cls=TablesEnvRunner,
        env_to_module_connector=lambda *_: TableObservations(),  # called with (env, spaces, device)
        add_default_connectors_to_env_to_module_pipeline=False,
        module_to_env_connector=lambda *_: [GetActions(), TableActions()],  # called with (env, spaces)
        add_default_connectors_to_module_to_env_pipeline=False,
    )


def agent_id(seat: int, module: int = 0) -> int:
    """The agent at ``seat`` of a game, played by module number ``module`` (0: the learner, ``k``: the ``k``-th
    opponent module).

    Integers, not text: RLlib keeps a game's agents in the order of a set of their IDs, and integers hash the
    same in every process while Python salts text hashes per process, which would make runs irreproducible."""
    return module * MAX_SEATS + seat


def module_number(agent: int) -> int:
    """The module number of an agent ID (``agent_id``'s ``module``): a policy mapping reads it."""
    return agent // MAX_SEATS


def observation_space(deck_name: str, players: Sequence[int]) -> gym.spaces.Dict:
    """The AEC environment's observation space (``observation`` and ``action_mask``), bounded for every size
    in ``players``; RLlib's modules read the same two keys from ``PettingZooEnv(friday13_env.env())``."""
    deck = get_deck(deck_name)
    high = np.maximum.reduce([observation_bounds(Rules(num_players=n, deck=deck)) for n in players])
    return gym.spaces.Dict(
        {
            "observation": gym.spaces.Box(0.0, high, dtype=np.float32),
            "action_mask": gym.spaces.Box(0, 1, shape=(deck.num_actions,), dtype=np.int8),
        }
    )


class TableSeats(MultiAgentEnv):
    """What RLlib reads from each sub-environment of a vector env: its agent IDs and their spaces. The tables
    themselves are stepped together by :class:`BatchedTables`, so this one object stands for every table."""

    def __init__(self, agents: list[int], observations: gym.Space, actions: gym.Space) -> None:
        super().__init__()
        self.possible_agents = agents
        self.agents = list(agents)
        self.observation_spaces = dict.fromkeys(agents, observations)
        self.action_spaces = dict.fromkeys(agents, actions)


class BatchedTables(VectorMultiAgentEnv):
    """``num_envs`` Friday the 13th tables as RLlib sub-environments, stepped together by one ``GameBatch``;
    ``config`` holds the :class:`TablesOptions` (RLlib's ``env_config``).

    Each sub-environment plays one game per episode: its observation dict holds the player to move only; its
    rewards hold every seat's reward of the play (the player who played included); the play that ends the
    game terminates every seat (``__all__``). As RLlib's vectoriser does (``autoreset_mode="next_step"``), the
    step after a game's end returns that table's next game, whose action is ignored. Seating is drawn for each
    new game: the learner at every seat, or (``opponent_share``) at one seat and opponent modules at the others.
    An exception part-way through ``step`` (after the engine played: an interrupt, say) leaves the tables refusing
    ``step`` until ``reset``; an action the engine refuses (nothing played) leaves them usable.
    """

    def __init__(self, config: TablesOptions | dict[str, Any], num_envs: int) -> None:
        super().__init__()
        check_tables_options(config)
        self.num_envs = check_num_games(num_envs, "num_envs")
        self.players = list(config["players"])  # checked by check_tables_options
        self.deck = get_deck(config["deck"])
        self.reward_mode = config["reward"]
        self.opponent_share = config["opponent_share"] if config["num_opponents"] else 0.0
        self.num_modules = 1 + config["num_opponents"]
        self.names = np.array(
            [[agent_id(seat, module) for seat in range(MAX_SEATS)] for module in range(self.num_modules)]
        )
        """``names[module, seat]``: every agent ID a game can have."""
        space = observation_space(config["deck"], self.players)
        actions: gym.Space = gym.spaces.Discrete(self.deck.num_actions)
        seats = TableSeats(self.names.ravel().tolist(), space, actions)
        self.envs = [seats] * num_envs
        self.single_observation_spaces = seats.observation_spaces
        self.single_action_spaces = seats.action_spaces
        # gymnasium's hints name text keys; its Dict takes these integer agent IDs as RLlib's own vectoriser does
        self.single_observation_space = self.observation_space = gym.spaces.Dict(seats.observation_spaces)  # type: ignore[arg-type]
        self.single_action_space = self.action_space = gym.spaces.Dict(seats.action_spaces)  # type: ignore[arg-type]
        self.metadata = {"autoreset_mode": "next_step"}
        self.batch: GameBatch | None = None
        self.rng = np.random.default_rng()
        self.roles = np.zeros((num_envs, MAX_SEATS), dtype=np.int64)
        """Each table's module number per seat in its current game (0: the learner)."""
        self.restarting = np.zeros(num_envs, dtype=bool)
        """Tables whose game ended on the last step: this step starts their next one."""
        self.latch = FailureLatch("the tables may be left mid-turn, so their games cannot go on: call reset()")

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Deal a new game at every table (the deals and the seating re-seeded when ``seed`` is given); no
        ``options`` are taken (a ``ValueError`` for any)."""
        everyone = np.arange(self.num_envs)
        check_seed(seed)  # a bad seed or options are refused before anything changes
        check_reset_options(options)
        fresh = seed is not None or self.batch is None
        rng = np.random.default_rng(seed) if fresh else self.rng
        self.latch.clear()
        with self.latch.guard("reset()"):
            if fresh:
                self.rng = rng
                self.batch = GameBatch(
                    self.num_envs, self.players, self.deck, seed=int(self.rng.integers(2**63)), autoreset=True
                )
            else:
                assert self.batch is not None
                self.batch.reset_games(everyone)
            self.seat_games(everyone)
            self.restarting[:] = False
            return self.observations(everyone), [{} for _ in range(self.num_envs)]

    def seat_games(self, tables: np.ndarray) -> None:
        """Draw who plays each seat of the new games at ``tables``."""
        assert self.batch is not None
        self.roles[tables] = 0
        seating = seat_learners(
            self.rng, tables, self.batch.num_players[tables], pool_size=self.num_modules - 1, share=self.opponent_share
        )
        if seating.opponents is not None:
            self.roles[seating.games] = np.where(seating.learner_mask, 0, seating.opponents + 1)

    def observations(self, tables: np.ndarray) -> list[dict[str, Any]]:
        """One dict per table of ``tables``: the player to move's ID and its ``observation``/``action_mask``."""
        assert self.batch is not None
        values = encode_observations(self.batch, tables)
        masks = self.batch.legal_mask(tables).astype(np.int8)
        seats = self.batch.current[tables]
        movers = self.names[self.roles[tables, seats], seats]
        return [
            {mover: {"observation": value, "action_mask": mask}}
            for mover, value, mask in zip(movers.tolist(), values, masks, strict=True)
        ]

    def step(self, actions: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], ...]:
        """Play the mover's action at every table whose game goes on; start the next game where one ended.

        ``actions`` holds one dict per table: ``{mover: card}`` where a game goes on (the mover's action alone,
        checked, never coerced), anything where a table starts its next game (nothing is played there)."""
        if self.batch is None:
            raise RuntimeError("step() before reset(): call reset() first")
        self.latch.check()
        if not isinstance(actions, Sequence) or len(actions) != self.num_envs:
            got = f"{len(actions)} entries" if isinstance(actions, Sequence) else repr(type(actions).__name__)
            raise ValueError(f"step() takes a list of one action dict per table ({self.num_envs}), got {got}")
        playing = np.flatnonzero(~self.restarting)
        movers = self.batch.current[playing]
        names = self.names[self.roles[playing], np.arange(MAX_SEATS)]  # this game's IDs, before any re-seating
        chosen = np.empty(playing.size, dtype=np.int64)
        for row, table in enumerate(playing.tolist()):
            mover = int(names[row, movers[row]])
            entry = actions[table]
            if not isinstance(entry, Mapping) or len(entry) != 1:
                raise ValueError(f"table {table}: the mover's action alone, {{{mover}: card}}, got {entry!r}")
            ((agent, action),) = entry.items()
            if agent != mover:
                raise ValueError(f"table {table}: an action of agent {agent!r}, but agent {mover} moves")
            chosen[row] = _card_action(action, table)
        with self.latch.guard("step()", refusals=(ValueError,)):  # GameBatch.step refuses before it plays
            result = self.batch.step(chosen, playing)
        with self.latch.guard("step()"):
            return self.record(result, playing, movers, names)

    def record(
        self, result: StepResult, playing: np.ndarray, movers: np.ndarray, names: np.ndarray
    ) -> tuple[list[dict[str, Any]], ...]:
        """``step``'s returns once the engine played (``playing``: the tables that played, ``movers`` and ``names``:
        who played and every seat's agent ID there); re-seats the tables whose game ended."""
        assert self.batch is not None
        n = self.num_envs
        seat_reward = seat_rewards(result, self.reward_mode)
        observations: list[dict[str, Any]] = [{} for _ in range(n)]
        rewards: list[dict[str, float]] = [{} for _ in range(n)]
        terminateds: list[dict[str, bool]] = [{"__all__": False} for _ in range(n)]
        for row in np.flatnonzero(seat_reward.any(axis=1)).tolist():
            seats = np.flatnonzero(seat_reward[row])
            rewards[playing[row]] = dict(zip(names[row, seats].tolist(), seat_reward[row, seats].tolist(), strict=True))
        for row, table in enumerate(playing.tolist()):  # RLlib wants the player's reward, also when it is 0 and the
            rewards[table].setdefault(int(names[row, movers[row]]), 0.0)  # same player leads the next round
        ended = np.flatnonzero(result.game_over)
        for row in ended.tolist():
            players = int(result.num_players[row])
            terminateds[playing[row]] = {**dict.fromkeys(names[row, :players].tolist(), True), "__all__": True}
        going_on = np.concatenate([playing[~result.game_over], np.flatnonzero(self.restarting)])
        for table, observation in zip(going_on.tolist(), self.observations(going_on), strict=True):
            observations[table] = observation
        self.restarting[:] = False
        self.restarting[playing[ended]] = True
        self.seat_games(playing[ended])  # the engine dealt their next games already
        truncateds = [{"__all__": False} for _ in range(n)]
        return observations, rewards, terminateds, truncateds, [{} for _ in range(n)]


class TablesEnvRunner(MultiAgentEnvRunner):
    """RLlib's multi-agent env runner with two changes for many tables.

    Its vector env is :class:`BatchedTables` (``num_envs_per_env_runner`` tables on the batched engine) instead of
    a list of Python envs stepped one after another. And its step counters (env steps, episodes, and each agent's
    and module's steps), which RLlib logs with six metric calls per card played (a large share of the sampling
    time with many tables), are summed over each ``sample()`` call and logged once: the same keys, the same totals.
    That replaces ``_increase_sampled_metrics``, a private method of RLlib 2.60 (the ``rllib`` extra pins 2.60.x;
    a test compares the counts with RLlib's own).
    """

    env: BatchedTables | None

    def make_env(self) -> None:
        if self.env is not None:
            self.env.close()
        self.env = BatchedTables(dict(self.config.env_config), self.config.num_envs_per_env_runner)
        self.num_envs = self.env.num_envs
        self._needs_initial_reset = True

    def sample(self, **kwargs: Any) -> list[MultiAgentEpisode]:
        self.step_counts: Counter[tuple[str, ...]] = Counter()
        episodes = super().sample(**kwargs)
        for key, count in self.step_counts.items():
            name = key if len(key) > 1 else key[0]
            self.metrics.log_value(name, count, reduce="sum")
            lifetime = (LIFETIME_COUNTS[key[0]], *key[1:])
            throughput = key[0] == NUM_ENV_STEPS_SAMPLED
            self.metrics.log_value(
                lifetime if len(key) > 1 else lifetime[0], count, reduce="lifetime_sum", with_throughput=throughput
            )
        return episodes

    def _increase_sampled_metrics(self, num_steps: int, next_obs: dict[str, Any], episode: MultiAgentEpisode) -> int:
        """What RLlib's version logs, counted (called by ``_sample`` for every table after every step)."""
        counts = self.step_counts
        counts[(NUM_ENV_STEPS_SAMPLED,)] += num_steps
        if episode.is_done:
            counts[(NUM_EPISODES,)] += 1
        for agent in next_obs:
            counts[(NUM_AGENT_STEPS_SAMPLED, str(agent))] += 1
            counts[(NUM_MODULE_STEPS_SAMPLED, episode.module_for(agent))] += 1
        return num_steps


LIFETIME_COUNTS = {
    NUM_ENV_STEPS_SAMPLED: NUM_ENV_STEPS_SAMPLED_LIFETIME,
    NUM_EPISODES: NUM_EPISODES_LIFETIME,
    NUM_AGENT_STEPS_SAMPLED: NUM_AGENT_STEPS_SAMPLED_LIFETIME,
    NUM_MODULE_STEPS_SAMPLED: NUM_MODULE_STEPS_SAMPLED_LIFETIME,
}
"""Each counter of ``TablesEnvRunner`` and the lifetime total RLlib keeps beside it."""


class TableObservations(ConnectorV2):
    """Env-to-module connector of :class:`BatchedTables`: the observations of the players to move, as the env just
    returned them, stacked per module into tensors. RLlib's default pipeline reads each one back from its episode
    and maps it to its module item by item, then finds each action's table by scanning the episode list (a cost
    per table that grows with the number of tables); here each row's table index and agent go to ``shared_data``
    for :class:`TableActions`."""

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict[str, Any] | None = None,
        metrics: Any = None,
        **kwargs: Any,
    ) -> dict[str, Any]:
        assert shared_data is not None
        rows: defaultdict[str, list[tuple[int, Any]]] = defaultdict(list)
        observations: defaultdict[str, list[np.ndarray]] = defaultdict(list)
        masks: defaultdict[str, list[np.ndarray]] = defaultdict(list)
        for index, (episode, table) in enumerate(zip(episodes, kwargs[Columns.OBS], strict=False)):
            if episode.is_done:  # RLlib also passes just-finished episodes (on their own): they act no more
                continue
            for agent, observation in table.items():
                module = episode.module_for(agent)
                rows[module].append((index, agent))
                observations[module].append(observation["observation"])
                masks[module].append(observation["action_mask"])
        shared_data[TABLE_ROWS] = rows
        return {
            module: {
                Columns.OBS: {
                    "observation": torch.from_numpy(np.stack(observations[module])),
                    "action_mask": torch.from_numpy(np.stack(masks[module])),
                }
            }
            for module in rows
        }


class TableActions(ConnectorV2):
    """Module-to-env connector of :class:`BatchedTables`, after RLlib's ``GetActions`` (which samples the actions
    and their log-probabilities): every output column as one ``{agent: value}`` dict per table, the rows sent back
    to the tables :class:`TableObservations` took them from."""

    def __call__(
        self,
        *,
        rl_module: Any,
        batch: dict[str, Any],
        episodes: list[Any],
        explore: bool | None = None,
        shared_data: dict[str, Any] | None = None,
        metrics: Any = None,
        **kwargs: Any,
    ) -> dict[str, list[dict[str, Any]]]:
        assert shared_data is not None
        rows = shared_data[TABLE_ROWS]
        columns: dict[str, list[dict[str, Any]]] = {}
        for module, outputs in batch.items():
            for column, values in outputs.items():
                tables = columns.setdefault(column, [{} for _ in episodes])
                for (index, agent), value in zip(rows[module], convert_to_numpy(values), strict=True):
                    tables[index][agent] = value
        return columns


TABLE_ROWS = "friday13_table_rows"
"""``shared_data`` key: per module, the (table index, agent ID) of each row of its batch."""


def _card_action(action: object, table: int) -> int:
    """An action as the engine takes it: an integer (a Python or numpy integer, or a 0-d integer array), never a
    bool or a float truncated into a card."""
    value = action[()] if isinstance(action, np.ndarray) and action.shape == () else action
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
        raise ValueError(f"table {table}: an action must be an integer card index, got {action!r}")
    return int(value)
