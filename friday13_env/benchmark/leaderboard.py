"""The leaderboard: ``docs/leaderboard.md`` generated from the result files, never typed by hand.

``friday13 leaderboard`` reads ``results/benchmark/SUITE-vN/*.json`` (one file per agent and suite, as
``friday13 benchmark --out`` writes them), ``results/benchmark/ratings.json`` and
``results/benchmark/exploitability.json`` (``training/best_response.py --record``), and writes the page;
``--check`` says whether the page on disk is what the files give (a test runs it). The page names the folder it
was made from by its path relative to the page itself, so the page is the same however the two paths are typed and
wherever the command runs; the command to reproduce a row quotes its spec for the shell.
"""

from __future__ import annotations

import math
import os
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from friday13_env.benchmark.exploitability import EXPLOITABILITY_FILE, Gap, largest_gaps, read_table
from friday13_env.benchmark.results import read_result, result_name
from friday13_env.benchmark.runner import registry_of
from friday13_env.benchmark.suite import NORMALISERS, Suite, suites
from friday13_env.core.checks import plain_text
from friday13_env.core.specs import recorded_spec, shown

RESULTS_FOLDER = Path("results") / "benchmark"
LEADERBOARD = Path("docs") / "leaderboard.md"


def result_path(results: str | Path, suite: Suite, spec: str) -> Path:
    return Path(results) / suite.id / result_name(spec)


def reference_scores(suite: Suite, results: str | Path, *, required: bool = False) -> dict[str, list[float]]:
    """The normalisers' mean win share per cell, read from their test-split result files where both exist.

    Each file must be its anchor's complete run of the test split of this very suite, since its win shares become
    the suite's 0 and 1: its suite id, split and deals (``suite.deals_sha256``), the agent spec its file name stands
    for, the anchor's fingerprint where the suite pins one, and the suite's cells by name; anything else is a
    ``ValueError`` naming the file, never another suite's or agent's numbers taken as these. A missing file means
    no references yet (``{}``, as for a suite whose anchors were not run), unless ``required`` (``freeze_suites.py``,
    which writes them into the suite): then it is a ``ValueError`` too, not a suite frozen without references."""
    from friday13_env.benchmark.runner import read_json

    scores = {}
    for anchor in NORMALISERS:
        path = result_path(results, suite, anchor)
        if not path.exists():
            if required:
                raise ValueError(f"{path}: no result file of reference agent {anchor} (friday13 benchmark --out)")
            return {}
        data = read_json(path, "benchmark result")
        try:
            problem = _reference_problem(data, suite, anchor)
            scores[anchor] = [cell["win_share"]["value"] for cell in data["cells"]]
        except (KeyError, TypeError, AttributeError) as error:
            problem = f"a field is missing or of the wrong kind ({error!r})"
        if problem is not None:
            raise ValueError(f"{path}: {problem}; references come from a complete test-split run of the suite")
    return scores


def _reference_problem(data: dict[str, Any], suite: Suite, anchor: str) -> str | None:
    """Why ``data`` is not ``anchor``'s complete test-split run of ``suite``, or None."""
    header = data["suite"]
    if header["id"] != suite.id:
        return f"a run of suite {shown(header['id'])}, not {suite.id}"
    if header["split"] != "test":
        return f"a run of the {shown(header['split'])} split, not the test split"
    if header["deals_sha256"] != suite.deals_sha256.get("test"):
        return f"its deals are not suite {suite.id}'s test deals"
    if data["complete"] is not True:
        return "not a complete run"
    spec = data["agent"]["spec"]
    if spec != anchor:
        return f"the run of agent {shown(spec)}, not {anchor}"
    fingerprint = data["agent"]["fingerprint"]
    if anchor in suite.anchors and fingerprint != suite.anchors[anchor]:
        return f"anchor {anchor} played with fingerprint {shown(fingerprint)}, not the suite's {suite.anchors[anchor]}"
    names = [cell["name"] for cell in data["cells"]]
    if names != [cell.name for cell in suite.cells]:
        return f"its cells are not the suite's: {shown(names, 200)}"
    return None


RATINGS_FILE = "ratings.json"
RATING_DIFFERENCES = (1.0, 2.0, 4.0, 8.0)


def load_results(results: str | Path) -> dict[str, dict[str, dict[str, Any]]]:
    """``{suite id: {agent spec: result}}`` of every test-split result under ``results``, each checked against the
    suite this package ships (``results.read_result``: a file of another suite version, an unfinished run or a
    figure its rows do not give is an error). A folder that does not exist, or that holds no test-split result
    file (a mistyped ``--results`` such as ``docs``), is an error too, not an empty page written over the real one."""
    folder = Path(results)
    try:
        is_folder = folder.is_dir()
    except OSError:  # a name the system cannot look up (too long): no such folder either
        is_folder = False
    if not is_folder:
        raise ValueError(f"no results folder {folder} (friday13 benchmark --out writes results there)")
    known = {suite.id: suite for suite in suites().values()}
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for path in sorted(folder.glob("*/*.json")):
        suite, split, data = read_result(path, known)
        if split == "test":
            found.setdefault(suite.id, {})[data["agent"]["spec"]] = data
    if not found:
        raise ValueError(
            f"no test-split result files in {folder} (SUITE/AGENT.json, as friday13 benchmark --out writes them): "
            "no leaderboard to write"
        )
    return found


MAX_FOLDER_TEXT = 500
"""The most characters of the results folder's path from the page that the page shows."""


def folder_reference(results: str | Path, page: str | Path) -> tuple[str, str]:
    """How the page at ``page`` names the results folder: its path from the page's own folder
    (``../results/benchmark/``), with a slash at the end, as shown and as a link (percent-quoted). Computed from the
    resolved paths, so it does not depend on how ``--results`` and ``--out`` were spelled (``./results``, an absolute
    path) nor on the working folder: ``--check`` gives the same page from ``docs/`` as from the repository. A path the
    page could not show as written (a backtick, a ``|``, a control character) is a ``ValueError``. Where no relative
    path exists (another drive), it is the folder's absolute path."""
    folder = Path(results).resolve()
    try:
        relative = os.path.relpath(folder, Path(page).resolve().parent)
    except ValueError:
        relative = str(folder)
    shown_as = Path(relative).as_posix().rstrip("/") + "/"
    if not plain_text(shown_as, MAX_FOLDER_TEXT):
        raise ValueError(
            f"the results folder {shown(str(results))} is named on the page as {shown(shown_as)}: give one whose path "
            f"from the page is at most {MAX_FOLDER_TEXT} characters without | ` or control characters"
        )
    return shown_as, quote(shown_as)


def generate(results: str | Path = RESULTS_FOLDER, page: str | Path = LEADERBOARD) -> str:
    """The leaderboard page at ``page`` for the result files under ``results``: the page names ``results`` by its
    path from ``page``'s folder (``folder_reference``), so the page depends on where both are, not only on the files,
    but not on how their paths are typed."""
    from friday13_env.benchmark.ratings import read_ratings

    shown_as, link = folder_reference(results, page)
    loaded = load_results(results)
    ratings_path = Path(results) / RATINGS_FILE
    ratings = read_ratings(ratings_path) if ratings_path.exists() else None
    lines = [
        "# Leaderboard",
        "",
        f"<!-- Generated by `friday13 leaderboard` from {shown_as}: do not edit by hand. -->",
        "",
        f"Every figure below comes from a result file under [`{shown_as}`]({link}), made by",
        "the command in its row; `tests/benchmark/test_leaderboard.py` fails when this page and the files disagree.",
        "What the suites are and how the scores are computed: [the benchmark guide](benchmark.md).",
        "",
        "**Normalised score**: 0 plays like `random`, 1 like `search`, per cell of a suite; a suite's score is the",
        "interquartile mean (IQM) over its cells, with a 95% stratified-bootstrap interval.",
        "",
        "**Exploitability gap** (4 players): the most a best response trained against the agent won over an equal",
        "seat's 0.25, on duplicate deals ([how it is measured](exploitability.md)): a lower bound on what an",
        "adaptive opponent gains, at the budget of its run.",
        "",
    ]
    gaps_path = Path(results) / EXPLOITABILITY_FILE
    gaps = read_table(gaps_path) if gaps_path.exists() else []
    lines += _card_section(loaded, ratings, gaps)
    lines += _solo_section(loaded)
    lines += _costs(loaded)
    lines += _details(loaded)
    return "\n".join(lines).rstrip() + "\n"


def _card_section(
    loaded: dict[str, dict[str, dict[str, Any]]], ratings: dict[str, Any] | None, gaps: list[Gap]
) -> list[str]:
    card_suites = [s for s in suites().values() if s.game == "friday13" and s.id in loaded and "quick" not in s.name]
    main = suites()["card-4p"].id
    agents = sorted(
        {agent for suite in card_suites for agent in loaded[suite.id]},
        key=lambda a: (-_score(loaded.get(main, {}).get(a)), a),
    )
    lines = ["## Friday the 13th (card game)", ""]
    columns = ["agent", *(f"`{s.name}`" for s in card_suites), "rating: mu ± sigma (mu - 3 sigma)"]
    columns += ["exploitability gap", "ms per move"]
    lines += ["| " + " | ".join(columns) + " |", "|" + " --- |" * len(columns)]
    largest = largest_gaps(gaps)
    rated = ratings["ratings"] if ratings is not None else {}
    for agent in agents:
        cells = [_normalised(loaded[s.id].get(agent)) for s in card_suites]
        rating = rated.get(agent)
        rating_text = "-" if rating is None else f"{rating['mu']:.1f} ± {rating['sigma']:.1f} ({rating['ordinal']:.1f})"
        cost = loaded.get(main, {}).get(agent, {}).get("cost", {}).get("ms_per_move")
        cost_text = "-" if cost is None else f"{cost:.2f}"
        gap = largest.get(agent)
        gap_text = "-" if gap is None else _signed(gap.gap)
        lines.append(f"| `{agent}` | " + " | ".join(cells) + f" | {rating_text} | {gap_text} | {cost_text} |")
    lines += [
        "",
        "A dash: not measured (policies trained on the standard deck cannot sit at a German-deck table).",
        "An anchor's row at a table where that anchor also sits (`random`, `cautious`, `majority` and `search` in",
        "`card-mixed`) is the mean over all its seats there, as one agent; every other agent plays one seat.",
        f"Cost per move: wall time of the agent's `act` on `{main}`, on the machine in its result file and under",
        "whatever else ran there; the CPU time of a decision, every agent side by side in one run, is in",
        "[agents.md](agents.md#cost-per-move).",
        "",
    ]
    if ratings is not None:
        lines += _ratings_section(ratings)
    lines += _exploitability_section(gaps)
    return lines


def _signed(interval: tuple[float, float, float]) -> str:
    mean, low, high = interval
    return f"{mean:+.3f} [{low:+.3f}, {high:+.3f}]"


ON_A_GPU = " on a GPU"
"""After the minutes of a best response whose learner trained on a GPU (``--device cuda``)."""


def _exploitability_section(gaps: list[Gap]) -> list[str]:
    lines = [
        "### Exploitability",
        "",
        "Each best response from `training/best_response.py` (its command in the row): a learner trained in one seat",
        "against the agent in every other seat, from scratch or from the agent's own weights, then played greedily",
        "against copies of it on duplicate deals (win share with its 95% interval over deals; the gap is the win",
        "share minus the equal share). A gap at or below 0 says that budget found nothing, not that there is",
        "nothing to find; the column above shows each agent's larger gap of its two starts. Minutes: the run's wall",
        "time, its learning-curve evaluations included, on a 2-core CPU or, where the row says so, with its networks",
        "on a GPU (`--device cuda`; [exploitability.md](exploitability.md) names the machines).",
        "",
    ]
    if not gaps:
        return [*lines, "No best response is recorded yet.", ""]
    lines += [
        "| agent | players | start | card plays | minutes | win share vs the agent | gap | command |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for gap in sorted(gaps, key=lambda g: (g.players, -g.gap[0], g.target, g.start)):
        mean, low, high = gap.win_share
        minutes = f"{gap.training_seconds / 60:.0f}{ON_A_GPU if gap.device == 'cuda' else ''}"
        lines.append(
            f"| `{gap.target}` | {gap.players} | {gap.start} | {gap.card_plays / 1e6:.1f}M | "
            f"{minutes} | {mean:.3f} [{low:.3f}, {high:.3f}] ({gap.final_games:,} games) | "
            f"{_signed(gap.gap)} | `{gap.command}` |"
        )
    return [*lines, ""]


def _ratings_section(ratings: dict[str, Any]) -> list[str]:
    from friday13_env.benchmark.ratings import win_share_of_difference

    rated = ratings["ratings"]
    sigma = float(np.median([r["sigma"] for r in rated.values()]))
    shares = win_share_of_difference(RATING_DIFFERENCES, sigma)
    games = sum(len(table["points"]) for table in ratings["games"])
    lines = [
        "### Ratings at mixed tables",
        "",
        f"{ratings['tables']} free-for-all tables of 3-6 different agents ({games} games, seed {ratings['seed']}), "
        f"{ratings['model']}: `{ratings['provenance']['command'] or 'friday13 ratings'}`.",
        "",
        "| agent | mu | sigma | mu - 3 sigma | games |",
        "| --- | --- | --- | --- | --- |",
    ]
    for agent, r in sorted(rated.items(), key=lambda item: -item[1]["ordinal"]):
        lines.append(f"| `{agent}` | {r['mu']:.2f} | {r['sigma']:.2f} | {r['ordinal']:.2f} | {r['games']} |")
    lines += [
        "",
        "What a difference in mu means: the model's chance that an agent that much above three equal opponents wins",
        f"a 4-player game (sigma {sigma:.2f}, the median here; an equal seat wins 0.250):",
        "",
        "| mu difference | " + " | ".join(f"{d:g}" for d in RATING_DIFFERENCES) + " |",
        "|" + " --- |" * (len(RATING_DIFFERENCES) + 1),
        "| win share | " + " | ".join(f"{share:.3f}" for share in shares) + " |",
        "",
    ]
    return lines


def _solo_section(loaded: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    suite = suites()["friday-levels"]
    results = loaded.get(suite.id, {})
    if not results:
        return []
    lines = [
        "## Friday (solo)",
        "",
        f"`{suite.name}`: win rate per level (95% Student-t interval over games) and the normalised IQM.",
        "",
        "| agent | normalised IQM | " + " | ".join(cell.name for cell in suite.cells) + " | ms per move |",
        "|" + " --- |" * (len(suite.cells) + 3),
    ]
    for agent, result in sorted(results.items(), key=lambda item: (-_score(item[1]), item[0])):
        levels = " | ".join(format_interval(cell["win_share"], 3) for cell in result["cells"])
        cost = result["cost"]["ms_per_move"]
        cost_text = "-" if cost is None else f"{cost:.2f}"
        lines.append(f"| `{agent}` | {_normalised(result)} | {levels} | {cost_text} |")
    return [*lines, ""]


COST_EXAMPLES = {"friday13": ("ppo-v4", "search"), "friday": ("dagger-v1", "search")}
"""Whose runs show what a suite costs: a network and the search anchor of each game."""


def _costs(loaded: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    lines = [
        "## What a run costs",
        "",
        "Wall time of the test split, from the result files (playing on every core of the machine named there).",
        "",
        "| suite | test games | a network | seconds | `search` seconds | workers | machine |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for suite in suites().values():
        results = loaded.get(suite.id, {})
        network, anchor = COST_EXAMPLES[suite.game]
        if network not in results and anchor not in results:
            continue
        shown = results.get(network) or results[anchor]
        provenance = shown["provenance"]
        seconds = {name: _elapsed(results[name]) if name in results else "-" for name in (network, anchor)}
        lines.append(
            f"| `{suite.name}` | {sum(suite.games_per_cell('test'))} | `{network}` | {seconds[network]} | "
            f"{seconds[anchor]} | {provenance['workers']} | {provenance['machine']} |"
        )
    return [*lines, ""]


def _elapsed(result: dict[str, Any]) -> str:
    """A run's wall time; a run continued from a partial file timed only its last session, and says so."""
    provenance = result["provenance"]
    resumed = " (its last session; the run was continued)" if provenance.get("resumed_units") else ""
    return f"{provenance['elapsed_s']:.0f}{resumed}"


def _details(loaded: dict[str, dict[str, dict[str, Any]]]) -> list[str]:
    lines = ["## Every cell", ""]
    for suite in suites().values():
        results = loaded.get(suite.id)
        if not results:
            continue
        metric = "score" if suite.game == "friday" else "margin"
        lines += [
            f"### `{suite.id}`: {suite.title}",
            "",
            f"{suite.description} Test split: seed {suite.split('test').seed}, {suite.split('test').deals} deals "
            "per cell. Win share, then normalised score, then "
            + ("the mean score." if metric == "score" else "the margin (the others' mean points minus the agent's)."),
            "",
            "| agent | " + " | ".join(cell.name for cell in suite.cells) + " | reproduce with |",
            "|" + " --- |" * (len(suite.cells) + 2),
        ]
        for agent, result in sorted(results.items(), key=lambda item: (-_score(item[1]), item[0])):
            cells = []
            for cell in result["cells"]:
                normalised = "" if cell["normalised"] is None else f"<br>{format_interval(cell['normalised'], 2)}"
                win, second = format_interval(cell["win_share"], 3), format_interval(cell[metric], 1)
                cells.append(f"{win}{normalised}<br>{second}")
            command = (
                f"`friday13 benchmark --agent {shlex.quote(agent)} --suite {suite.name}`"
                if registry_of(suite.game).builds(recorded_spec(agent).name)
                else "an agent object: `run_benchmark(agent, ...)` with its author's code"
            )
            lines.append(f"| `{agent}` | " + " | ".join(cells) + f" | {command} |")
        lines.append("")
    return lines


def _score(result: dict[str, Any] | None) -> float:
    if result is None or result.get("normalised") is None:
        return -math.inf
    return float(result["normalised"]["iqm"]["value"])


def _normalised(result: dict[str, Any] | None) -> str:
    if result is None or result.get("normalised") is None:
        return "-"
    return format_interval(result["normalised"]["iqm"], 2)


def format_interval(interval: dict[str, float | None], digits: int) -> str:
    """``value [low, high]`` of an interval in its JSON form, or the value alone where it is undefined."""
    value, low, high = interval["value"], interval["low"], interval["high"]
    assert value is not None
    if low is None or high is None:
        return f"{value:.{digits}f}"
    return f"{value:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"
