"""Maintainers' tool: fill in what a suite file pins, from the code and from the anchors' result files.

``python benchmarks/freeze_suites.py SUITE...`` writes each suite's deal digests and its anchors'
fingerprints (computed by this installation) and, where ``results/benchmark/SUITE/random.json`` and
``search.json`` exist, the reference win shares they measured on the test split; then it scores the suite's
result files again with those references (their rows do not change). Run it when a suite is made, and only
then: a suite whose pins change is a new suite version (bump ``version`` first). Then pin the new version's
``definition_sha256`` in ``tests/benchmark/test_suites.py``; a changed suite that keeps its version fails there.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from friday13_env.benchmark.fingerprints import behaviour_fingerprint, deals_digest
from friday13_env.benchmark.leaderboard import reference_scores
from friday13_env.benchmark.runner import read_json, registry_of, rescored
from friday13_env.benchmark.suite import SPLITS, get_suite, suites

SUITES = Path(__file__).resolve().parent.parent / "friday13_env" / "benchmark" / "suites"
RESULTS = Path(__file__).resolve().parent.parent / "results" / "benchmark"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suites", nargs="+", help="suite names")
    args = parser.parse_args()
    for name in args.suites:
        suite = get_suite(name)
        path = SUITES / f"{name}.json"
        data = json.loads(path.read_text())
        data["deals_sha256"] = {split: deals_digest(suite, split) for split in SPLITS}
        deck = suite.cells[0].deck
        registry = registry_of(suite.game)
        data["anchors"] = {
            a: behaviour_fingerprint(registry.make(a, seed=0), suite.game, deck) for a in suite.anchor_names
        }
        data["references"] = reference_scores(suite, RESULTS)
        path.write_text(json.dumps(data, indent=1) + "\n")
        print(f"{path}: {len(data['references'])} reference rows")
        suites.cache_clear()
        frozen = get_suite(name)
        for result_file in sorted((RESULTS / frozen.id).glob("*.json")):
            result = read_json(result_file, "benchmark result")
            result_file.write_text(json.dumps(rescored(result, frozen), indent=1, allow_nan=False) + "\n")
            print(f"  rescored {result_file}")


if __name__ == "__main__":
    main()
