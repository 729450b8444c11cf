"""Agent specs: the one text form that names an agent everywhere (``"search:budget=600"``).

A spec is a registered agent name, a model-zoo name or a checkpoint path, optionally followed by
options in ``name:key=value,key=value`` form. Values are read as int (ASCII digits, at most ``MAX_DIGITS``),
float (ASCII decimal notation) or ``true``/``false`` when they look like one, else kept as text. Specs rather
than agent objects travel to worker processes, so nothing unpicklable or stateful crosses a process boundary.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from friday13_env.core.agent import Agent
from friday13_env.core.checks import plain_text, printable

OptionValue = bool | int | float | str
SHOWN_CHARACTERS = 60
"""Longer names are cut in messages: an error must stay readable whatever was typed."""
MAX_DIGITS = 20
"""The longest number a command-line option takes; longer ones are refused before ``int()`` sees them."""
SPEC_SYNTAX = (
    "an agent name, zoo name or checkpoint path, optionally with options as name:key=value,key=value "
    "(e.g. search:budget=600), or a factory of your own as module:factory (e.g. my_agents:MyAgent)"
)
FACTORY = re.compile(r"^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
"""``package.module:name``: an importable object, the spec of a user's agent factory or a batched entry point."""
_INTEGER = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


@dataclass(frozen=True)
class AgentSpec:
    """A buildable agent: a name or checkpoint path, plus keyword options for the game's ``agents.make``."""

    name: str
    options: tuple[tuple[str, OptionValue], ...] = ()

    def __post_init__(self) -> None:
        """A spec built by hand holds what ``parse_spec`` would make: a name, and options as a tuple of
        ``(identifier, value)`` pairs with each key once and values of ``OptionValue``'s types."""
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"an agent spec's name must be a non-empty string, got {shown(self.name)}")
        if not isinstance(self.options, tuple) or not all(
            isinstance(option, tuple)
            and len(option) == 2
            and isinstance(option[0], str)
            and option[0].isidentifier()
            and isinstance(option[1], bool | int | float | str)
            for option in self.options
        ):
            raise ValueError(
                f"agent spec {shown(self.name)}: options must be a tuple of (name, value) pairs, each value a "
                f"bool, int, float or str, got {shown(self.options)}"
            )
        keys = [key for key, _ in self.options]
        repeated = sorted({key for key in keys if keys.count(key) > 1})
        if repeated:
            raise ValueError(f"agent spec {shown(self.name)}: option(s) {repeated} given more than once")

    @property
    def label(self) -> str:
        """The canonical spec text; it names the agent in every table and file."""
        if not self.options:
            return self.name
        return f"{self.name}:" + ",".join(f"{key}={_format_value(value)}" for key, value in self.options)


Entrant = AgentSpec | Agent
"""One participant of a table or a benchmark: a spec (buildable in any process) or an agent object (in-process only)."""


def working_folder_importable() -> None:
    """Let a ``module:factory`` spec name a module in the working folder, as under ``python -m``. A script's own
    ``sys.path`` starts at the script's folder (a console script's at its ``bin``), so the training scripts and the
    ``friday13`` command call this first. The folder joins last: a module installed under the same name still wins,
    so a file there called ``tqdm.py`` is never what ``import tqdm`` loads."""
    folder = os.getcwd()
    if "" not in sys.path and folder not in sys.path:
        sys.path.append(folder)


def entrant_label(entrant: Entrant) -> str:
    """How results name an entrant: a spec's canonical text, or an agent object's ``name``."""
    return entrant.label if isinstance(entrant, AgentSpec) else entrant.name


def parse_spec(text: object, *, files: bool = True) -> AgentSpec:
    """``"search:budget=200,greedy=true"`` -> ``AgentSpec("search", (("budget", 200), ("greedy", True)))``.

    An existing file path is taken whole, so a path containing ``:`` still works. With ``files=False`` no file is
    looked up: the text is read as written, the same in every working folder (a recorded spec checked elsewhere).
    """
    if isinstance(text, AgentSpec):
        return text
    if not isinstance(text, str):
        raise ValueError(f"an agent spec must be a string; expected {SPEC_SYNTAX}, got {shown(text)}")
    text = text.strip()
    if not text:
        raise ValueError(f"empty agent spec; expected {SPEC_SYNTAX}")
    if ":" not in text or FACTORY.match(text) or (files and is_existing_file(text)):
        return AgentSpec(text)
    name, _, option_text = text.partition(":")
    if not name:
        raise ValueError(f"agent spec {shown(text)} has no agent name before ':'; expected {SPEC_SYNTAX}")
    options: dict[str, OptionValue] = {}
    for item in option_text.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key.isidentifier() or not value:
            raise ValueError(f"bad option {shown(item)} in agent spec {shown(text)}; expected {SPEC_SYNTAX}")
        if key in options:
            raise ValueError(f"option {key!r} is given twice in agent spec {shown(text)}")
        options[key] = _parse_value(key, value)
    return AgentSpec(name, tuple(options.items()))


def _parse_value(key: str, text: str) -> OptionValue:
    """An option's value: ``true``/``false``, an int, a float, or else the text itself. Only ASCII digits make a
    number (``int()`` also reads ``1_6`` and other scripts' digits), and at most ``MAX_DIGITS`` of them."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    integer = _INTEGER.fullmatch(text) is not None
    if integer or _FLOAT.fullmatch(text):
        digits = _digits(text, integer)
        if digits > MAX_DIGITS:
            raise ValueError(f"option {key!r}: a number of at most {MAX_DIGITS} digits, got {digits} digits")
        number = int(text) if integer else float(text)
        if math.isinf(number):
            raise ValueError(f"option {key!r}: {shown(text)} is beyond the range of a float")
        return number
    return text


def _digits(text: str, integer: bool) -> int:
    """The digits of a number's text that count toward ``MAX_DIGITS``: all of an int's; a float's significant digits
    (its leading zeros left out) and its exponent's, so that every float Python prints (at most 17 significant digits,
    ``0.00012345678901234567`` included) reads back."""
    if integer:
        return sum(character.isdigit() for character in text)
    mantissa, _, exponent = text.lower().partition("e")
    significant = mantissa.lstrip("+-").replace(".", "").lstrip("0")
    return len(significant) + len(exponent.lstrip("+-"))


def _format_value(value: OptionValue) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


MAX_SPEC_TEXT = 200
"""The most characters of a spec that a result, a ratings file or an exploitability table may name an agent by."""


def recorded_spec(text: str) -> AgentSpec:
    """``text`` read as a run records a spec: parsed (``parse_spec``, without looking at files), or, where it reads as
    no options (``checkpoints/mypol:best.npz``), a checkpoint path taken whole, stripped."""
    try:
        return parse_spec(text, files=False)
    except ValueError:
        return AgentSpec(text.strip())


def spec_problem(target: str) -> str | None:
    """Why a page could not name ``target`` as an agent, or None: too long, a character that would break the page,
    or no agent spec as a run records one (``parse_spec``'s canonical ``label``: ``search:budget=016`` is recorded
    ``search:budget=16``). The pages print a spec in a command to copy (``friday13 benchmark --agent SPEC``), so a
    file's text that is no spec is refused, not shown. The answer does not depend on the files of the working folder
    (a result is read where its checkpoint is not): text that reads as no options (``checkpoints/mypol:best.npz``)
    is a checkpoint path a run took whole, as it records an existing file whatever its name."""
    if not plain_text(target, MAX_SPEC_TEXT) or not target.strip():
        return (
            f"{target!r:.100} must be 1-{MAX_SPEC_TEXT} characters without | ` or control characters, not only spaces"
        )
    label = recorded_spec(target).label
    if label != target:
        return f"{target!r:.100} is no agent spec as a run records it ({label!r:.100} is)"
    return None


def shown(value: object, limit: int = SHOWN_CHARACTERS) -> str:
    """``repr(value)`` for a message, cut after ``limit`` characters with the full length noted."""
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f"{len(value)} characters" if isinstance(value, str) else f"{len(text)} characters as text"
    return f"{text[:limit]}... ({size})"


def markdown_cell(text: str) -> str:
    """``text`` as one cell of a Markdown table: each ``|`` escaped as ``\\|``, and the whole text shown as
    ``checks.printable`` shows it (its ``repr``) where it holds a line break or another character never printed from a
    file (``checks.HIDDEN_CATEGORIES``: ESC, a bidirectional override). Agent labels are typed by users or come from
    file names (a checkpoint path may hold a ``|``, a newline or an escape sequence): an unescaped ``|`` would end the
    cell and shift the row's columns, a line break would split the row in two, and an escape sequence would reach the
    terminal of whoever shows the file."""
    shown_text = repr(text) if any(character in LINE_SEPARATORS for character in text) else printable(text)
    return shown_text.replace("|", "\\|")


LINE_SEPARATORS = frozenset("\u2028\u2029")
"""The Unicode line and paragraph separators: not control characters (``checks.HIDDEN_CATEGORIES``), but
``str.splitlines`` and some viewers break a line there."""


def first_repeat(keys: Sequence[Hashable]) -> tuple[int, int] | None:
    """``(index, first)`` of the first key that ``keys`` holds twice: where it comes again and where it came first;
    ``None`` when each key is there once. The commands refuse a list that names one thing twice (a table size, a
    level, an agent): it would play the same games again under one name, not measure anything more."""
    first_of: dict[Hashable, int] = {}
    for index, key in enumerate(keys):
        first = first_of.setdefault(key, index)
        if first != index:
            return index, first
    return None


def repeated_agent(texts: Sequence[str], specs: Sequence[AgentSpec]) -> str | None:
    """Why a flag's agents (``texts``, as typed, and the ``specs`` they parse to) name one agent twice, or None: two
    texts of one label (``search:budget=016`` and ``search:budget=16``, or one text typed twice) are one agent, whose
    two rows or matchups would share one name. The caller names its flag."""
    repeat = first_repeat([spec.label for spec in specs])
    if repeat is None:
        return None
    index, first = repeat
    return f"{shown(texts[index])} and {shown(texts[first])} are one agent ({specs[index].label}): it is listed twice"


def overwritten_checkpoint(
    specs: Iterable[str | None], outputs: Iterable[str | Path], zoo: Mapping[str, Path]
) -> str | None:
    """Why an output would overwrite a checkpoint that an agent played here reads, or None: an output path that
    resolves to the file a spec names (the spec itself, or its name before any options: ``pol.npz:greedy=false``) or
    that one of its text options names (``endgame:policy=mine.npz``), or to the file of the ``zoo`` policy that such a
    name stands for (``ppo-v4``, ``endgame:policy=ensemble-v1``). Checked before any game; ``None`` specs are
    skipped, and a spec that does not parse is checked as a whole (its flag's own check blames it)."""
    targets = {Path(path).resolve() for path in outputs}
    for spec in specs:
        if spec is None:
            continue
        try:
            parsed = parse_spec(spec)
        except ValueError:
            parsed = None
        names = {spec} if parsed is None else {spec, parsed.name}
        options = {} if parsed is None else {key: value for key, value in parsed.options if isinstance(value, str)}
        if _files_named(names, zoo) & targets:
            return f"{spec} is an agent evaluated here and an output it would overwrite; write elsewhere"
        for key, value in options.items():
            if _files_named({value}, zoo) & targets:
                return (
                    f"{spec} is an agent evaluated here and an output it would overwrite (its option {key} names "
                    "that file); write elsewhere"
                )
    return None


def _files_named(names: Iterable[str], zoo: Mapping[str, Path]) -> set[Path]:
    """The files that ``names`` stand for, resolved: existing files, and the files of the ``zoo`` names among them."""
    files = {Path(name).resolve() for name in names if is_existing_file(name)}
    return files | {Path(zoo[name]).resolve() for name in names if name in zoo}


def is_existing_file(text: str | Path) -> bool:
    """Whether ``text`` names an existing file; ``False`` for what cannot be a path at all (too long for the file
    system, a NUL byte), instead of an ``OSError``."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


# -- numbers typed on a command line ------------------------------------------------------------------
# ``argparse`` types: a bad value is an error that names the option ("argument --seed: must be a
# non-negative integer, got '-1'"), and a 5,000-digit number never reaches ``int()``, whose own error
# talks about Python's internals.


def path_argument(text: str) -> Path:
    """A file or folder to write or read: any text but an empty one, which ``Path`` would read as the current folder
    (``--replays ""`` would fill it with replay files, ``--json ""`` would be refused as "." being a folder)."""
    if not text:
        raise argparse.ArgumentTypeError("an empty path names no file or folder; give a path")
    return Path(text)


def integer_argument(text: str) -> int:
    """Any integer of at most ``MAX_DIGITS`` digits."""
    text = text.strip()
    digits = text.lstrip("+-")
    if len(digits) > MAX_DIGITS:
        raise argparse.ArgumentTypeError(
            f"must be an integer of at most {MAX_DIGITS} digits, got {len(text)} characters"
        )
    if not re.fullmatch(r"[-+]?[0-9]+", text):
        raise argparse.ArgumentTypeError(f"invalid int value: {shown(text)}")
    return int(text)


def non_negative_argument(text: str) -> int:
    """An integer >= 0, such as a seed."""
    return _at_least(text, 0, "a non-negative integer")


def positive_argument(text: str) -> int:
    """An integer >= 1, such as a count."""
    return _at_least(text, 1, "a positive integer")


def positive_at_most(high: int) -> Callable[[str], int]:
    """A positive integer (``positive_argument``, whose words a bad one gets) of at most ``high``, such as a number of
    games: a run no machine could finish is refused before it starts."""

    def positive_count(text: str) -> int:
        value = positive_argument(text)
        if value > high:
            raise argparse.ArgumentTypeError(f"must be a positive integer of at most {high:,}, got {value}")
        return value

    positive_count.__name__ = f"positive integer of at most {high:,}"  # argparse names the type in some messages
    return positive_count


def range_argument(low: int, high: int) -> Callable[[str], int]:
    """An integer in ``low..high``, such as a number of rounds (argparse's ``choices`` would list every value)."""

    def in_range(text: str) -> int:
        return _at_least(text, low, f"an integer in {low}..{high}", high)

    in_range.__name__ = f"integer in {low}..{high}"  # argparse names the type in some messages
    return in_range


def _at_least(text: str, low: int, wanted: str, high: int | None = None) -> int:
    if len(text.strip().lstrip("+-")) > MAX_DIGITS:
        return integer_argument(text)  # raises the length error
    try:
        value = integer_argument(text)
    except argparse.ArgumentTypeError:
        value = low - 1
    if value < low or (high is not None and value > high):
        raise argparse.ArgumentTypeError(f"must be {wanted}, got {shown(text.strip())}")
    return value
