"""The one agent protocol of both games, and the checks every agent applies to what it is shown.

An agent sees exactly what a player sees: the environment's observation dict for its own seat,
``{"observation": float32 vector, "action_mask": int8 vector}``, and nothing else (no engine state,
no other hands). It returns a legal action as a plain ``int``. All randomness comes from the agent's
own seeded ``numpy`` Generator, so a seeded agent is reproducible and never touches global RNGs.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Protocol, runtime_checkable

import numpy as np

Observation = Mapping[str, np.ndarray]


@runtime_checkable
class Agent(Protocol):
    """Anything with ``act(observation) -> int`` and a ``name`` can play either game."""

    name: str

    def act(self, observation: Observation) -> int:
        """A legal action for the observation of the agent's own seat."""
        ...


class IllegalMoveError(ValueError):
    """An agent's move that the game refuses, raised by an evaluation or benchmark that names the agent (the card
    game's engine raises its own subclass, ``IllegalActionError``)."""


class AgentRaisedError(ValueError):
    """An exception an agent's own ``act`` raised (``sys.exit`` too), named with the agent by the benchmark, so that
    a user's agent that fails is a clear error, not a traceback from inside the game or a run that exits 0."""


def checked_act(agent: Agent, observation: Observation, where: str) -> int:
    """``agent.act(observation)`` as it returned it (its callers check it); anything it raises, an
    ``AgentRaisedError`` naming the agent, the exception and ``where`` it was asked. ``KeyboardInterrupt`` and the
    run's own stop signals (``signals.Interrupted``, one) go through as they are."""
    try:
        return agent.act(observation)
    except AgentRaisedError:  # an agent checked already (a ``CheckedAgent``): named once, where it was asked
        raise
    except (Exception, SystemExit) as error:
        raise AgentRaisedError(f"agent {agent_label(agent)} raised {error_text(error)} {where}") from error


def agent_label(agent: object) -> str:
    """How an error names an agent: its ``name`` quoted, or its type's name where it has no string ``name``."""
    name = getattr(agent, "name", None)
    return repr(name) if isinstance(name, str) else type(agent).__name__


def error_text(error: BaseException) -> str:
    """``"KeyError: 'x'"`` for an exception a user's code raised: its type and message (its type alone where it has
    none, or where even its message raises)."""
    try:
        message = str(error)
    except Exception:
        return f"{type(error).__name__} (whose message cannot be shown)"
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


class CheckedAgent:
    """``agent`` whose ``act`` is ``checked_act``'s, asked ``where``: what it raises is an ``AgentRaisedError``
    naming it (the tools that play a user's agent in games: the benchmark, the ratings)."""

    def __init__(self, agent: Agent, where: str = "in a game") -> None:
        self.agent = agent
        self.name = agent.name
        self.where = where

    def act(self, observation: Observation) -> int:
        return checked_act(self.agent, observation, self.where)


def check_reset_hook(agent: object) -> None:
    """A ``ValueError`` for an agent object whose ``reset`` attribute is not the ``reset(seed)`` hook that
    :func:`reseeded` calls (a per-episode ``reset()`` without a seed, say), so the tools refuse it before a game
    rather than failing with a ``TypeError`` at the first one."""
    reset = getattr(agent, "reset", None)
    if not callable(reset):
        return
    try:
        signature = inspect.signature(reset)
    except (TypeError, ValueError):  # no signature to read (a builtin): it is called as it is
        return
    try:
        signature.bind(0)
    except TypeError:
        raise ValueError(
            f"agent {getattr(agent, 'name', agent)!r} has reset{signature}; the environments and evaluations call an "
            "agent object's reset(seed) to re-seed it before each episode or unit of games: give it a seed "
            "parameter, or rename the method"
        ) from None


def reseeded(agent: object, seed: int | None) -> bool:
    """Re-seed an agent object in place through its optional ``reset(seed)`` hook (as building it anew with ``seed``
    would); whether it has one. The evaluations call it before each unit of games, so that an object's play does not
    depend on what it played before. A ``reset`` that takes no seed is refused (:func:`check_reset_hook`); what the
    hook raises is an ``AgentRaisedError`` naming the agent, as what its ``act`` raises is (:func:`checked_act`)."""
    reset = getattr(agent, "reset", None)
    if not callable(reset):
        return False
    check_reset_hook(agent)
    try:
        reset(seed)
    except (Exception, SystemExit) as error:
        raise AgentRaisedError(
            f"agent {agent_label(agent)} raised {error_text(error)} in its reset(seed={seed})"
        ) from error
    return True


def observation_arrays(observation: object, agent: str = "agent") -> tuple[np.ndarray, np.ndarray]:
    """The observation vector and the action mask of an observation dict, or a ``ValueError`` saying what is
    missing: anything but a mapping with both entries (an array, a list, ``None``) is refused here."""
    if not isinstance(observation, Mapping):
        raise ValueError(
            f"{agent}: an agent needs the observation dict {{'observation': vector, 'action_mask': mask}}, "
            f"got {type(observation).__name__}"
        )
    missing = [key for key in ("observation", "action_mask") if key not in observation]
    if missing:
        keys = sorted(str(key) for key in observation)
        raise ValueError(
            f"{agent}: the observation dict has no {' and no '.join(map(repr, missing))} entry (its keys: {keys}); "
            "an agent needs {'observation': vector, 'action_mask': mask}"
        )
    return np.asarray(observation["observation"]), np.asarray(observation["action_mask"])


def legal_actions(observation: Observation, agent: str = "agent") -> np.ndarray:
    """The legal actions of an observation, ascending; an error if there are none, or if the mask holds anything but
    0 and 1 (``check_mask_values``)."""
    if not isinstance(observation, Mapping) or "action_mask" not in observation:
        observation_arrays(observation, agent)  # raises, naming what is missing
    return _legal(np.asarray(observation["action_mask"]), agent)


def checked_observation(
    observation: Observation, size: int, num_actions: int, agent: str = "agent", nonnegative: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """The observation vector and the legal actions, after checking both have the expected shape and values.

    Not a dict, a missing entry, a wrong length, a NaN, a non-numeric array, a mask entry other than 0 and 1, an empty
    mask, or (with ``nonnegative``) a negative entry is a ``ValueError`` that names the agent and the problem, before
    any work.
    """
    vector, mask = observation_arrays(observation, agent)
    if vector.shape != (size,):
        raise ValueError(f"{agent}: expected an observation vector of shape ({size},), got {vector.shape}")
    if mask.shape != (num_actions,):
        raise ValueError(f"{agent}: expected an action mask of shape ({num_actions},), got {mask.shape}")
    check_observation_values(vector, agent, nonnegative)
    return vector, _legal(mask, agent)


def check_observation_values(values: np.ndarray, agent: str, nonnegative: bool = False) -> None:
    """A ``ValueError`` naming the agent unless ``values`` (one observation vector, or a batch of them: any shape) are
    numbers, all finite, and (with ``nonnegative``) none below 0. Shared by the scalar agents' ``checked_observation``
    and the batched agents' check, so both refuse the same observations with the same words."""
    if values.dtype.kind not in _NUMERIC:
        raise ValueError(f"{agent}: the observation vector holds non-numeric values (dtype {values.dtype})")
    # One pass decides a float vector that may be negative (isfinite is twice as fast as min and max).
    if values.dtype.kind == "f" and not nonnegative:
        if not np.isfinite(values).all():
            raise ValueError(f"{agent}: the observation vector holds non-finite values (NaN or inf)")
    elif values.size:
        low, high = values.min(), values.max()  # a NaN fails both comparisons
        if not (low >= (0 if nonnegative else -np.inf) and high < np.inf):
            if not np.all(np.isfinite(values)):
                raise ValueError(f"{agent}: the observation vector holds non-finite values (NaN or inf)")
            raise ValueError(f"{agent}: the observation vector holds negative values; this game's never does")


def check_mask_values(mask: np.ndarray, agent: str) -> None:
    """A ``ValueError`` naming the agent unless the action mask ``mask`` (one mask, or a batch of them: any shape)
    holds only 0 and 1 (any numeric dtype, or booleans). Nothing else is read as legal or illegal: a 0.5, a -1 or a 2
    is a caller's mistake (a probability, a sentinel), not a legal action."""
    kind = mask.dtype.kind
    if kind not in _NUMERIC:
        raise ValueError(f"{agent}: the action mask holds non-numeric values (dtype {mask.dtype})")
    if kind == "b":
        return
    # Every scalar move pays this on an agent's small mask, where each numpy call's overhead is what counts.
    # int8 or uint8 (the environments' masks): one pass over the bytes. Any other dtype: every non-zero entry is 1
    # when as many entries equal 1 as are non-zero (a NaN is non-zero and not 1): one comparison and a count, where
    # two comparisons, an `|` and `.all()` cost three times as much.
    if mask.dtype.itemsize == 1:
        binary = not mask.tobytes().translate(None, b"\x00\x01")
    else:
        binary = np.count_nonzero(mask == 1) == np.count_nonzero(mask)
    if not binary:
        outside = mask[(mask != 0) & (mask != 1)][0].item()
        raise ValueError(
            f"{agent}: the action mask holds values other than 0 and 1 (e.g. {outside!r}); "
            "a mask marks each action 1 (legal) or 0 (illegal)"
        )


_NUMERIC = "biuf"
"""dtype kinds of an observation or a mask: booleans, integers and floats."""


def _legal(mask: np.ndarray, agent: str) -> np.ndarray:
    """The legal actions of one mask after ``check_mask_values``; none is a ``ValueError`` naming the agent."""
    check_mask_values(mask, agent)
    legal = mask.nonzero()[0]  # np.flatnonzero, several times faster on a small mask
    if legal.size == 0:
        raise ValueError(f"{agent}: the observation has no legal action: this agent is not the one to move")
    return legal
