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

from friday13_env.core.checks import printable
from friday13_env.core.specs import is_existing_file, shown

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


def zoo_folders() -> list[Path]:
    """The installed package's ``zoo/`` folders: ``friday13_env/<game>/zoo`` of every game package that has one."""
    package = Path(str(resources.files("friday13_env")))
    return sorted(folder for folder in package.glob("*/zoo") if folder.is_dir())


def zoo_output_problem(flag: str, path: str | Path) -> str | None:
    """``zoo_write_problem`` for the output file of ``flag``, the flag and the path named."""
    problem = zoo_write_problem(path)
    return None if problem is None else f"{flag} {printable(str(path))}: {problem}"


def zoo_write_problem(path: str | Path) -> str | None:
    """Why writing ``path`` would write into the installed package's model zoo, or None: a path that resolves (through
    ``..`` and links) to a file of any game's ``zoo/`` folder (a policy or its model card), or to a new file there.
    Overwritten, a zoo policy would break ``make(name)`` or silently become another network under a published name
    for every user of the install; a new file there would ship as one. Checked by every command and script that
    writes files, before any work."""
    try:
        target = Path(path).resolve()
    except (OSError, RuntimeError, ValueError):  # a link loop, a NUL byte: the flag's own checks say why
        return None
    for folder in zoo_folders():
        zoo = folder.resolve()
        if target == zoo or zoo in target.parents:
            what = f"overwrite {printable(str(target))}" if target.exists() else f"write a new file into {zoo}"
            return (
                f"would {what}, in the model zoo of the installed package (its shipped policies and their model "
                "cards); write elsewhere"
            )
    return None


def model_card(package: str, name: str) -> str:
    """The model card of a zoo policy, as Markdown text."""
    path = zoo_files(package).get(name)
    if path is None:
        raise ValueError(f"no zoo policy {name!r}; the zoo holds {sorted(zoo_files(package))}")
    return path.with_suffix(".md").read_text()


def policy_path(package: str, name: str | Path) -> Path:
    """The checkpoint that a zoo name of ``package`` (a ``str``) or a checkpoint path stands for (for agents built
    on a policy, such as the card game's ``endgame``); a ``ValueError`` naming the zoo for anything else."""
    zoo = zoo_files(package)
    if not isinstance(name, str | Path) or not str(name):
        raise ValueError(f"a policy must be a zoo name {sorted(zoo)} or a checkpoint path, got {shown(name)}")
    path = zoo.get(name) if isinstance(name, str) else None  # a Path is a file, even one named like a zoo policy
    if path is not None:
        return path
    if not is_existing_file(name):
        raise ValueError(f"{shown(str(name))} is neither a zoo policy {sorted(zoo)} nor a checkpoint file")
    return Path(name)
