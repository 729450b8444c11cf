"""The package's imports form no circle: every module can be imported first, and no module needs one that
needs it back, not even through an import deferred into a function (the way such circles are usually hidden).

The graph is read from the source: an edge for every ``import`` anywhere in a module (``if TYPE_CHECKING``
blocks aside), and for each package a module imports from outside its own packages, since importing a
submodule runs its package's ``__init__`` first.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import friday13_env

ROOT = Path(friday13_env.__file__).parent
PACKAGE = "friday13_env"


def module_names() -> dict[str, Path]:
    """``{dotted module name: source file}`` for every module of the package."""
    modules = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(ROOT).with_suffix("").parts)
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


def parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def imported(module: str, path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """The package modules that importing ``module`` runs: each one it names, and that one's packages."""
    is_package = path.name == "__init__.py"
    skipped = {id(node) for node in ast.walk(ast.parse(path.read_text())) if _type_checking_block(node)}
    for node in ast.walk(ast.parse(path.read_text())):
        if id(node) in skipped:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")[: len(module.split(".")) - node.level + is_package]
                base = ".".join([*anchor, base] if base else anchor)
            names = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        for name in names:
            if name in modules:
                yield from (p for p in [*parents(name), name] if p not in parents(module) and p != module)


def _type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


def import_graph() -> dict[str, set[str]]:
    modules = module_names()
    return {module: set(imported(module, path, modules)) for module, path in modules.items()}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_module_imports_one_that_imports_it_back() -> None:
    graph = import_graph()
    assert graph["friday13_env.friday13.agents.registry"], "the graph reader found no imports"
    assert cycles(graph) == []


def test_the_cycle_check_sees_a_circle_through_a_deferred_import() -> None:
    """The circle this test was written for: ``endgame`` looked its policy up in the registry, which registers it."""
    graph = import_graph()
    graph["friday13_env.friday13.agents.endgame"].add("friday13_env.friday13.agents.registry")
    assert any(
        {"friday13_env.friday13.agents.endgame", "friday13_env.friday13.agents.registry"} <= set(cycle)
        for cycle in cycles(graph)
    )


@pytest.mark.parametrize(
    "module",
    [
        "friday13_env.friday13.agents.endgame",
        "friday13_env.friday13.agents.registry",
        "friday13_env.friday13.batched.agents",
        "friday13_env.friday13.batched",
    ],
)
def test_each_module_imports_first_in_a_fresh_interpreter(module: str) -> None:
    """Then it builds what it needs: the registry its batched agents, the endgame agent its zoo policy."""
    code = (
        f"import {module}\n"
        "from friday13_env.friday13.agents import make\n"
        "from friday13_env.friday13.batched.agents import make_batched\n"
        "from friday13_env.friday13.cards import STANDARD_DECK\n"
        "make('endgame')\n"
        "make_batched('majority', STANDARD_DECK)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
