"""Maintainers' tool: fill in what a suite file pins, from the code and from the anchors' result files.

``python -m benchmarks.freeze_suites SUITE...`` writes each suite's deal digests and its anchors' fingerprints
(computed by this installation) and the reference win shares that ``results/benchmark/SUITE-vN/random.json`` and
``search.json`` measured on the test split; then it scores the suite's result files again with those references
(their rows do not change). Run it when a suite is made, and only then: a suite whose pins change is a new suite
version (bump ``version`` first). Then pin the new version's ``definition_sha256`` in
``tests/benchmark/test_suites.py``; a changed suite that keeps its version fails there.

A new suite version is frozen twice: first with ``--no-references``, which pins its deals and anchors (``friday13
benchmark`` plays only a pinned suite) and writes no references, refused once either reference file exists; then,
once ``random`` and ``search`` have run on it, without. Nothing is written unless every suite named can be frozen:
each reference file must be its anchor's complete test-split run of this very suite (``reference_scores``: suite id,
deals, agent, fingerprint, cells), both must be there, and the suite they make must load (``suite_from_dict``:
``search`` above ``random`` in every cell). Otherwise the error names the file and the problem (exit 2), since a
suite frozen from another suite's numbers, or one that does not load (which breaks ``get_suite`` for every suite),
would change every score normalised by it. Each file is then replaced whole (``atomic_write_text``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from pathlib import Path
from typing import Any

from friday13_env.benchmark.fingerprints import behaviour_fingerprint, deals_digest
from friday13_env.benchmark.leaderboard import reference_scores, result_path
from friday13_env.benchmark.runner import read_json, registry_of, rescored
from friday13_env.benchmark.suite import NORMALISERS, SPLITS, Suite, suite_from_dict, suites
from friday13_env.core.files import atomic_write_text
from friday13_env.core.specs import first_repeat

SUITES = Path(__file__).resolve().parent.parent / "friday13_env" / "benchmark" / "suites"
RESULTS = Path(__file__).resolve().parent.parent / "results" / "benchmark"


@dataclasses.dataclass
class Frozen:
    """What freezing one suite writes: its file's text, and each of its result files' text rescored."""

    path: Path
    text: str
    references: int
    rescored: dict[Path, str]


def frozen(name: str, references: bool) -> Frozen:
    """Suite ``name`` (``SUITES/NAME.json``) frozen from this installation and the result files under ``RESULTS``,
    checked as a whole, with nothing written; a ``ValueError`` says why it cannot be."""
    path = SUITES / f"{name}.json"
    data = json.loads(path.read_text())
    suite = suite_from_dict(data)
    if suite.name != name:
        raise ValueError(f"{path} holds suite {suite.name!r}, not {name!r}")
    data["deals_sha256"] = {split: deals_digest(suite, split) for split in SPLITS}
    data["anchors"] = anchor_fingerprints(suite)
    pinned = dataclasses.replace(suite, deals_sha256=data["deals_sha256"], anchors=data["anchors"])
    if references:
        data["references"] = reference_scores(pinned, RESULTS, required=True)
    else:
        present = [str(file) for anchor in NORMALISERS if (file := result_path(RESULTS, suite, anchor)).exists()]
        if present:
            raise ValueError(f"--no-references, but {', '.join(present)} exist: freeze {name} with its references")
        data["references"] = {}
    checked = suite_from_dict(data)  # what get_suite will read: refused here rather than written
    return Frozen(path, json.dumps(data, indent=1) + "\n", len(checked.references), results(checked))


def anchor_fingerprints(suite: Suite) -> dict[str, str]:
    """Every anchor's behaviour fingerprint, as this installation plays it."""
    registry = registry_of(suite.game)
    deck = suite.cells[0].deck
    return {
        anchor: behaviour_fingerprint(registry.make(anchor, seed=0), suite.game, deck) for anchor in suite.anchor_names
    }


def results(suite: Suite) -> dict[Path, str]:
    """The text of each of ``suite``'s result files (both splits) scored again with its references."""
    texts = {}
    for path in sorted((RESULTS / suite.id).glob("*.json")):
        result: dict[str, Any] = read_json(path, "benchmark result")
        try:
            texts[path] = json.dumps(rescored(result, suite), indent=1, allow_nan=False) + "\n"
        except (KeyError, TypeError, IndexError, ValueError) as error:
            raise ValueError(f"{path}: cannot be scored again ({error!r})") from error
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="+", help="suite names (the files in friday13_env/benchmark/suites/)")
    parser.add_argument(
        "--no-references",
        action="store_true",
        help="pin deals and anchors only, for a new suite version whose random and search have not run yet",
    )
    args = parser.parse_args()
    known = sorted(path.stem for path in SUITES.glob("*.json"))
    for name in args.suites:
        if name not in known:
            parser.error(f"unknown suite {name!r}; suites: {known}")
    repeat = first_repeat(args.suites)
    if repeat is not None:
        parser.error(f"{args.suites[repeat[0]]} is listed twice; list each suite once")
    plans = []
    for name in args.suites:
        try:
            plans.append(frozen(name, references=not args.no_references))
        except ValueError as error:
            parser.error(f"{name}: {error}")
    for plan in plans:
        atomic_write_text(plan.path, plan.text)
        print(f"{plan.path}: {plan.references} reference rows")
        suites.cache_clear()
        for path, text in plan.rescored.items():
            atomic_write_text(path, text)
            print(f"  rescored {path}")


if __name__ == "__main__":
    main()
