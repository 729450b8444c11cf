"""Agent specs: the one text form that names an agent everywhere (``"search:budget=600"``).

A spec is a registered agent name, a model-zoo name or a checkpoint path, optionally followed by
options in ``name:key=value,key=value`` form. Values are read as int, float or ``true``/``false``
when they look like one, else kept as text. Specs rather than agent objects travel to worker
processes, so nothing unpicklable or stateful crosses a process boundary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

OptionValue = bool | int | float | str
SPEC_SYNTAX = (
    "an agent name, zoo name or checkpoint path, optionally with options as name:key=value,key=value "
    "(e.g. search:budget=600)"
)


@dataclass(frozen=True)
class AgentSpec:
    """A buildable agent: a name or checkpoint path, plus keyword options for the game's ``agents.make``."""

    name: str
    options: tuple[tuple[str, OptionValue], ...] = ()

    @property
    def label(self) -> str:
        """The canonical spec text; it names the agent in every table and file."""
        if not self.options:
            return self.name
        return f"{self.name}:" + ",".join(f"{key}={_format_value(value)}" for key, value in self.options)


def parse_spec(text: object) -> AgentSpec:
    """``"search:budget=200,greedy=true"`` -> ``AgentSpec("search", (("budget", 200), ("greedy", True)))``.

    An existing file path is taken whole, so a path containing ``:`` still works.
    """
    if isinstance(text, AgentSpec):
        return text
    if not isinstance(text, str):
        raise ValueError(f"an agent spec must be a string; expected {SPEC_SYNTAX}, got {text!r}")
    text = text.strip()
    if not text:
        raise ValueError(f"empty agent spec; expected {SPEC_SYNTAX}")
    if ":" not in text or Path(text).exists():
        return AgentSpec(text)
    name, _, option_text = text.partition(":")
    if not name:
        raise ValueError(f"agent spec {text!r} has no agent name before ':'; expected {SPEC_SYNTAX}")
    options: dict[str, OptionValue] = {}
    for item in option_text.split(","):
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or not key.isidentifier() or not value:
            raise ValueError(f"bad option {item!r} in agent spec {text!r}; expected {SPEC_SYNTAX}")
        if key in options:
            raise ValueError(f"option {key!r} is given twice in agent spec {text!r}")
        options[key] = _parse_value(value)
    return AgentSpec(name, tuple(options.items()))


def _parse_value(text: str) -> OptionValue:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            continue
    return text


def _format_value(value: OptionValue) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
