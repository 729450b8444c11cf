"""Friday evaluation results as a text table, a Markdown table (``results/*.md``, the docs) and JSON."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from friday13_env.core.checks import printable
from friday13_env.core.specs import markdown_cell
from friday13_env.friday.evaluation.games import LevelResult


def format_table(results: Sequence[LevelResult]) -> str:
    """Readable table: one row per agent and level, with the wall time per decision as the Markdown table has it; a
    label holding a control character (a checkpoint's file name) is shown escaped (``checks.printable``)."""
    labels = [printable(r.agent) for r in results]  # a label from a file name never drives the terminal
    width = max([10, *(len(label) for label in labels)])
    header = (
        f"{'agent':<{width}} {'level':>5} {'games':>6} {'win rate (95% CI)':>26} {'mean score (95% CI)':>28}"
        f" {'ms / decision':>13}"
    )
    lines = [header, "-" * len(header)]
    for r, label in zip(results, labels, strict=True):
        rate, score = r.win_rate.formatted(1, scale=100, unit="%", width=5), r.mean_score.formatted(2, width=7)
        lines.append(f"{label:<{width}} {r.level:>5} {r.games:>6} {rate:>26} {score:>28} {r.ms_per_decision:>13.2f}")
    return "\n".join(lines)


def format_markdown(results: Sequence[LevelResult], seed: int) -> str:
    """The results as a Markdown table (for ``results/*.md`` and the docs)."""
    lines = [
        f"Seed {seed}; win rate with a 95% Wilson interval, mean score with a 95% Student-t interval.",
        "",
        "| agent | level | games | win rate [95% CI] | mean score [95% CI] | ms / decision |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        rate, score = r.win_rate.formatted(1, scale=100, unit="%"), r.mean_score.formatted(2)
        lines.append(
            f"| {markdown_cell(r.agent)} | {r.level} | {r.games} | {rate} | {score} | {r.ms_per_decision:.2f} |"
        )
    return "\n".join(lines)


def results_to_json(results: Sequence[LevelResult], seed: int) -> dict[str, Any]:
    """JSON-serialisable summary of a run (an undefined interval's ends are ``None``: JSON has no NaN)."""
    rows = [{**asdict(r), "win_rate": r.win_rate.to_dict(), "mean_score": r.mean_score.to_dict()} for r in results]
    return {"seed": seed, "results": rows}
