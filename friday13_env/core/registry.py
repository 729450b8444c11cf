"""Agents by name, RLCard-style, for either game: ``registry.make("search:budget=600", seed=0)``.

One ``Registry`` per game resolves every spec (:mod:`friday13_env.core.specs`) the same way:

1. a registered name (``"cautious"``), with options from the spec or keyword arguments;
2. a model-zoo name (``"ensemble-v1"``): a policy shipped with the package;
3. a checkpoint path (an existing file, or a name ending in ``.npz``);
4. a factory of the user's own, ``"module:factory"`` (``my_agents:MyAgent``), imported and called with
   ``seed=`` when it takes one: a user's agent plays every tool without being registered. An existing file of
   that name is a checkpoint (rule 3), never imported.

Every place that names an agent (Gymnasium opponents, evaluation tools, the play command, training
scripts) goes through ``make``, so they all accept exactly the same specs. Unknown names and options
are ``ValueError``s that list what is allowed, raised before any agent is built.

An agent may be registered with its *batched form* too, one object deciding for many games at once
(``register("cautious", CautiousAgent, batched=BatchedCautious)``): ``batched_factory(name)`` gives it to
the game's batched code, so one ``register`` call says everything a name stands for.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from friday13_env.core.agent import Agent, error_text
from friday13_env.core.specs import FACTORY, AgentSpec, OptionValue, is_existing_file, parse_spec, shown
from friday13_env.core.zoo import policy_path, zoo_files

AgentFactory = Callable[..., Agent]
BatchedFactory = Callable[..., Any]
"""``factory(table, **options)``: an agent's batched form, taking the agent's own options; ``table`` is what
the game's batched agents are built for (the card game passes its deck)."""
PolicyLoader = Callable[..., Agent]
"""``loader(path, seed=..., name=..., **options)``: a game's agent for a policy checkpoint."""


class UnknownOptionError(ValueError, TypeError):
    """An option the agent does not take: a ``ValueError`` like every bad input here, and a
    ``TypeError`` like any unexpected keyword argument in Python, so either ``except`` catches it."""


_KEYWORD = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
"""The kinds of parameter that a keyword argument (an option, ``seed=``) can fill."""


def constructor_options(factory: Callable[..., Any]) -> list[str]:
    """The keyword options an agent class or factory accepts (besides ``seed``), sorted."""
    parameters = inspect.signature(factory).parameters.values()
    return sorted(p.name for p in parameters if p.kind in _KEYWORD and p.name != "seed")


def option_defaults(factory: Callable[..., Any]) -> dict[str, object]:
    """The defaults of the keyword options ``factory`` accepts (besides ``seed``), as its signature gives them; an
    option without one is left out, and so is every option of a factory whose signature cannot be read."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return {}
    return {
        p.name: p.default
        for p in parameters
        if p.kind in _KEYWORD and p.name != "seed" and p.default is not inspect.Parameter.empty
    }


def as_default_type(value: OptionValue, default: object, own: bool) -> OptionValue:
    """``value`` as one of this package's own agents (``own``) reads it where its ``default`` is a float: an int (not
    a bool) is that float, as they read it (``options.number_option``'s ``float()``), so ``margin=1`` is
    ``margin=1.0``, and ``-0.0`` is ``0.0``: their float options are only compared (``margin < 1.0``, ``lead >
    margin``), where the two are one value. A user's agent is given what was typed, and may tell them apart
    (``range(lookahead)`` takes 3 and refuses 3.0; ``math.copysign`` tells -0.0 from 0.0), so its values are kept as
    they are. Any other value is as it is: a bool is no number to this package, and an int option is strict
    (``make`` refuses ``budget=22000.0``)."""
    if not own or not isinstance(default, float) or isinstance(value, bool) or not isinstance(value, int | float):
        return value
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range, in a spec built by hand: make refuses it
        return value
    return 0.0 if number == 0 else number


def is_default(value: OptionValue, default: object) -> bool:
    """Whether an option's ``value`` is its ``default``: the same type and the same text (``repr``), so neither
    ``True`` for ``1``, ``1`` for ``1.0`` nor ``-0.0`` for ``0.0``, which Python's ``==`` takes as equal but an
    agent may not."""
    return type(value) is type(default) and repr(value) == repr(default)


class Registry:
    """The agents of one game: registered factories and their batched forms, the zoo, and the checkpoint loader."""

    def __init__(self, game: str, zoo_package: str, load_policy: PolicyLoader) -> None:
        self.game = game
        self.zoo_package = zoo_package
        self._load_policy = load_policy
        self._factories: dict[str, AgentFactory | str] = {}
        self._batched: dict[str, BatchedFactory | str] = {}

    def register(self, name: str, factory: AgentFactory | str, batched: BatchedFactory | str | None = None) -> None:
        """Make ``factory(seed=..., **options)`` available as ``make(name)``, and ``batched``, the agent's batched
        form if it has one, as ``batched_factory(name)``.

        ``factory`` and ``batched`` may be given as entry points ``"package.module:name"``, imported on first use (as
        Gymnasium's entry points are): a game's batched code resolves specs through its registry, so the
        registry cannot import that code, nor an agent built on it, when it is built.

        Checked here, not at the first ``make``: the name, a ``factory`` that can be called (a class or a function;
        ``make`` calls it with ``seed=`` only if it takes one, as a ``"module:factory"`` spec), and ``batched``. An
        entry point's form is checked here, what it names at its first use: a module that does not import or an
        object that cannot be called is then a ``ValueError`` naming the agent.
        """
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"an agent name must be an identifier such as 'my_agent', got {name!r}")
        if name in self._factories or name in self.zoo():
            raise ValueError(f"an agent named {name!r} is already registered")
        if isinstance(factory, str) and not FACTORY.match(factory):
            raise ValueError(f"an agent's entry point must read 'package.module:name', got {factory!r}")
        if not isinstance(factory, str) and not callable(factory):
            raise ValueError(
                f"agent {name!r} needs a callable factory (a class or function) or an entry point "
                f"'package.module:name', got {shown(factory)}"
            )
        if isinstance(batched, str) and not FACTORY.match(batched):
            raise ValueError(f"a batched entry point must read 'package.module:name', got {batched!r}")
        if batched is not None and not isinstance(batched, str) and not callable(batched):
            raise ValueError(
                f"agent {name!r}: batched must be None, an entry point 'package.module:name' or a callable (a class "
                f"or function), got {shown(batched)}"
            )
        self._factories[name] = factory
        if batched is not None:
            self._batched[name] = batched

    def zoo(self) -> dict[str, Path]:
        """The game's shipped policies: ``{versioned name: checkpoint path}``."""
        return zoo_files(self.zoo_package)

    def names(self) -> list[str]:
        """Every name ``make`` accepts with no options: registered agents and zoo policies, sorted."""
        return sorted([*self._factories, *self.zoo()])

    def builds(self, name: str) -> bool:
        """Whether ``make`` reads ``name`` (a spec's name, options aside) as an agent it can build: a registered agent,
        a zoo policy, a ``module:factory`` or a checkpoint path (whether the file exists or not). A name that is none
        of these can only be an agent object's own. Nothing is imported or looked up on disk."""
        return name in self._factories or name in self.zoo() or bool(FACTORY.match(name)) or _looks_like_path(name)

    def batched_names(self) -> list[str]:
        """The registered agents that have a batched form, sorted (every zoo policy and checkpoint has one too)."""
        return sorted(self._batched)

    def batched_factory(self, name: str) -> BatchedFactory | None:
        """The batched form registered with agent ``name``; ``None`` for a name that is not registered (a zoo
        policy or a checkpoint path, which the game batches from its policy). A registered agent without one
        is a ``ValueError`` that lists what can be batched."""
        if name not in self._factories:
            return None
        batched = self._batched.get(name)
        if batched is None:
            raise ValueError(
                f"agent {name!r} has no batched version; batched agents: {self.batched_names()}, zoo policies "
                f"{sorted(self.zoo())}, checkpoint paths and MLPPolicy objects"
            )
        if isinstance(batched, str):
            batched = self._batched[name] = resolve_factory(batched, f"agent {name!r}'s batched form {batched!r}")
        return batched

    def _factory(self, name: str) -> AgentFactory:
        """The factory registered as ``name``, its entry point imported the first time it is asked for."""
        factory = self._factories[name]
        if isinstance(factory, str):
            factory = self._factories[name] = resolve_factory(factory, f"agent {name!r}'s entry point {factory!r}")
        return factory

    def options_of(self, name: str) -> list[str]:
        """The keyword options an agent accepts (besides ``seed``), sorted."""
        if name in self._factories:
            return constructor_options(self._factory(name))
        if name in self.zoo() or _is_path(name):
            return ["greedy"]
        if FACTORY.match(name):
            return []
        raise ValueError(f"unknown {self.game} agent {shown(name)}; known agents: {self.names()}")

    def canonical(self, spec: AgentSpec) -> AgentSpec:
        """``spec`` as results name its agent: its options sorted by name, for this package's own agents each value of
        an option with a float default read as that float (``as_default_type``: ``margin=1`` is ``margin=1.0``), and
        each option whose value is then the agent's own default (``is_default``: the same type and value) left out.
        ``search:objective=rank,budget=600`` and ``search:budget=600`` are one agent, and ``search:budget=22000`` (its
        default) is ``search``: one result file and one leaderboard row. ``AgentSpec.label`` keeps the options as
        typed, for the tables that show them so.

        The defaults are a registered factory's signature's (its entry point imported, as ``check`` imports it), and
        for a zoo policy or a name that can only be a checkpoint path (``.npz``, or a path separator) the ``greedy``
        default of the game's policy loader. Any other name (a ``module:factory``, which takes no options and is never
        imported here; an agent registered in another process; an agent object's name) has no defaults known here:
        its options are only sorted. Nothing is checked and no file is looked up, so a spec a result recorded reads
        the same in any working folder: an unknown option, or a registered entry point that does not load, is only
        sorted."""
        defaults, own = self._option_defaults(spec.name)
        kept = []
        for key, value in spec.options:
            if key in defaults:
                value = as_default_type(value, defaults[key], own)
                if is_default(value, defaults[key]):
                    continue
            kept.append((key, value))
        return AgentSpec(spec.name, tuple(sorted(kept, key=lambda option: option[0])))

    def checked_canonical(self, spec: str | AgentSpec) -> AgentSpec:
        """``check``, then ``canonical``: the spec as a new run records it and files its result under (the benchmark,
        ratings, a best response's target), so that every writer names one agent the same way."""
        return self.canonical(self.check(spec))

    def _option_defaults(self, name: str) -> tuple[dict[str, object], bool]:
        """The option defaults ``canonical`` leaves out for agent ``name``, and whether they are this package's own
        agent's (whose float options take ``-0.0`` as ``0.0``)."""
        if name in self._factories:
            try:
                factory = self._factory(name)
            except ValueError:  # an entry point that does not load: check and make say so, not a result's reader
                return {}, False
            return option_defaults(factory), _is_own(factory)
        if name in self.zoo() or _looks_like_path(name):  # the policy loader's; no file looked up
            greedy = option_defaults(self._load_policy).get("greedy")
            return ({} if greedy is None else {"greedy": greedy}), _is_own(self._load_policy)
        return {}, False

    def check(self, spec: str | AgentSpec) -> AgentSpec:
        """Parse a spec and check its name and option names without building anything."""
        parsed = parse_spec(spec)
        _check_option_names(parsed, dict(parsed.options), self._checked_options(parsed.name))
        return parsed

    def make(self, spec: str | os.PathLike[str] | AgentSpec, seed: int | None = None, **options: Any) -> Agent:
        """The agent a spec names; keyword ``options`` add to (and may not repeat) the spec's own. An ``os.PathLike``
        (a ``Path``) is always the checkpoint at that path, even one named like a registered agent or a zoo policy:
        ``load`` with its one option, ``greedy``."""
        if isinstance(spec, os.PathLike):
            file = checkpoint_path(spec)
            _check_option_names(AgentSpec(file), options, ["greedy"])
            return self.load(file, seed=seed, **options)
        parsed = parse_spec(spec)
        allowed = self._checked_options(parsed.name)
        _check_option_names(parsed, dict(parsed.options), allowed)
        check_seed(seed)
        merged = dict(parsed.options)
        repeated = sorted(set(merged) & set(options))
        if repeated:
            raise ValueError(f"option(s) {repeated} given both in the spec {parsed.label!r} and as arguments")
        merged.update(options)
        _check_option_names(parsed, options, allowed)
        if parsed.name in self._factories:  # called as a user's factory is: with seed= only if it takes one
            return agent_from_factory(self._factory(parsed.name), seed, repr(parsed.name), merged)
        if "greedy" in merged:
            merged["greedy"] = check_greedy(merged["greedy"])  # before a checkpoint is read
        path = self.zoo().get(parsed.name)
        if path is not None:
            return self._load_policy(path, seed=seed, name=parsed.name, **merged)
        if FACTORY.match(parsed.name) and not is_existing_file(parsed.name):
            return make_from_factory(parsed.name, seed)
        return self._load_policy(parsed.name, seed=seed, **merged)

    def _checked_options(self, name: str) -> list[str]:
        """``options_of(name)`` for a name ``make`` can build, else a ``ValueError``: an unknown name, or a
        checkpoint path with no file. Each test runs once, and a registered name costs no file-system call."""
        if name in self._factories:
            return constructor_options(self._factory(name))
        if name in self.zoo() or is_existing_file(name):
            return ["greedy"]
        if FACTORY.match(name):
            agent_name = name.partition(":")[0]
            if agent_name in self._factories or agent_name in self.zoo():
                raise ValueError(f"agent spec {shown(name)}: options are written key=value, e.g. search:budget=600")
            return []
        if _looks_like_path(name):
            raise ValueError(f"no policy checkpoint at {shown(name)} (known agents: {self.names()})")
        raise ValueError(
            f"unknown {self.game} agent {shown(name)}; known agents: {self.names()}, "
            "or the path of a .npz policy checkpoint"
        )

    def load(self, path: str | os.PathLike[str], seed: int | None = None, greedy: bool = True) -> Agent:
        """A trained agent from a checkpoint file (a str or any ``os.PathLike``); the arguments are checked before the
        file is read."""
        text = checkpoint_path(path)
        check_seed(seed)
        return self._load_policy(text, seed=seed, greedy=check_greedy(greedy))

    def policy_path(self, name: str | Path) -> Path:
        """The checkpoint a zoo name of this game or a path stands for (:func:`friday13_env.core.zoo.policy_path`)."""
        return policy_path(self.zoo_package, name)


def checkpoint_path(path: object) -> str:
    """The text of a checkpoint path given as a str or an ``os.PathLike`` (``os.fspath``); anything else, a bytes path
    included, is a ``ValueError`` before any file is read."""
    text = os.fspath(path) if isinstance(path, str | os.PathLike) else None
    if not isinstance(text, str):
        raise ValueError(f"a checkpoint path must be a str or a Path, got {shown(path)}")
    return text


def make_from_factory(entry_point: str, seed: int | None) -> Agent:
    """The agent that a user's factory ``"module:factory"`` returns: called with ``seed=`` if it takes one.

    The module is imported as Python finds it (the folder a script runs from, an installed package); an
    import that fails, a factory that raises, or a result that is not an agent is a ``ValueError`` naming the spec.
    """
    factory = resolve_factory(entry_point, f"agent factory {shown(entry_point)}")
    return agent_from_factory(factory, seed, shown(entry_point))


def resolve_factory(entry_point: str, label: str) -> Callable[..., Any]:
    """The class or function an entry point ``"package.module:name"`` names; an import that fails or an object that
    cannot be called is a ``ValueError`` naming ``label`` (what the entry point is for)."""
    try:
        factory = load_entry_point(entry_point)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"{label} cannot be loaded: {error}") from error
    if not callable(factory):
        raise ValueError(f"{label} is a {type(factory).__name__}, not a class or function")
    return factory


def agent_from_factory(
    factory: Callable[..., object], seed: int | None, label: str, options: Mapping[str, Any] | None = None
) -> Agent:
    """What a factory (a class or a function) returns, called with ``seed=`` if it takes one (``takes_seed``) and with
    the keyword ``options``: the one way a factory is called, whether a spec string names it, it is registered, or it
    is passed as an object. A factory that raises, or returns something that is not an agent, is a ``ValueError``
    naming it (``label``): a user's ``int("x")`` says which agent failed. Only this package's own agents' ``ValueError``
    (``"search option budget must be a positive int ..."``) is passed on as it is, since it names the agent and the
    option already."""
    keywords = dict(options or {})
    try:
        agent = factory(seed=seed, **keywords) if takes_seed(factory) else factory(**keywords)
    except (Exception, SystemExit) as error:  # a user's sys.exit too: a run must not end with status 0 and no result
        if isinstance(error, ValueError) and _is_own(factory):
            raise
        raise ValueError(f"agent factory {label} raised {error_text(error)}") from error
    if not isinstance(agent, Agent):
        raise ValueError(
            f"agent factory {label} returned a {type(agent).__name__}; an agent needs a `name` "
            "and an `act(observation) -> int` method"
        )
    return agent


def takes_seed(factory: Callable[..., object]) -> bool:
    """Whether ``factory`` takes ``seed=``: a parameter of that name, or ``**options`` (the documented
    ``factory(seed=..., **options)``). A factory without either (a class that takes no seed) is called without it;
    one whose signature cannot be read is called without it too."""
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind == inspect.Parameter.VAR_KEYWORD or (p.name == "seed" and p.kind in _KEYWORD) for p in parameters)


def _is_own(factory: Callable[..., object]) -> bool:
    """Whether ``factory`` is one of this package's agents (its module is under ``friday13_env``), whose errors name
    the agent themselves; any other factory is the user's."""
    module = getattr(factory, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] == __name__.partition(".")[0]


def load_entry_point(entry_point: str) -> Any:
    """The object an entry point ``"package.module:name"`` names, importing its module."""
    module, _, attribute = entry_point.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _looks_like_path(name: str) -> bool:
    """A name that can only be a checkpoint path (exists or not): a ``.npz`` name or one with a separator."""
    return name.endswith(".npz") or "/" in name or "\\" in name


def _is_path(name: str) -> bool:
    return _looks_like_path(name) or is_existing_file(name)


def _check_option_names(parsed: AgentSpec, names: Iterable[str], allowed: list[str]) -> None:
    """An ``UnknownOptionError`` listing ``allowed`` if any option name in ``names`` is not one of them."""
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        raise UnknownOptionError(f"agent {parsed.name!r} has no option(s) {unknown}; its options: {allowed}")


def check_greedy(greedy: object) -> bool:
    """A policy agent's ``greedy`` option as a ``bool``: True or False, a numpy bool included (as numpy ints count as
    ints wherever an int is taken), nothing that merely tests true (no int, not even 0 or 1)."""
    if not isinstance(greedy, bool | np.bool_):
        raise ValueError(f"greedy must be True or False, got {shown(greedy)}")
    return bool(greedy)


def check_seed(seed: object) -> None:
    """The one seed rule of every agent and batch of games: ``None`` (fresh entropy) or a non-negative int."""
    if seed is None or (isinstance(seed, int | np.integer) and not isinstance(seed, bool) and seed >= 0):
        return
    raise ValueError(f"seed must be None or a non-negative int, got {shown(seed)}")
