"""Command lines built from dataclasses, shared by the training and distillation scripts.

A script declares its hyperparameters once, as a dataclass whose fields carry their help text
(``option(default, help)``); ``dataclass_parser`` turns that into an argparse parser, so defaults,
flags and ``--help`` can never drift apart (the CleanRL convention, without extra dependencies).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import typing
from pathlib import Path
from typing import Any


def option(default: Any, help: str, allow_empty: bool = False) -> Any:
    """A dataclass field that carries its ``--help`` text (lists get a fresh copy per instance).

    A list flag needs at least one value unless ``allow_empty`` (then the bare flag means ``[]``).
    """
    if isinstance(default, list):
        metadata = {"help": help, "allow_empty": allow_empty}
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)
    return dataclasses.field(default=default, metadata={"help": help})


def dataclass_parser(cls: type, description: str | None) -> argparse.ArgumentParser:
    """One ``--flag`` per field of ``cls``: booleans get ``--x/--no-x``, lists take several values."""
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    hints = typing.get_type_hints(cls)
    for spec in dataclasses.fields(cls):
        default = spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default
        flag = "--" + spec.name.replace("_", "-")
        shown = " ".join(map(str, default)) if isinstance(default, list) else repr(default)
        help_text = f"{spec.metadata['help']} (default: {shown})"
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, default=default, help=help_text)
        elif isinstance(default, list):
            (item_type,) = typing.get_args(hints[spec.name])  # from the annotation: a default may be empty
            nargs = "*" if spec.metadata["allow_empty"] else "+"
            parser.add_argument(flag, nargs=nargs, type=item_type, default=default, help=help_text)
        else:
            parser.add_argument(flag, type=type(default), default=default, help=help_text)
    return parser


def atomic_write_text(path: Path, text: str) -> None:
    """Write through a temporary file and a rename, so a crash never leaves half a file."""
    temporary = path.with_suffix(path.suffix + ".tmp")
    temporary.write_text(text)
    os.replace(temporary, path)


def repository_path(name: str, repository: Path) -> Path:
    """``name`` as given if it exists there (or is absolute), else the same path under ``repository`` if that
    exists: so that a script's default pointing at a shipped checkpoint works from any directory."""
    path = Path(name)
    if not path.is_absolute() and not path.exists() and (repository / path).exists():
        return repository / path
    return path
