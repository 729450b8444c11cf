"""Results as a terminal table, Markdown, JSON and a win-rate plot.

The terminal and Markdown tables are one set of rows rendered two ways, so they cannot disagree.
Win rates are per seat (an agent's copies are averaged), so ``1/n`` is always the equal-seat rate.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from friday13_env.core.checks import printable
from friday13_env.core.files import atomic_write, atomic_write_text, output_problem
from friday13_env.core.specs import markdown_cell
from friday13_env.core.stats import CONFIDENCE, Estimate
from friday13_env.core.zoo import zoo_write_problem
from friday13_env.friday13.evaluation.results import AgentStats, EvaluationResult, MatchupResult

PLOT_EXTRA_HINT = "plotting needs matplotlib: pip install 'friday13-env[plot]'"
_AGENT_HEADER = ("matchup", "agent", "seats", "win rate", "points/game", "rank", "deals", "games")

Table = tuple[tuple[str, ...], list[tuple[str, ...]]]


def format_text(result: EvaluationResult) -> str:
    """Aligned plain-text tables for the terminal."""
    return _render(result, markdown=False)


def format_markdown(result: EvaluationResult) -> str:
    return _render(result, markdown=True)


def write_json(result: EvaluationResult, path: str | Path) -> None:
    atomic_write_text(path, format_json(result))


def write_markdown(result: EvaluationResult, path: str | Path) -> None:
    atomic_write_text(path, format_markdown(result))


def format_json(result: EvaluationResult) -> str:
    """The results as JSON text; ``allow_nan=False``: an undefined interval is ``null``, never ``NaN``."""
    return json.dumps(result.to_dict(), indent=2, allow_nan=False) + "\n"


def check_output_path(path: Path, plot: bool = False, suffix: str = "") -> str | None:
    """Why ``path`` cannot be written (``None`` if it can), found before any game is played.

    A path in the installed package's model zoo is refused (``zoo.zoo_write_problem``). Nothing is created: missing
    folders are only checked to be creatable (the nearest existing one
    is a folder we may write in), and every name to be made to fit the file system, ``path``'s with
    ``suffix`` added too (the longest a writer adds: ``OUT.partial``). ``plot`` also checks that
    matplotlib can write the file's format.
    """
    if in_zoo := zoo_write_problem(path):
        return in_zoo
    problem = output_problem(path, suffix=suffix)
    shown = printable(str(path))  # a name from elsewhere (a downloaded replay's) never drives the terminal
    if isinstance(problem, IsADirectoryError):
        return f"{shown} is a folder; give a file name"
    if plot:
        formats = sorted(plot_formats())
        if path.suffix[1:].lower() not in formats:
            return f"matplotlib cannot write {path.suffix or 'extension-less'!r} files; use one of " + ", ".join(
                f".{name}" for name in formats
            )
    if isinstance(problem, NotADirectoryError):
        return f"cannot create the folder {printable(str(path.parent))}: {printable(str(problem.filename))} is a file"
    if problem is not None:
        return f"cannot write {shown}: {printable(str(problem.strerror or problem))}"
    return None


def plot_formats() -> list[str]:
    """The file extensions matplotlib can save a figure as."""
    require_matplotlib()
    from matplotlib.backend_bases import FigureCanvasBase

    return sorted(FigureCanvasBase.get_supported_filetypes())


def require_matplotlib() -> None:
    """Fail before a long run, not after it, when ``--plot`` cannot work."""
    try:
        import matplotlib  # noqa: F401
    except ImportError as error:
        raise ImportError(PLOT_EXTRA_HINT) from error


def plot_win_rates(result: EvaluationResult, path: str | Path) -> None:
    """Win rates with their 95% intervals as error bars, one panel per table size, 1/n dashed."""
    require_matplotlib()
    from matplotlib.figure import Figure

    counts = result.player_counts
    rows = [[(name, stats.win_rate) for name, stats in _plotted(m)] for m in map(result.at, counts)]
    width = max(6.0, 0.6 * max(len(row) for row in rows) + 2)
    figure = Figure(figsize=(width, 3.2 * len(counts)), layout="constrained")
    for axes, n, row in zip(figure.subplots(len(counts), 1, squeeze=False)[:, 0], counts, rows, strict=True):
        positions = range(len(row))
        # Asymmetric where an interval is clipped (a win rate never exceeds 1).
        errors = [
            [0.0 if math.isnan(estimate.half_width) else estimate.mean - estimate.low for _, estimate in row],
            [0.0 if math.isnan(estimate.half_width) else estimate.high - estimate.mean for _, estimate in row],
        ]
        axes.errorbar(positions, [estimate.mean for _, estimate in row], yerr=errors, fmt="o", capsize=4)
        axes.axhline(1 / n, linestyle="--", color="grey", label=f"equal seat (1/{n})")
        axes.set_xticks(list(positions), [name for name, _ in row], rotation=30, ha="right")
        axes.set_ylabel("win rate per seat")
        axes.set_title(f"{n} players ({CONFIDENCE:.0%} intervals over duplicate deals)")
        axes.legend(loc="best")
    path = Path(path)
    atomic_write(path, lambda handle: figure.savefig(handle, format=path.suffix[1:].lower() or None))


def _plotted(matchups: list[MatchupResult]) -> list[tuple[str, AgentStats]]:
    """The focus agent of each "A vs B" matchup, every agent of a mixed table."""
    points = []
    for matchup in matchups:
        if matchup.focus is not None:
            points.append((matchup.label, matchup.stats(matchup.focus)))
        else:
            points.extend((f"{stats.label} ({matchup.label})", stats) for stats in matchup.agents)
    return points


def _render(result: EvaluationResult, markdown: bool) -> str:
    header = (
        f"seed {result.seed}, {result.deck} deck, {result.num_rounds} rounds; "
        f"{CONFIDENCE:.0%} Student-t intervals over deals (each deal = mean of its seat {result.seating_mode})"
    )
    parts = [f"# Evaluation\n\n{header}" if markdown else header]
    for n in result.player_counts:
        matchups = result.at(n)
        title = f"{n} players (equal seat win rate {1 / n:.3f})"
        parts.append(f"## {title}" if markdown else f"\n{title}")
        parts.append(_table(_agent_rows(matchups), markdown))
        matrix = _focus_matrix(matchups)
        if matrix is not None:
            parts.append("### Focus win rate against copies of each opponent" if markdown else "focus win rate:")
            parts.append(_table(matrix, markdown))
    return "\n\n".join(parts) + "\n"


def _agent_rows(matchups: list[MatchupResult]) -> Table:
    rows: list[tuple[str, ...]] = [
        (
            matchup.label,
            stats.label,
            str(stats.seats),
            stats.win_rate.formatted(3),
            stats.points.formatted(2),
            stats.rank.formatted(2),
            str(matchup.deals),
            str(matchup.games),
        )
        for matchup in matchups
        for stats in matchup.agents
    ]
    return _AGENT_HEADER, rows


def _focus_matrix(matchups: list[MatchupResult]) -> Table | None:
    """Rows: focus agents; columns: the opponent whose copies fill the other seats."""
    cells = {
        (m.focus, m.opponents[0]): m.stats(m.focus).win_rate
        for m in matchups
        if m.focus is not None and len(m.opponents) == 1
    }
    if not cells:
        return None
    order = list(dict.fromkeys(label for pair in cells for label in pair))
    focuses = [label for label in order if any(focus == label for focus, _ in cells)]
    opponents = [label for label in order if any(opponent == label for _, opponent in cells)]
    rows = [(focus, *(_cell(cells.get((focus, opponent))) for opponent in opponents)) for focus in focuses]
    return ("focus", *opponents), rows


def _cell(estimate: Estimate | None) -> str:
    return "-" if estimate is None else estimate.formatted(3)


def _table(table: Table, markdown: bool) -> str:
    header, rows = table
    if markdown:
        lines = [header, tuple("---" for _ in header), *rows]
        return "\n".join("| " + " | ".join(map(markdown_cell, row)) + " |" for row in lines)
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    lines = [header, tuple("-" * width for width in widths), *rows]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in lines
    )
