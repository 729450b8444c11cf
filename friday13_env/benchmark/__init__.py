"""The benchmark: frozen suites, normalised scores, ratings at mixed tables, and the leaderboard built from them.

``run_benchmark("ppo-v4", "card-4p")`` plays a suite (``suites()`` lists them) and returns its result;
``friday13 benchmark --agent SPEC --suite NAME`` does the same from a shell and writes the result file.
See ``docs/benchmark.md``.
"""

from friday13_env.benchmark.runner import execute, prepare, run_benchmark
from friday13_env.benchmark.suite import Cell, Split, Suite, get_suite, suites

__all__ = ["Cell", "Split", "Suite", "execute", "get_suite", "prepare", "run_benchmark", "suites"]
