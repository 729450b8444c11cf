"""Self-play PPO for Friday the 13th on Ray RLlib's new API stack, from one machine to a cluster (one file).

The same training as ``train_ppo.py``'s, written the RLlib way, for users who scale out on Ray: one shared policy
(the RLModule ``learner``) plays every seat, and through the policy mapping a share of the games
(``--opponent-share``) seats it once against heuristic or frozen opponents (``--opponents``: batched agent
specs such as ``cautious``, zoo names, or policies exported by an earlier run), which are not trained.
``--address`` joins a running Ray cluster (``auto``: the one ``ray start --head`` started on this machine);
without it the script starts a local Ray. Every other flag means the same on a laptop and on a cluster.

How a runner samples many tables (the design, and why): RLlib's multi-agent env runner steps a
``VectorMultiAgentEnv`` of sub-environments, one ``MultiAgentEpisode`` per game in each. Its own vectoriser
steps Python env objects one after another; here each runner's vector env is :class:`BatchedTables`, whose
``--num-envs-per-env-runner`` sub-environments are the tables of one ``GameBatch`` (the package's batched
engine): one numpy call plays a card at every table and encodes every next observation, and one forward
pass per module serves all tables. :class:`TablesEnvRunner` is RLlib's ``MultiAgentEnvRunner`` with
``make_env`` replaced to build it and its per-card step counters summed per ``sample()`` call; two
connectors (:class:`TableObservations`, :class:`TableActions`) replace RLlib's default env-to-module and
module-to-env pipelines, which handle each table item by item and look up each action's episode in a scan
of all of them. Episodes, GAE, the PPO loss, checkpoints and metrics stay RLlib's own. An agent ID is
``seat + 6 * module number`` (0: the learner, ``k``: ``--opponents[k - 1]``), so the policy mapping is a pure
function of the ID and the seating is drawn, seeded, by the environment. Rewards (``relative`` by
default: the table's mean points minus the seat's own, at each round's end) are credited to the seat
that earned them: RLlib holds a seat's reward until that seat's next observation and adds it to its
latest move, and each seat's moves form their own chain for GAE, as in ``train_ppo.py``. Not chosen: the
single-agent vector env (``Friday13-v0``), which cannot give every seat to one policy, and one
``MultiAgentEnv`` holding all tables, which makes every table-seat an agent of one endless episode, with
RLlib's per-agent metrics growing with the number of tables.

The network: actor and critic MLPs (RLlib's ``TorchMLP``) on the observation scaled as the package's
policies scale it; illegal actions get no probability. The actor is exactly the package's numpy policy
format, so ``--export`` writes a file that ``friday13_env.agents.load`` plays without Ray or torch. The
periodic evaluation plays that exported file in the package's duplicate-deal tournament (4 players, three
copies of each ``--eval-opponents`` agent, the deals of ``train_ppo.py``'s evaluations).

What a run leaves in ``--run-dir`` (default ``runs/<run-name>``):
  ``checkpoint/``        RLlib's own checkpoint (``Algorithm.save_to_path``): ``--resume`` restores it
  ``progress.json``      the run's arguments, iterations and timesteps done, learning-curve points
  ``policy.npz``         the exported numpy policy (also copied to ``--export``)

``--resume`` continues the run with its recorded hyperparameters (one given with another value is refused,
each listed); the run settings (``--iterations``, ``--address``, ``--num-env-runners``,
``--num-envs-per-env-runner``, ``--eval-every``, ``--checkpoint-every``, ``--export``) may change, so a run
started on one machine can go on on a cluster. The batch is ``--train-batch-size`` card plays whatever the
number of runners. A resumed run deals from a seed derived from the run's seed and its iterations.

Needs the ``rllib`` extra (``pip install -e ".[rllib]"``). Timings and the cluster recipe:
docs/other-libraries.md.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import gymnasium as gym
import numpy as np
import torch
from friday13_training.card_agents import evaluation_opponent_errors
from friday13_training.runs import (
    export_copy,
    next_multiple,
    open_run,
    parse_run_args,
    resumed_run_args,
    run_main,
)
from friday13_training.script_args import atomic_write_text, field_errors, option, output_errors
from friday13_training.torch_policy import save_linear_layers
from torch import nn

from friday13_env.core.failures import FailureLatch
from friday13_env.core.mlp import MLPPolicy
from friday13_env.core.registry import check_seed
from friday13_env.friday13.aec import REWARD_MODES
from friday13_env.friday13.agents.policy import (
    load_policy_agent,
    observation_scale,
    policy_metadata,
    read_card_policy,
)
from friday13_env.friday13.batched import make_batched
from friday13_env.friday13.batched.encoding import encode_observations
from friday13_env.friday13.batched.engine import MAX_SEATS, GameBatch, StepResult
from friday13_env.friday13.batched.selfplay import seat_rewards
from friday13_env.friday13.cards import DECKS, get_deck
from friday13_env.friday13.encoding import observation_bounds
from friday13_env.friday13.engine import MAX_PLAYERS, MIN_PLAYERS, Rules
from friday13_env.friday13.evaluation import evaluate_agent

MISSING_RAY = 'training/train_rllib.py needs Ray RLlib (the rllib extra): pip install "friday13-env[rllib]"'
"""Why the script cannot run without Ray: one line, for ``--help`` too (every class here builds on RLlib's)."""
try:
    import ray
    from ray.rllib.algorithms.algorithm import Algorithm
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.connectors.connector_v2 import ConnectorV2
    from ray.rllib.connectors.module_to_env import GetActions
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.models.torch.primitives import TorchMLP
    from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
    from ray.rllib.core.rl_module.torch import TorchRLModule
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
    from ray.rllib.utils.torch_utils import FLOAT_MIN
except ModuleNotFoundError as missing:
    if (missing.name or "").partition(".")[0] != "ray":
        raise
    if __name__ == "__main__":  # run as a script (even for --help): one line, not a traceback
        raise SystemExit(f"error: {MISSING_RAY}") from None
    raise ModuleNotFoundError(MISSING_RAY, name=missing.name) from None

LEARNER = "learner"
"""The RLModule that plays every learner seat and is the only one trained."""
EVAL_SEED = 20_131_313
"""Seed of the periodic evaluations' deals: ``train_ppo.py``'s, so that the two scripts' curves compare."""


# -- hyperparameters -------------------------------------------------------------------------------
@dataclass
class Args:
    """Every knob of a run; each becomes a ``--flag`` with this default, bounds and help."""

    run_name: str = option("rllib", "name of the run; its directory is runs/<run-name>")
    run_dir: str = option("", "explicit run directory (overrides --run-name)")
    address: str = option(
        "", "join the Ray cluster at this address ('auto': the one `ray start` runs here); empty: start a local Ray"
    )
    num_env_runners: int = option(1, "Ray actors sampling in parallel (0: sample in the driver)", minimum=0)
    num_envs_per_env_runner: int = option(128, "tables each runner plays in lockstep on the batched engine", minimum=1)
    iterations: int = option(
        100, "training iterations (each samples --train-batch-size card plays, then learns)", minimum=1
    )
    seed: int = option(0, "seeds the networks, the deals, the seating and the sampling", minimum=0)
    players: list[int] = option(
        [3, 4, 5, 6], "table sizes, one drawn per game", minimum=MIN_PLAYERS, maximum=MAX_PLAYERS
    )
    deck: str = option("standard", "the deck of the tables", choices=sorted(DECKS))
    reward: str = option("relative", "reward mode (see friday13_env.friday13.aec)", choices=sorted(REWARD_MODES))
    opponents: list[str] = option(
        ["cautious", "majority"],
        "frozen opponents, one RLModule each: batched agent specs (random, cautious, majority, zoo names, "
        "exported .npz policies); none: pure self-play",
        allow_empty=True,
    )
    opponent_share: float = option(
        0.5, "share of games where the learner holds one seat and --opponents the others", minimum=0, maximum=1
    )
    train_batch_size: int = option(16_384, "card plays sampled per iteration (every seat's)", minimum=1)
    minibatch_size: int = option(4096, "samples per gradient step", minimum=1)
    num_epochs: int = option(4, "passes over each batch", minimum=1)
    learning_rate: float = option(1e-3, "Adam learning rate", above=0)
    gamma: float = option(0.995, "discount per move of the same seat", minimum=0, maximum=1)
    gae_lambda: float = option(0.95, "GAE lambda", minimum=0, maximum=1)
    clip_coef: float = option(0.2, "PPO clip range", above=0)
    ent_coef: float = option(0.03, "entropy bonus", minimum=0)
    vf_coef: float = option(0.5, "value loss weight", minimum=0)
    max_grad_norm: float = option(0.5, "gradient norm clip", above=0)
    hidden_sizes: list[int] = option([128, 128], "hidden layer widths of the actor and the critic", minimum=1)
    activation: str = option("tanh", "activation of the hidden layers", choices=["relu", "tanh"])
    eval_every: int = option(10, "iterations between evaluations against the baselines (0 = never)", minimum=0)
    eval_games: int = option(200, "4-player duplicate-deal games per evaluation opponent", minimum=1)
    eval_opponents: list[str] = option(
        ["cautious", "majority"], "baselines of the periodic evaluation (three copies each): agent specs"
    )
    checkpoint_every: int = option(10, "iterations between checkpoints (0 = only at the end)", minimum=0)
    export: str = option("", "also copy the final numpy policy here, e.g. my_policy.npz")
    resume: bool = option(False, "continue the run in the run directory from its last checkpoint")
    torch_threads: int = option(1, "torch CPU threads of the driver, where the learner runs", minimum=1)


RUN_SETTINGS = (
    "run_name", "run_dir", "address", "num_env_runners", "num_envs_per_env_runner", "iterations", "eval_every",
    "checkpoint_every", "export", "resume", "torch_threads",
)  # fmt: skip
"""What ``--resume`` may change; every other field is a hyperparameter of the run, fixed when it starts."""


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """Build the CLI from ``Args`` so defaults, flags and help never drift apart; refuse bad values."""
    return parse_run_args(Args, __doc__, checked_args, argv)


def checked_args(args: Args) -> Args:
    """The checks of a whole configuration: bounds, agent specs, outputs; a ``ValueError`` listing every problem."""
    problems = field_errors(Args, dataclasses.asdict(args))
    if args.minibatch_size > args.train_batch_size:
        problems.append(f"--minibatch-size {args.minibatch_size} exceeds --train-batch-size {args.train_batch_size}")
    if not args.run_name and not args.run_dir:
        problems.append("--run-name must not be empty (or give --run-dir)")
    deck = get_deck(args.deck)
    for spec in args.opponents:
        try:
            make_batched(opponent_source(spec), deck)
        except ValueError as error:
            problems.append(f"--opponents: {error}")
    if args.opponent_share > 0 and not args.opponents:
        problems.append("--opponent-share needs --opponents (or give --opponent-share 0)")
    problems += evaluation_opponent_errors(args.eval_opponents, deck)
    problems += output_errors([("--export", args.export, False), ("--run-dir", run_directory(args), True)])
    if problems:
        raise ValueError("; ".join(problems))
    return args


def run_directory(args: Args) -> Path:
    return Path(args.run_dir) if args.run_dir else Path("runs") / args.run_name


def opponent_source(spec: str) -> str | MLPPolicy:
    """What an opponent module is built from: an exported policy file is read here, on the driver, and travels
    to the runners as arrays (a cluster's nodes need not hold the file); other specs are built where they play."""
    return read_card_policy(spec) if Path(spec).is_file() else spec


# -- the environment: many tables per runner ----------------------------------------------------
def agent_id(seat: int, module: int = 0) -> int:
    """The agent at ``seat`` of a game, played by module number ``module`` (``module_name``).

    Integers, not text: RLlib keeps a game's agents in the order of a set of their IDs, and integers hash the
    same in every process while Python salts text hashes per process, which would make runs irreproducible."""
    return module * MAX_SEATS + seat


def module_name(index: int) -> str:
    """Module number ``index``: 0 is the learner, ``k`` the frozen opponent ``--opponents[k - 1]``."""
    return LEARNER if index == 0 else f"opponent{index - 1}"


def module_of(agent: Any, episode: Any = None, **kwargs: Any) -> str:
    """The policy mapping: the module an agent ID names (``config.multi_agent(policy_mapping_fn=...)``)."""
    return module_name(agent // MAX_SEATS)


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
    """``num_envs`` Friday the 13th tables as RLlib sub-environments, stepped together by one ``GameBatch``.

    Each sub-environment plays one game per episode: its observation dict holds the player to move only; its
    rewards hold every seat's reward of the play (the player who played included); the play that ends the
    game terminates every seat (``__all__``). As RLlib's vectoriser does (``autoreset_mode="next_step"``), the
    step after a game's end returns that table's next game, whose action is ignored. Seating is drawn for each
    new game: the learner at every seat, or (``opponent_share``) at one seat and opponent modules at the others.
    An exception part-way through ``step`` (after the engine played: an interrupt, say) leaves the tables refusing
    ``step`` until ``reset``; an action the engine refuses (nothing played) leaves them usable.
    """

    def __init__(self, config: dict[str, Any], num_envs: int) -> None:
        super().__init__()
        self.num_envs = num_envs
        self.players = list(config["players"])
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
        """Each table's module number per seat in its current game (``module_name``)."""
        self.restarting = np.zeros(num_envs, dtype=bool)
        """Tables whose game ended on the last step: this step starts their next one."""
        self.latch = FailureLatch("the tables may be left mid-turn, so their games cannot go on: call reset()")

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Deal a new game at every table (the deals and the seating re-seeded when ``seed`` is given)."""
        everyone = np.arange(self.num_envs)
        check_seed(seed)  # a bad seed is refused before anything changes
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
                self.batch.reset_games(everyone)
            self.seat_games(everyone)
            self.restarting[:] = False
            return self.observations(everyone), [{} for _ in range(self.num_envs)]

    def seat_games(self, tables: np.ndarray) -> None:
        """Draw who plays each seat of the new games at ``tables``."""
        assert self.batch is not None
        self.roles[tables] = 0
        pooled = tables[self.rng.random(tables.size) < self.opponent_share]
        if pooled.size:
            learner_seat = self.rng.integers(self.batch.num_players[pooled])
            drawn = self.rng.integers(1, self.num_modules, size=(pooled.size, MAX_SEATS))
            self.roles[pooled] = np.where(np.arange(MAX_SEATS) == learner_seat[:, None], 0, drawn)

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
        """Play the mover's action at every table whose game goes on; start the next game where one ended."""
        assert self.batch is not None
        self.latch.check()
        playing = np.flatnonzero(~self.restarting)
        chosen = np.empty(playing.size, dtype=np.int64)
        for row, table in enumerate(playing.tolist()):
            ((_, chosen[row]),) = actions[table].items()  # exactly the mover's action
        movers = self.batch.current[playing]
        names = self.names[self.roles[playing], np.arange(MAX_SEATS)]  # this game's IDs, before any re-seating
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
            rewards[table].setdefault(names[row, movers[row]], 0.0)  # same player leads the next round
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


# -- the modules -----------------------------------------------------------------------------------
class MaskedActorCritic(TorchRLModule, ValueFunctionAPI):
    """Actor and critic MLPs on the scaled observation; the actor's logits of illegal actions are masked out.

    ``model_config``: ``deck``, ``hidden_sizes``, ``activation``. The actor is an MLP of linear layers and
    activations only, the package's numpy policy format (``export_policy``).
    """

    scale: torch.Tensor
    """The package's input scale (``observation_scale``), a buffer: saved and synced with the weights."""

    def setup(self) -> None:
        config = cast(dict[str, Any], self.model_config)
        deck = get_deck(config["deck"])
        scale = observation_scale(deck.name)
        self.register_buffer("scale", torch.as_tensor(scale))
        hidden, activation = list(config["hidden_sizes"]), config["activation"]
        self.actor = TorchMLP(
            input_dim=scale.size,
            hidden_layer_dims=hidden,
            hidden_layer_activation=activation,
            output_dim=deck.num_actions,
        )
        self.critic = TorchMLP(
            input_dim=scale.size, hidden_layer_dims=hidden, hidden_layer_activation=activation, output_dim=1
        )
        layers = self.actor_layers()
        for layer in layers:  # as train_ppo.py starts its actor (CleanRL's initialisation)
            nn.init.orthogonal_(layer.weight, np.sqrt(2))
            nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(layers[-1].weight, 0.01)  # near-uniform first moves

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        logits = self.actor(observation["observation"] * self.scale)
        return {Columns.ACTION_DIST_INPUTS: logits.masked_fill(observation["action_mask"] == 0, FLOAT_MIN)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        return self.critic(batch[Columns.OBS]["observation"] * self.scale).squeeze(-1)

    def actor_layers(self) -> list[nn.Linear]:
        """The actor's linear layers, input to logits (activations between them: ``activation``)."""
        return [layer for layer in self.actor.modules() if isinstance(layer, nn.Linear)]


class BatchedAgentModule(RLModule):
    """A frozen opponent: a batched agent of the package (``model_config["agent"]``, a spec or an ``MLPPolicy``)
    answering for every table at once. Never trained (not in ``policies_to_train``)."""

    def setup(self) -> None:
        config = cast(dict[str, Any], self.model_config)
        self.agent = make_batched(config["agent"], get_deck(config["deck"]))
        self.rng = np.random.default_rng(config["seed"])

    def _forward_inference(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        observation = batch[Columns.OBS]
        masks = np.asarray(observation["action_mask"]).astype(bool)
        return {Columns.ACTIONS: self.agent.act_batch(np.asarray(observation["observation"]), masks, self.rng)}

    def _forward_exploration(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return self._forward_inference(batch, **kwargs)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        raise NotImplementedError(f"{self.agent.name} is a frozen opponent: it is not trained")


def module_specs(args: Args) -> dict[str, RLModuleSpec]:
    """The learner's spec and one frozen module per ``--opponents`` entry, for the tables of ``--players``."""
    space = observation_space(args.deck, args.players)
    actions: gym.Space = gym.spaces.Discrete(get_deck(args.deck).num_actions)
    network = {"deck": args.deck, "hidden_sizes": args.hidden_sizes, "activation": args.activation}
    specs = {LEARNER: RLModuleSpec(module_class=MaskedActorCritic, model_config=network)}
    for index, opponent in enumerate(args.opponents):
        agent = {"agent": opponent_source(opponent), "deck": args.deck, "seed": args.seed + index}
        specs[module_name(index + 1)] = RLModuleSpec(module_class=BatchedAgentModule, model_config=agent)
    for spec in specs.values():
        spec.observation_space, spec.action_space = space, actions
    return specs


def ppo_config(args: Args, seed: int) -> PPOConfig:
    """PPO on the new API stack, any environment: the modules, the mapping, the runners and the hyperparameters."""
    specs = module_specs(args)
    return (
        PPOConfig()
        .environment(disable_env_checking=True, normalize_actions=False)  # discrete actions: nothing to rescale
        .env_runners(
            num_env_runners=args.num_env_runners,
            num_envs_per_env_runner=args.num_envs_per_env_runner,
            num_cpus_per_env_runner=1,
        )
        .multi_agent(policies=list(specs), policy_mapping_fn=module_of, policies_to_train=[LEARNER])
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=specs))
        .training(
            train_batch_size_per_learner=args.train_batch_size,
            minibatch_size=args.minibatch_size,
            num_epochs=args.num_epochs,
            lr=args.learning_rate,
            gamma=args.gamma,
            lambda_=args.gae_lambda,
            clip_param=args.clip_coef,
            entropy_coeff=args.ent_coef,
            vf_loss_coeff=args.vf_coef,
            grad_clip=args.max_grad_norm,
            grad_clip_by="global_norm",
            use_kl_loss=False,
            vf_clip_param=float("inf"),
        )
        .debugging(seed=seed)
    )


def on_batched_tables(config: PPOConfig, args: Args) -> PPOConfig:
    """``config`` sampling from :class:`BatchedTables`: its runner, its connectors and the tables' options."""
    tables = {
        "players": args.players,
        "deck": args.deck,
        "reward": args.reward,
        "num_opponents": len(args.opponents),
        "opponent_share": args.opponent_share,
    }
    return config.environment(env_config=tables).env_runners(
        env_runner_cls=TablesEnvRunner,
        env_to_module_connector=lambda *_: TableObservations(),  # called with (env, spaces, device)
        add_default_connectors_to_env_to_module_pipeline=False,
        module_to_env_connector=lambda *_: [GetActions(), TableActions()],  # called with (env, spaces)
        add_default_connectors_to_module_to_env_pipeline=False,
    )


# -- evaluation, checkpoints, resume ---------------------------------------------------------------
def learner_module(algo: Algorithm) -> MaskedActorCritic:
    module = algo.get_module(LEARNER)
    assert isinstance(module, MaskedActorCritic)
    return module


def export_policy(module: MaskedActorCritic, args: Args, path: Path, progress: dict[str, Any]) -> Path:
    """The learner's actor written to ``path`` in the package's numpy format, atomically."""
    training = {
        "command": "python training/train_rllib.py",
        "args": dataclasses.asdict(args),
        **progress_summary(progress),
    }
    description = "self-play PPO on Ray RLlib (training/train_rllib.py)"
    metadata = policy_metadata(args.deck, args.activation, args.hidden_sizes, description, training)
    save_linear_layers(path, module.actor_layers(), module.scale.numpy(), metadata)
    return path


def progress_summary(progress: dict[str, Any]) -> dict[str, int]:
    return {"iterations": progress["iterations"], "timesteps": progress["timesteps"]}


def record_evaluation(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """Export the actor, then play the exported file: duplicate-deal win rates at 4 players against three copies
    of each baseline (the package's evaluation), added to the learning curve and printed."""
    agent = load_policy_agent(export_policy(learner_module(algo), args, run_dir / "policy.npz", progress), name=LEARNER)
    rates = evaluate_agent(agent, args.eval_opponents, args.eval_games, num_players=4, seed=EVAL_SEED, deck=args.deck)
    progress["curve"].append({"timesteps": progress["timesteps"], **{name: rate.mean for name, rate in rates.items()}})
    summary = ", ".join(f"{name} {rate}" for name, rate in rates.items())
    print(f"[eval @ {progress['timesteps']:,} steps] 4-player win rate vs 3 copies of: {summary}", flush=True)


def save_run(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """RLlib's checkpoint, the exported policy, then the progress record (never ahead of the files). The new
    checkpoint is written beside the old one and swapped in, so an interrupted save leaves the old one."""
    fresh, old = run_dir / "checkpoint.new", run_dir / "checkpoint.old"
    for leftover in (fresh, old):
        shutil.rmtree(leftover, ignore_errors=True)
    algo.save_to_path(str(fresh.resolve()))
    if (run_dir / "checkpoint").exists():
        (run_dir / "checkpoint").rename(old)
    fresh.rename(run_dir / "checkpoint")
    shutil.rmtree(old, ignore_errors=True)
    export_policy(learner_module(algo), args, run_dir / "policy.npz", progress)
    atomic_write_text(run_dir / "progress.json", json.dumps(progress, indent=1))


def resumed_args(args: Args, given: set[str], progress: dict[str, Any], run_dir: Path) -> Args:
    """The run's recorded arguments, with the run settings this command line gives; changed hyperparameters
    are refused, each one listed."""
    return resumed_run_args(Args, args, given, progress, run_dir, RUN_SETTINGS, checked_args)


def start_ray(address: str, num_env_runners: int) -> None:
    """Join the cluster at ``address``, or start a local Ray with a CPU for the driver (the learner) and one per
    runner. The classes of this file travel to the runners by value (Ray pickles a script's own classes so;
    imported, as by the tests and the benchmark, it is told to), so a cluster's nodes need only the package."""
    if __name__ != "__main__":
        ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    if address:
        ray.init(address=address)
    else:
        ray.init(num_cpus=num_env_runners + 1, include_dashboard=False)


# -- the run ---------------------------------------------------------------------------------------
def train(args: Args, given: set[str]) -> Path:
    """The run ``args`` describes; returns its directory."""
    run_dir = run_directory(args)
    fresh = {"args": dataclasses.asdict(args), "iterations": 0, "timesteps": 0, "curve": [], "seconds": 0.0}
    progress = open_run(run_dir, args.resume, fresh, checkpoint="checkpoint/rllib_checkpoint.json")
    if args.resume:
        args = resumed_args(args, given, progress, run_dir)
        progress["args"] = dataclasses.asdict(args)
    done = progress["iterations"]
    if done >= args.iterations:
        print(f"{run_dir} is finished: {done} iterations (raise --iterations to go on)", flush=True)
        export_copy(run_dir, args.export)
        return run_dir
    torch.set_num_threads(args.torch_threads)
    start_ray(args.address, args.num_env_runners)
    try:
        algo = build_algorithm(args, run_dir, done)
        run(algo, args, run_dir, progress)
        algo.stop()
    finally:
        ray.shutdown()
    export_copy(run_dir, args.export)
    return run_dir


def build_algorithm(args: Args, run_dir: Path, done: int) -> Algorithm:
    """The run's PPO on the batched tables, restored from the run's checkpoint with ``--resume``; it deals from
    a seed derived from the run's seed and the ``done`` iterations."""
    algo = on_batched_tables(ppo_config(args, seed=args.seed + done), args).build_algo()
    if args.resume:
        algo.restore_from_path(str((run_dir / "checkpoint").resolve()))
    return algo


def run(algo: Algorithm, args: Args, run_dir: Path, progress: dict[str, Any]) -> None:
    """Iterate to ``--iterations``, evaluating and checkpointing on the way and at the end."""
    started = time.perf_counter() - progress["seconds"]
    next_eval = next_multiple(progress["iterations"], args.eval_every)
    next_checkpoint = next_multiple(progress["iterations"], args.checkpoint_every)
    if progress["iterations"] == 0 and args.eval_every:
        record_evaluation(algo, args, run_dir, progress)
    while progress["iterations"] < args.iterations:
        tick = time.perf_counter()
        result = algo.train()
        progress["iterations"] += 1
        progress["timesteps"] += int(result["env_runners"]["num_env_steps_sampled"])
        stats = result["learners"][LEARNER]
        print(
            f"iteration {progress['iterations']}: {progress['timesteps']:,} card plays, "
            f"{time.perf_counter() - tick:.1f} s, policy loss {stats['policy_loss']:.4f}, "
            f"entropy {stats['entropy']:.3f}",
            flush=True,
        )
        last = progress["iterations"] >= args.iterations
        if progress["iterations"] >= next_eval or (last and args.eval_every):
            next_eval = next_multiple(progress["iterations"], args.eval_every)
            record_evaluation(algo, args, run_dir, progress)
        if progress["iterations"] >= next_checkpoint or last:
            next_checkpoint = next_multiple(progress["iterations"], args.checkpoint_every)
            progress["seconds"] = time.perf_counter() - started
            save_run(algo, args, run_dir, progress)
    seconds = time.perf_counter() - started
    print(f"done: {progress['timesteps']:,} card plays in {seconds:.0f} s; {run_dir}", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    """The command line: bad flags exit with argparse's usage message, run-directory problems with theirs."""
    run_main(Args, parse_args, train, argv)


if __name__ == "__main__":
    main()
