"""The model zoo: trained policies shipped as package data under versioned names.

Each game keeps its zoo in its own ``zoo/`` folder: ``NAME.npz`` (the policy) beside ``NAME.md``
(its model card: what it is, the command that trained it, strength with its interval, cost per
move). A name ends in ``-vN``; a retrained policy gets a new version rather than replacing a file
that published results may cite.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path

ZOO_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*-v[0-9]+$")


@cache
def zoo_files(package: str) -> dict[str, Path]:
    """``{name: path of NAME.npz}`` for the zoo of ``package`` (e.g. ``"friday13_env.friday13"``)."""
    folder = resources.files(package) / "zoo"
    if not folder.is_dir():
        return {}
    found = {}
    for entry in folder.iterdir():
        name = entry.name.removesuffix(".npz")
        if entry.name.endswith(".npz") and ZOO_NAME.match(name):
            found[name] = Path(str(entry))
    return dict(sorted(found.items()))


def model_card(package: str, name: str) -> str:
    """The model card of a zoo policy, as Markdown text."""
    path = zoo_files(package).get(name)
    if path is None:
        raise ValueError(f"no zoo policy {name!r}; the zoo holds {sorted(zoo_files(package))}")
    return path.with_suffix(".md").read_text()
