"""A user's own agent, named ``module:factory``, plays a suite without being registered: from the working folder,
in spawn workers too; and a factory that raises, returns something else or plays an illegal move is refused
clearly, before any game where it can be."""

from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from friday13_env.benchmark import runner
from friday13_env.benchmark.fingerprints import behaviour_fingerprint
from friday13_env.benchmark.suite import get_suite
from friday13_env.core.agent import Observation
from friday13_env.core.specs import AgentSpec, parse_spec
from friday13_env.friday.agents import REGISTRY as SOLO_REGISTRY
from friday13_env.friday13.agents import REGISTRY
from tests.benchmark.helpers import SOLO_CELLS, small_suite, user_module

FRIDAY13 = Path(sys.executable).parent / "friday13"

MY_AGENTS = '''\
import numpy as np


class MyAgent:
    """The lowest legal action, always."""

    name = "my-agent"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])
'''

USER_AGENTS = '''\
import numpy as np

from friday13_env.friday13.agents import RandomAgent

moves = []


class Lowest:
    name = "lowest"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"])[0])


class Illegal:
    """Plays the first action its mask forbids, and counts its moves in ``moves``."""

    name = "illegal"

    def __init__(self, seed=None):
        self.seed = seed

    def act(self, observation):
        moves.append(self.seed)
        return int(np.flatnonzero(np.asarray(observation["action_mask"]) == 0)[0])


answered = []


class IllegalAfterProbes:
    """Plays legally at the fingerprint positions (its first 240 answers in this process: a factory is
    fingerprinted twice), then the first action its
    mask forbids; counts its moves in ``moves``."""

    name = "illegal-after-probes"

    def __init__(self, seed=None):
        self.seed = seed

    def act(self, observation):
        moves.append(self.seed)
        answered.append(self.seed)
        mask = np.asarray(observation["action_mask"])
        return int(np.flatnonzero(mask if len(answered) <= 240 else mask == 0)[0])


def seeded(seed):
    return RandomAgent(seed=seed)


def raising(seed=None):
    raise RuntimeError("no weights in this folder")


def not_an_agent(seed=None):
    return 42


NOT_CALLABLE = 7
'''


@pytest.fixture
def user_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module of user factories in a folder on ``sys.path``, forgotten afterwards; yields its name."""
    yield from user_module("bench_user_agents", USER_AGENTS, tmp_path, monkeypatch)


def test_the_command_benchmarks_an_unregistered_agent_from_the_working_folder(tmp_path: Path) -> None:
    """Done when: ``friday13 benchmark --agent my_agents:MyAgent --suite friday-levels --workers 2`` run in the
    folder holding ``my_agents.py`` writes a complete result of 4 levels x 100 games for that spec and agent."""
    pytest.importorskip("scipy")  # the command scores against the suite's references: the benchmark extra
    (tmp_path / "my_agents.py").write_text(MY_AGENTS)
    out = tmp_path / "results" / "my.json"
    command = [str(FRIDAY13), "benchmark", "--agent", "my_agents:MyAgent", "--suite", "friday-levels"]
    command += ["--workers", "2", "--no-progress", "--out", str(out)]
    done = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    assert not runner.partial_path(out).exists()
    result = json.loads(out.read_text())
    assert result["complete"] is True
    assert result["suite"]["id"] == "friday-levels-v2"
    assert result["suite"]["deals_sha256"] == get_suite("friday-levels").deals_sha256["test"]
    assert result["agent"]["spec"] == "my_agents:MyAgent"
    assert result["agent"]["checkpoint_sha256"] is None
    assert re.fullmatch(r"[0-9a-f]{16}", result["agent"]["fingerprint"])
    assert [(cell["name"], cell["deals"], cell["games"]) for cell in result["cells"]] == [
        (f"level-{level}", 100, 100) for level in (1, 2, 3, 4)
    ]
    assert [len(rows) for rows in result["rows"]] == [100] * 4
    assert all(row[0] in (0.0, 1.0) for rows in result["rows"] for row in rows)
    assert result["cost"]["decisions"] > 400
    assert result["provenance"]["workers"] == 2
    # the fingerprint is MyAgent's own: the module really was the one in the working folder
    sys.path.insert(0, str(tmp_path))
    try:
        my_agent = importlib.import_module("my_agents").MyAgent(seed=0)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("my_agents", None)
    assert result["agent"]["fingerprint"] == behaviour_fingerprint(my_agent, "friday")
    assert result["agent"]["fingerprint"] != get_suite("friday-levels").anchors["random"]


def test_a_factory_agent_plays_a_card_suite_in_process(user_agents: str) -> None:
    """``module:factory`` plays like the agent it returns: a factory of ``RandomAgent`` reproduces ``random``."""
    suite = small_suite(deals=2)
    mine = runner.run_benchmark(f"{user_agents}:seeded", suite, workers=1)
    builtin = runner.run_benchmark("random", suite, workers=1)
    assert mine["agent"]["spec"] == f"{user_agents}:seeded"
    assert mine["agent"]["fingerprint"] == builtin["agent"]["fingerprint"] == suite.anchors["random"]
    # in the 4p-vs-random cell the factory is not "random", so it is played, not scored as an equal seat
    assert builtin["cost"]["decisions"] < mine["cost"]["decisions"]
    assert mine["rows"][1] == builtin["rows"][1]
    lowest = runner.run_benchmark(f"{user_agents}:Lowest", suite, workers=1)  # no seed parameter: called bare
    assert lowest["agent"]["fingerprint"] != mine["agent"]["fingerprint"]


def test_a_factory_that_raises_is_refused_before_any_game(
    user_agents: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A factory raising is a ``ValueError`` naming the spec and the error; nothing is played or written."""

    def no_game(unit: object) -> None:
        raise AssertionError("a game was played")

    monkeypatch.setattr(runner, "play_unit", no_game)
    out = tmp_path / "out.json"
    with pytest.raises(ValueError, match=rf"agent factory '{user_agents}:raising' raised RuntimeError: no weights"):
        runner.run_benchmark(f"{user_agents}:raising", small_suite(), workers=1, out=out)
    assert not out.exists() and not runner.partial_path(out).exists()
    assert list(tmp_path.glob("out*")) == []


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("not_an_agent", r"returned a int; an agent needs a `name` and an `act\(observation\) -> int` method"),
        ("NOT_CALLABLE", r"is a int, not a class or function"),
        ("missing", r"cannot be loaded: .*missing"),
    ],
)
def test_a_factory_that_gives_no_agent_is_refused(user_agents: str, factory: str, message: str) -> None:
    """A result that is not an agent, an object that is not callable, or a missing name: a ``ValueError``."""
    with pytest.raises(ValueError, match=message):
        runner.prepare(f"{user_agents}:{factory}", small_suite(), workers=1)


def test_a_module_that_cannot_be_imported_is_refused() -> None:
    """An unimportable module is a ``ValueError`` naming the spec, in either game's registry."""
    for registry in (REGISTRY, SOLO_REGISTRY):
        with pytest.raises(ValueError, match=r"agent factory 'no_such_module_x1:Agent' cannot be loaded"):
            registry.make("no_such_module_x1:Agent", seed=0)


def test_an_illegal_move_fails_at_the_first_move(user_agents: str, tmp_path: Path) -> None:
    """An agent that answers the fingerprint positions illegally is refused by the checks, before any game; one that
    plays legally there gets through them and fails with the environment's ``ValueError`` at its first move of the
    first game, leaving no result."""
    out = tmp_path / "out.json"
    with pytest.raises(ValueError, match=r"agent 'illegal' chose action \d+ \(an integer it does not allow\)"):
        runner.prepare(f"{user_agents}:Illegal", small_suite(), workers=1, out=out)
    plan = runner.prepare(f"{user_agents}:IllegalAfterProbes", small_suite(), workers=1, out=out)
    moves = importlib.import_module(user_agents).moves
    moves.clear()  # the fingerprint asked it about the probe positions
    with pytest.raises(ValueError, match=r"legal actions"):
        runner.execute(plan)
    assert len(moves) == 1
    assert not out.exists() and not runner.partial_path(out).exists()


def test_an_illegal_move_fails_in_the_solo_game(user_agents: str) -> None:
    """The solo game refuses an illegal move too, naming it (``runner``'s promise: the environment's error), and
    the checks refuse an agent that answers the fingerprint positions illegally."""
    suite = small_suite(SOLO_CELLS, deals=2)
    with pytest.raises(ValueError, match=r"agent 'illegal' chose action \d+ \(an integer it does not allow\)"):
        runner.prepare(f"{user_agents}:Illegal", suite, workers=1)
    plan = runner.prepare(f"{user_agents}:IllegalAfterProbes", suite, workers=1)
    moves = importlib.import_module(user_agents).moves
    moves.clear()
    with pytest.raises(ValueError, match=r"illegal action"):
        runner.execute(plan)
    assert len(moves) == 1


def test_an_agent_object_needs_one_worker() -> None:
    """An agent object cannot travel to worker processes: refused with ``workers`` > 1, played with 1."""
    agent = LowestLegal()
    suite = small_suite(deals=1)
    with pytest.raises(ValueError, match=r"agent object 'lowest-legal' cannot be sent to worker processes"):
        runner.prepare(agent, suite, workers=2)
    with pytest.raises(ValueError, match=r"expected an agent spec or an agent object, got 42"):
        runner.prepare(42, suite, workers=1)  # type: ignore[arg-type]
    assert runner.run_benchmark(agent, suite, workers=1)["agent"]["spec"] == "lowest-legal"


def test_a_factory_spec_is_a_plain_name() -> None:
    """``pkg.mod:Factory`` is one name with no options, not ``pkg.mod`` with a broken option."""
    assert parse_spec("pkg.mod:Factory") == AgentSpec("pkg.mod:Factory")
    assert parse_spec(" my_agents:MyAgent ").label == "my_agents:MyAgent"
    assert parse_spec("search:budget=600") == AgentSpec("search", (("budget", 600),))


@pytest.mark.parametrize("spec", ["search:budget", "random:seed"])
def test_an_option_without_a_value_says_how_options_are_written(spec: str) -> None:
    """``search:budget`` looks like a factory but names a registered agent: the error shows ``key=value``."""
    with pytest.raises(ValueError, match=r"options are written key=value, e\.g\. search:budget=600"):
        REGISTRY.check(spec)
    with pytest.raises(ValueError, match=r"options are written key=value"):
        runner.prepare(spec, small_suite(), workers=1)
    with pytest.raises(ValueError, match=r"options are written key=value"):
        SOLO_REGISTRY.check(spec)


class LowestNamedRandom:
    """A user's agent object that plays the lowest legal action but happens to be called ``random``."""

    name = "random"

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


def test_an_agent_object_named_like_an_anchor_is_refused() -> None:
    """An agent object called like an anchor would be filed (and, against copies of it, skipped) as that anchor:
    it is refused before any game, naming the anchors."""
    with pytest.raises(ValueError, match=r"agent object 'random' has the name of an anchor.*give it another name"):
        runner.prepare(LowestNamedRandom(), small_suite(deals=2), workers=1)


class LowestLegal:
    """A user's agent object that plays the lowest legal action."""

    name = "lowest-legal"

    def act(self, observation: Observation) -> int:
        return int(np.flatnonzero(observation["action_mask"])[0])


class RandomLegal:
    """A user's agent object with its own generator and no ``reset(seed)`` hook."""

    name = "random-legal"

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def act(self, observation: Observation) -> int:
        return int(self.rng.choice(np.flatnonzero(observation["action_mask"])))


class ResettableRandomLegal(RandomLegal):
    def reset(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)


class StopAfter:
    """A progress callback that presses Ctrl-C once ``units`` units have finished."""

    def __init__(self, units: int) -> None:
        self.calls = 0
        self.units = units

    def __call__(self, done: int, total: int) -> None:
        self.calls += 1
        if self.calls > self.units:
            raise KeyboardInterrupt


def test_an_agent_object_with_reset_continues_an_interrupted_run_to_the_same_rows(tmp_path: Path) -> None:
    """An object with ``reset(seed)`` is re-seeded before every unit (and with 0 for its fingerprint): a run
    interrupted and continued by a fresh object in a new process gives the uninterrupted run's rows, whatever the
    object's state before. Without the hook, continuing a partial run is refused: its rows would depend on what
    the object played before."""
    suite = small_suite(deals=5)
    whole = runner.run_benchmark(ResettableRandomLegal(seed=7), suite, workers=1)
    out = tmp_path / "out.json"
    with pytest.raises(KeyboardInterrupt):
        runner.execute(runner.prepare(ResettableRandomLegal(seed=8), suite, workers=1, out=out), StopAfter(2))
    resumed = runner.run_benchmark(ResettableRandomLegal(seed=9), suite, workers=1, out=out)
    assert resumed["provenance"]["resumed_units"] == 2
    assert resumed["rows"] == whole["rows"] and resumed["agent"] == whole["agent"]
    with pytest.raises(KeyboardInterrupt):
        runner.execute(runner.prepare(RandomLegal(seed=8), suite, workers=1, out=out), StopAfter(2))
    with pytest.raises(ValueError, match=r"agent object 'random-legal' has no reset\(seed\) hook"):
        runner.prepare(RandomLegal(seed=8), suite, workers=1, out=out)
