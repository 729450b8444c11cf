"""The batched code and the training code take the game's vocabulary (reward modes, options, seating) from
``rewards`` and ``options``, never from the PettingZoo environment (``aec``) or the single-agent one
(``single_agent``): the batched engine runs without PettingZoo, and neither environment is a dictionary."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.scripts import REPOSITORY, TRAINING

ENVIRONMENTS = ("friday13_env.friday13.aec", "friday13_env.friday13.single_agent")
BATCHED = (
    "friday13_env.friday13.batched.engine",
    "friday13_env.friday13.batched.encoding",
    "friday13_env.friday13.batched.agents",
    "friday13_env.friday13.batched.seating",
    "friday13_env.friday13.batched.selfplay",
    "friday13_env.friday13.batched.vector_env",
    "friday13_env.friday13.rewards",
    "friday13_env.friday13.options",
)
"""Modules that must import in an interpreter without PettingZoo and without either environment."""
NO_ENVIRONMENT_IMPORTS = sorted(
    [
        *(REPOSITORY / "friday13_env/friday13/batched").glob("*.py"),
        *TRAINING.glob("*.py"),
        *(TRAINING / "friday13_training").glob("*.py"),
    ]
)
"""Files that name neither environment module in an import (evaluations may still play through ``aec``)."""


def imported_modules(path: Path) -> set[str]:
    """Every module an import statement of ``path`` names (``from a import b`` names ``a`` and ``a.b``)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return names


@pytest.mark.parametrize("module", BATCHED)
def test_the_batched_code_imports_without_pettingzoo_or_the_environments(module: str) -> None:
    code = textwrap.dedent(
        f"""
        import importlib, importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] == "pettingzoo":
                    raise ImportError(f"blocked: {{name}}")
        sys.meta_path.insert(0, Block())
        importlib.import_module({module!r})
        loaded = sorted(set({ENVIRONMENTS!r}) & set(sys.modules))
        assert not loaded, f"{module} imported {{loaded}}"
        """
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize("path", NO_ENVIRONMENT_IMPORTS, ids=lambda path: str(path.relative_to(REPOSITORY)))
def test_the_batched_and_training_code_names_neither_environment(path: Path) -> None:
    named = imported_modules(path) & set(ENVIRONMENTS)
    assert not named, f"{path.name} imports {sorted(named)}: take the vocabulary from rewards or options"


def test_the_import_check_sees_an_environment_import(tmp_path: Path) -> None:
    """The check above can fail: a file importing from ``aec`` is caught, also as ``from package import aec``."""
    script = tmp_path / "script.py"
    script.write_text("from friday13_env.friday13.aec import REWARD_MODES\nfrom friday13_env.friday13 import aec\n")
    assert imported_modules(script) >= {"friday13_env.friday13.aec", "friday13_env.friday13.aec.REWARD_MODES"}
