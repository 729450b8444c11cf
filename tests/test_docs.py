"""The README's and the docs' examples work as written: every Python code block runs, every training command
line they print is accepted by its script's own parser, and every relative link points at a file that exists."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.scripts import REPOSITORY, load_training_script

PAGES = sorted(
    [
        REPOSITORY / "README.md",
        *(REPOSITORY / "docs").glob("*.md"),
        *(REPOSITORY / "friday13_env").glob("*/zoo/*.md"),
        REPOSITORY / "checkpoints" / "README.md",
        REPOSITORY / "results" / "README.md",
        *(REPOSITORY / "experiments").glob("*/README.md"),
    ]
)
OPTIONAL_LIBRARIES = {"torchrl", "tensordict", "pufferlib", "ray"}
"""Other libraries a page shows the package with; a block importing one that is not installed is skipped."""
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def blocks(page: Path, language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(page.read_text()) if lang == language]


def page_id(page: Path) -> str:
    return str(page.relative_to(REPOSITORY))


def test_the_pages_have_examples_to_check() -> None:
    assert blocks(REPOSITORY / "README.md", "python")
    assert sum(len(blocks(page, "bash")) for page in PAGES) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p, "python")], ids=page_id)
def test_every_python_block_runs(page: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocks of a page run in order in one namespace, as a reader pastes them, in a scratch directory."""
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {"__name__": "__main__"}
    skipped = []
    for index, body in enumerate(blocks(page, "python")):
        try:
            exec(compile(body, f"{page_id(page)} block {index}", "exec"), namespace)
        except ModuleNotFoundError as error:
            if (error.name or "").split(".")[0] not in OPTIONAL_LIBRARIES:
                raise
            skipped.append(f"block {index} needs {error.name}")
    if skipped:
        pytest.skip("; ".join(skipped))


def training_commands() -> list[tuple[str, list[str]]]:
    """``(page, argv)`` for every ``python training/NAME.py ...`` line in a bash block (continuations joined)."""
    found = []
    for page in PAGES:
        for body in blocks(page, "bash"):
            for line in body.replace("\\\n", " ").splitlines():
                words = shlex.split(line, comments=True)
                if len(words) >= 2 and words[0] in {"python", "python3"} and words[1].startswith("training/"):
                    found.append((page_id(page), words[1:]))
                for start in range(len(words) - 1):  # a set-up chained with && ends with the script
                    if words[start] == "&&" and words[start + 1].endswith("python") and start + 2 < len(words):
                        found.append((page_id(page), words[start + 2 :]))
    return found


COMMANDS = training_commands()


@pytest.mark.parametrize(("page", "argv"), COMMANDS, ids=[f"{page}: {' '.join(argv)[:70]}" for page, argv in COMMANDS])
def test_every_training_command_line_parses(page: str, argv: list[str]) -> None:
    """The flags a page prints are the script's flags, with values its parser accepts (nothing is run)."""
    script = Path(argv[0]).stem
    if script not in {"evaluate", "plot_curve"}:
        pytest.importorskip("torch", reason="the training scripts need the train extra")
    if script == "train_rllib":
        pytest.importorskip("ray", reason="train_rllib.py needs the rllib extra")
    if "cuda" in argv:
        torch = pytest.importorskip("torch")
        if not torch.cuda.is_available():
            pytest.skip("a --device cuda line needs an NVIDIA GPU")
    module = load_training_script(script)
    if script == "evaluate":
        from friday13_env.friday13.evaluation import command

        command.build_parser().parse_args(argv[1:])
    elif script == "plot_curve":
        assert (REPOSITORY / argv[0]).is_file()
    else:
        module.parse_args(argv[1:])


@pytest.mark.parametrize("page", PAGES, ids=page_id)
def test_every_relative_link_points_at_a_file(page: Path) -> None:
    broken = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        if not (page.parent / path).exists():
            broken.append(target)
    assert not broken, f"{page_id(page)} links to missing files: {broken}"


def test_the_citations_name_this_release() -> None:
    """The README's BibTeX entry and CITATION.cff cite the version the package declares (and pyproject.toml)."""
    from friday13_env import __version__

    readme = (REPOSITORY / "README.md").read_text(encoding="utf-8")
    citation = (REPOSITORY / "CITATION.cff").read_text(encoding="utf-8")
    pyproject = (REPOSITORY / "pyproject.toml").read_text(encoding="utf-8")
    assert re.findall(r"version = \{([^}]*)\}", readme) == [__version__]
    assert re.findall(r"^version: (\S+)$", citation, re.MULTILINE) == [__version__]
    assert re.findall(r'^version = "([^"]+)"$', pyproject, re.MULTILINE) == [__version__]
