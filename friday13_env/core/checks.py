"""Argument checks shared by both games' environments: an allowed-value check, action coercion and the number checks
of records read back from files.

Each game keeps its own wording: the messages are templates (``str.format`` fields listed per
function), so one implementation serves every caller without changing what its errors say.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Collection
from typing import Any

import gymnasium
import numpy as np

MUST_BE_ONE_OF = "{name} must be one of {allowed}, got {value!r}"
"""Friday's wording of a refused choice."""
UNKNOWN_VALUE = "unknown {name} {value!r}; allowed values: {allowed}"
"""Friday the 13th's wording of a refused choice."""


def check_choice(name: str, value: object, allowed: Collection[Any], message: str = MUST_BE_ONE_OF) -> None:
    """A ``ValueError`` naming the allowed values unless ``value`` is one of them.

    Never a ``TypeError``, whatever ``value`` is: a value matches a choice only by identity (``None``),
    as a string equal to a string choice, or as an equal value of exactly the choice's type (so
    ``True`` is not ``1`` and lists never match). ``message`` has the fields ``name``, ``value`` and
    ``allowed`` (the choices sorted, ``None`` first).
    """
    if not any(_matches(value, choice) for choice in allowed):
        shown = sorted(allowed, key=lambda choice: (choice is not None, str(choice)))
        raise ValueError(message.format(name=name, value=value, allowed=shown))


def _matches(value: object, choice: object) -> bool:
    if value is choice:
        return True
    if isinstance(choice, str):
        return isinstance(value, str) and value == choice
    return type(value) is type(choice) and bool(value == choice)


def as_action(
    action: object,
    num_actions: int,
    type_message: str,
    range_message: str | None = None,
    *,
    legal: Callable[[], object] | None = None,
    error: type[ValueError] = ValueError,
    arrays: bool = True,
) -> int:
    """``action`` as an ``int``: a Python or numpy integer, or (``arrays``) a 0-d integer array.

    Anything else (floats, strings, bools even though Python counts them as ints, ``None``, arrays of other shapes or
    dtypes, a masked array, whose masked entry would be read as it is or fail in numpy) raises ``error`` with
    ``type_message``; with a ``range_message``, so does a number outside ``0..num_actions - 1``. The messages' fields:
    ``action`` (what was given; the integer for ``range_message``), ``type`` (its type's name), ``n``
    (``num_actions``), ``last`` (``num_actions - 1``) and ``legal`` (``legal()``, called only to build a message).
    """
    integer = isinstance(action, int | np.integer) and not isinstance(action, bool)
    scalar_array = (
        arrays
        and isinstance(action, np.ndarray)
        and not isinstance(action, np.ma.MaskedArray)  # (refused as ``exact_array`` refuses one)
        and action.shape == ()
        and action.dtype.kind in "iu"
    )
    if integer or scalar_array:
        value = int(action)  # type: ignore[call-overload]
    else:
        raise error(_format(type_message, action, num_actions, legal))
    if range_message is not None and not 0 <= value < num_actions:
        raise error(_format(range_message, value, num_actions, legal))
    return value


def _format(message: str, action: object, num_actions: int, legal: Callable[[], object] | None) -> str:
    return message.format(
        action=action,
        type=type(action).__name__,
        n=num_actions,
        last=num_actions - 1,
        legal=legal() if legal is not None else "",
    )


def counted(count: int, noun: str) -> str:
    """A count in a message: ``"1 table"``, ``"3 tables"``."""
    return f"{count} {noun}{'' if count == 1 else 's'}"


def finite_number(value: object) -> float | None:
    """``value`` as a finite float, or None (not a number, a bool, infinite, or an integer too large for a float,
    which ``math.isfinite`` would meet with an ``OverflowError``)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def is_duration(value: object) -> bool:
    """Whether ``value`` is a finite number of at least 0 (seconds, milliseconds)."""
    number = finite_number(value)
    return number is not None and number >= 0


HIDDEN_CATEGORIES = frozenset({"Cc", "Cf"})
"""The Unicode categories of characters that are never printed from a file: control characters (C0, DEL and C1: a
terminal acts on them, ``ESC [2J`` clears the screen, ``\x9b`` is an 8-bit ``ESC [``) and format characters
(bidirectional overrides, zero-width spaces and joiners: they reorder what follows, or make one label look like
another)."""


def plain_text(text: str, limit: int) -> bool:
    """Whether a table cell can show ``text``: 1 to ``limit`` characters, none that would break the page (``|``, a
    backtick) or that is never printed (``HIDDEN_CATEGORIES``)."""
    return 0 < len(text) <= limit and "|" not in text and "`" not in text and not has_control_character(text)


def has_control_character(text: str) -> bool:
    """Whether ``text`` holds a character of ``HIDDEN_CATEGORIES``: text read from a file that a command prints (a
    replay's seat labels) must not, or the file could drive the terminal or pass for another text."""
    return any(unicodedata.category(character) in HIDDEN_CATEGORIES for character in text)


def printable(text: str) -> str:
    """``text`` as a message may print it: as it is, or escaped (its ``repr``) if it holds a character of
    ``HIDDEN_CATEGORIES`` (a file's name from elsewhere)."""
    return repr(text) if has_control_character(text) else text


def no_render_mode() -> None:
    """What ``render()`` does in an environment made with ``render_mode=None``: nothing, with a warning, as
    Gymnasium's and PettingZoo's own environments do (so a loop that always calls ``render()`` runs on)."""
    gymnasium.logger.warn(
        "render() was called on an environment made with render_mode=None, so nothing is rendered; "
        "make it with render_mode='ansi', 'human' or 'rgb_array' to render"
    )


def check_rng(rng: object) -> None:
    """A ``ValueError`` unless ``rng`` is a ``numpy.random.Generator``: every random draw comes from the caller's
    seeded Generator, so a seed or a legacy ``RandomState`` is refused rather than failing in the middle of a move."""
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {type(rng).__name__}"
        )


def exact_array(values: object, what: str) -> np.ndarray:
    """``np.asarray(values)``, refusing what that conversion would hide, with a ``ValueError`` naming ``what`` (the
    caller's argument: ``"actions"``, ``"games"``): a masked array (its masked entries would be read as they are),
    and a bool among the integers of a list or tuple (``[True, 0]`` becomes the ints ``[1, 0]``, card 1). Other
    inputs (an array, a range) are read as they are; an array of bools keeps its dtype, which the caller's own check
    of the kind refuses. The batched API's one reading of actions, game indices and seats; a list costs one pass over
    its entries, an array nothing."""
    if isinstance(values, np.ma.MaskedArray):
        raise ValueError(f"{what} are a masked array: its masked entries would be read as they are; give a plain array")
    array = np.asarray(values)
    if isinstance(values, list | tuple) and array.dtype.kind in "iu" and array.size:
        entries = np.asarray(values, dtype=object).ravel().tolist()
        where = next((index for index, entry in enumerate(entries) if isinstance(entry, bool | np.bool_)), None)
        if where is not None:
            raise ValueError(
                f"{what} hold a bool (at index {where}): give integers; a bool is not read as the number 0 or 1"
            )
    return array
