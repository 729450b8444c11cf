"""The leaderboard is generated from the committed result files and nothing else: the page on disk is what they
give, every file is a complete run of a shipped suite whose scores follow from its own rows, and a file of an
edited suite or an unfinished run is refused."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import leaderboard, runner, scores
from friday13_env.benchmark.play import SECOND_METRIC
from friday13_env.benchmark.suite import NORMALISERS, Suite, get_suite, suites
from friday13_env.cli import main
from tests.benchmark.helpers import made_result

pytest.importorskip("scipy")
pytest.importorskip("openskill")

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "results" / "benchmark"
PAGE = REPO / "docs" / "leaderboard.md"
COMMITTED = sorted(RESULTS.glob("*/*.json")) if RESULTS.is_dir() else []


def test_the_page_is_what_the_result_files_give() -> None:
    """``docs/leaderboard.md`` equals ``generate(results/benchmark)`` to the byte (``friday13 leaderboard``)."""
    if not RESULTS.is_dir():
        pytest.skip("results/benchmark/ does not exist yet: no benchmark results have been committed")
    if not PAGE.exists():
        pytest.skip("docs/leaderboard.md is not generated yet: run `friday13 leaderboard` once the results are in")
    assert leaderboard.generate(RESULTS, PAGE) == PAGE.read_text(encoding="utf-8"), "run `friday13 leaderboard`"


def expected_normalised(result: dict[str, Any], suite: Suite) -> tuple[list[Any], Any]:
    """Each cell's normalised win share and the aggregate, from the rows and the suite's shipped references."""
    rows = [np.asarray(cell, dtype=np.float64) for cell in result["rows"]]
    if not all(name in suite.references for name in NORMALISERS):
        return [None] * len(rows), None
    low, high = suite.references["random"], suite.references["search"]
    cells = []
    for cell_rows, lo, hi in zip(rows, low, high, strict=True):
        win = scores.cell_interval(cell_rows[:, 0], (0.0, 1.0))
        cells.append(scores.normalised_interval(win, lo, hi).to_dict())
    found = scores.aggregate([r[:, 0] for r in rows], low, high, suite.split(result["suite"]["split"]).seed)
    return cells, {name: interval.to_dict() for name, interval in found.items()}


@pytest.mark.parametrize("path", COMMITTED, ids=[str(p.relative_to(RESULTS)) for p in COMMITTED])
def test_a_committed_result_follows_from_its_rows(path: Path) -> None:
    """A complete run of the shipped suite of its folder and file name, whose cells and normalised scores are
    what its rows and the suite's references give."""
    data = runner.read_json(path, "benchmark result")
    assert data["complete"] is True
    suite = {suite.id: suite for suite in suites().values()}[data["suite"]["id"]]
    split = data["suite"]["split"]
    assert path.parent.name == suite.id
    assert data["suite"] == {
        "name": suite.name,
        "version": suite.version,
        "id": suite.id,
        "split": split,
        "deals_sha256": suite.deals_sha256[split],
    }
    spec = data["agent"]["spec"]
    name = leaderboard.result_name(spec)
    assert path.name == (name if split == "test" else name.replace(".json", f".{split}.json"))
    if spec in suite.anchors:
        assert data["agent"]["fingerprint"] == suite.anchors[spec]
    deals = suite.split(split).deals
    assert [len(rows) for rows in data["rows"]] == [deals] * len(suite.cells)
    metric = SECOND_METRIC[suite.game]
    for cell, rows, games, shipped in zip(
        data["cells"], data["rows"], suite.games_per_cell(split), suite.cells, strict=True
    ):
        rows = np.asarray(rows, dtype=np.float64)
        assert (cell["name"], cell["deals"], cell["games"]) == (shipped.name, deals, games)
        assert cell["win_share"] == scores.cell_interval(rows[:, 0], (0.0, 1.0)).to_dict()
        assert cell[metric] == scores.cell_interval(rows[:, 1]).to_dict()
    cells, normalised = expected_normalised(data, suite)
    assert [cell["normalised"] for cell in data["cells"]] == cells
    assert data["normalised"] == normalised


def test_the_references_are_the_normalisers_results() -> None:
    """Where a suite ships references, they are the win shares in its ``random`` and ``search`` result files."""
    for suite in suites().values():
        if not suite.references:
            continue
        measured = leaderboard.reference_scores(suite, RESULTS)
        assert measured, f"{suite.id} has references but no result files of {list(NORMALISERS)}"
        assert {name: list(values) for name, values in suite.references.items()} == measured


# -- load_results and the command, on result files written here -----------------------------------------------


def write(results: Path, data: dict[str, Any], folder: str | None = None, name: str | None = None) -> Path:
    path = results / (folder or data["suite"]["id"]) / (name or leaderboard.result_name(data["agent"]["spec"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """A result folder with two agents on ``card-4p-quick`` and one on ``friday-levels``."""
    folder = tmp_path / "results"
    quick = get_suite("card-4p-quick")
    write(folder, made_result(quick, "random", seed=1))
    write(folder, made_result(quick, "my_agents:MyAgent", seed=2))
    write(folder, made_result(get_suite("friday-levels"), "random", seed=3))
    return folder


def test_complete_results_of_shipped_suites_are_loaded(results: Path) -> None:
    """Every file is read, by suite id and agent spec; a dev-split file is accepted but not listed."""
    write(results, made_result(get_suite("card-4p-quick"), "cautious", "dev"), name="cautious.dev.json")
    loaded = leaderboard.load_results(results)
    assert {suite: sorted(found) for suite, found in loaded.items()} == {
        "card-4p-quick-v1": ["my_agents:MyAgent", "random"],
        "friday-levels-v2": ["random"],
    }
    page = leaderboard.generate(results)
    assert "`my_agents:MyAgent`" in page and "### `friday-levels-v2`" in page and "| `cautious` |" not in page


def edited(data: dict[str, Any], **suite: Any) -> dict[str, Any]:
    return {**data, "suite": {**data["suite"], **suite}}


@pytest.mark.parametrize(
    ("edit", "folder", "message"),
    [
        ({"version": 2, "id": "card-4p-quick-v2"}, "card-4p-quick-v2", r"suite 'card-4p-quick-v2' is not one this"),
        ({"id": "card-4p-v1", "name": "card-4p"}, "card-4p-v1", r"its deals are not suite card-4p-v1's frozen deals"),
        ({"deals_sha256": "0" * 64}, None, r"its deals are not suite card-4p-quick-v1's frozen deals"),
        ({}, "card-4p-v1", r"a card-4p-quick-v1 result in the folder of another suite"),
    ],
)
def test_a_result_of_an_edited_suite_is_refused(
    results: Path, edit: dict[str, Any], folder: str | None, message: str
) -> None:
    """A copied result whose suite version, id or deals were edited, or that sits in another suite's folder."""
    data = edited(made_result(get_suite("card-4p-quick"), "cautious"), **edit)
    path = write(results, data, folder=folder)
    with pytest.raises(ValueError, match=message) as error:
        leaderboard.load_results(results)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("edit", [{"version": 2}, {"name": "card-4p"}])
def test_a_result_whose_suite_name_or_version_disagrees_with_its_id_is_refused(
    results: Path, edit: dict[str, Any]
) -> None:
    """The recorded suite name and version must be those of its id."""
    write(results, edited(made_result(get_suite("card-4p-quick"), "cautious"), **edit))
    with pytest.raises(ValueError):
        leaderboard.load_results(results)


def test_an_unfinished_or_foreign_file_is_refused(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``complete: false``, a file that is not a benchmark result, or one over the size limit: a ``ValueError``."""
    data = made_result(get_suite("card-4p-quick"), "cautious")
    path = write(results, {**data, "complete": False})
    with pytest.raises(ValueError, match=r"cautious\.json: not a complete run"):
        leaderboard.load_results(results)
    path.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(ValueError, match=r"cautious\.json is not a .*friday13-benchmark-result"):
        leaderboard.load_results(results)
    write(results, data)
    leaderboard.load_results(results)
    monkeypatch.setattr(runner, "MAX_RESULT_BYTES", 1000)
    with pytest.raises(ValueError, match=r"over the 1000-byte limit; not read"):
        leaderboard.load_results(results)


def with_cost(data: dict[str, Any], **cost: Any) -> dict[str, Any]:
    return {**data, "cost": {**data["cost"], **cost}}


def with_iqm(data: dict[str, Any], value: float) -> dict[str, Any]:
    return {**data, "normalised": {**data["normalised"], "iqm": {**data["normalised"]["iqm"], "value": value}}}


def with_first_row(data: dict[str, Any], row: list[Any]) -> dict[str, Any]:
    return {**data, "rows": [[row, *data["rows"][0][1:]], *data["rows"][1:]]}


CARD_4P = get_suite("card-4p")
QUICK = get_suite("card-4p-quick")


@pytest.mark.parametrize(
    ("data", "name", "message"),
    [
        (with_iqm(made_result(CARD_4P, "cautious"), 9.99), None, r"its normalised iqm is not what its rows give"),
        (
            {**made_result(QUICK, "cautious"), "cells": made_result(QUICK, "cautious", seed=9)["cells"]},
            None,
            r"its cells are not what its rows give",
        ),
        (
            {**made_result(QUICK, "cautious"), "rows": made_result(QUICK, "cautious")["rows"][:-1]},
            None,
            r"its rows must be a list of 4 cells",
        ),
        (with_first_row(made_result(QUICK, "cautious"), [7.0, 0.0]), None, r"has win shares outside \[0, 1\]"),
        (with_first_row(made_result(QUICK, "cautious"), ["x", 0.0]), None, r"cell .*'s rows are not numbers"),
        (made_result(QUICK, "ppo-v4"), "zzz.json", r"the result of agent 'ppo-v4' in a file of another name"),
        (
            made_result(QUICK, "ppo-v4", split="dev"),
            "ppo-v4.json",
            r"in a file of another name \(expected ppo-v4\.dev\.json for the dev split\)",
        ),
        (made_result(QUICK, "a|b"), None, r"its agent spec: 'a\|b' must be 1-200 characters without"),
        ({**made_result(QUICK, "x"), "agent": {"spec": ["x"]}}, "x.json", r"its agent spec: \['x'\]"),
        (with_cost(made_result(QUICK, "cautious"), ms_per_move="0.5"), None, r"its cost per move must be a number"),
        (with_cost(made_result(QUICK, "cautious"), decisions=True), None, r"its cost's decisions must be a count"),
        (with_cost(made_result(QUICK, "cautious"), ms_per_move=10**400), None, r"its cost per move must be a number"),
        ({**made_result(QUICK, "cautious"), "suite": ["card-4p-quick-v1"]}, None, r"a benchmark result without its s"),
        (edited(made_result(QUICK, "cautious"), split=["test"]), None, r"split \['test'\] is not one of suite"),
        (edited(made_result(QUICK, "cautious"), extra=1), None, r"its suite holds fields a result's does not"),
        ({**made_result(QUICK, "cautious"), "provenance": {}}, None, r"a field is missing or of the wrong kind"),
        (
            {**made_result(QUICK, "majority"), "agent": {**made_result(QUICK, "x")["agent"], "spec": "majority"}},
            None,
            r"anchor 'majority' played with fingerprint '0123456789abcdef', not the suite's",
        ),
    ],
)
def test_a_result_whose_figures_its_rows_do_not_give_is_refused(
    results: Path, data: dict[str, Any], name: str | None, message: str
) -> None:
    """Every figure the page shows must follow from the file's rows and the shipped suite: an edited score or cell,
    rows of the wrong shape or range, a file named for another agent (which would replace that agent's row), a spec
    that would break the table, a cost or header field of the wrong kind, an anchor that played otherwise. Each is a
    ``ValueError`` naming the file, never a traceback or a wrong row."""
    folder = data["suite"]["id"] if isinstance(data["suite"], dict) and "id" in data["suite"] else QUICK.id
    path = write(results, data, folder=folder, name=name)
    with pytest.raises(ValueError, match=message) as error:
        leaderboard.load_results(results)
    assert str(path) in str(error.value)


@pytest.mark.parametrize("kind", ["folder", "deep", "device"])
def test_a_result_that_cannot_be_read_is_a_clear_error(results: Path, kind: str) -> None:
    """A folder named like a result, JSON nested too deeply to parse, a link to a device: a ``ValueError`` naming
    it, and nothing read from a device."""
    path = results / QUICK.id / "odd.json"
    if kind == "folder":
        path.mkdir()
    elif kind == "deep":
        path.write_text("[" * 100_000)
    else:
        path.symlink_to("/dev/zero")
    with pytest.raises(ValueError, match=r"odd\.json (is not a regular file|is not JSON: nested too deeply)"):
        leaderboard.load_results(results)


def test_a_results_folder_that_does_not_exist_is_an_error(tmp_path: Path) -> None:
    """A mistyped ``--results`` is an error (exit 2), not an empty page written over the real one."""
    page = tmp_path / "leaderboard.md"
    with pytest.raises(ValueError, match=r"no results folder .*missing"):
        leaderboard.load_results(tmp_path / "missing")
    with pytest.raises(SystemExit) as stop:
        leaderboard_command(["--results", str(tmp_path / "missing"), "--out", str(page)])
    assert stop.value.code == 2 and not page.exists()


def test_the_card_table_has_as_many_header_cells_as_columns(tmp_path: Path) -> None:
    """With only the solo game's results (no card suite in the table), the card table's header and its separator
    still have the same number of cells."""
    folder = tmp_path / "results"
    write(folder, made_result(get_suite("friday-levels"), "random", seed=3))
    page = leaderboard.generate(folder)
    header, separator = page.split("## Friday the 13th (card game)\n\n")[1].splitlines()[:2]
    assert header.count("|") == separator.count("|") == 5


def test_without_openskill_the_command_says_which_extra_to_install(
    results: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``friday13 leaderboard`` with a ratings file but no openskill: argparse's one-line error naming the extra."""
    shutil.copy(RESULTS / leaderboard.RATINGS_FILE, results / leaderboard.RATINGS_FILE)
    monkeypatch.setitem(sys.modules, "openskill.models", None)
    with pytest.raises(SystemExit) as stop:
        leaderboard_command(["--results", str(results), "--out", str(tmp_path / "page.md")])
    assert stop.value.code == 2 and "benchmark" in capsys.readouterr().err


def ratings_edited(edit: Any) -> dict[str, Any]:
    data = json.loads((RESULTS / leaderboard.RATINGS_FILE).read_text())
    edit(data)
    return data


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda d: d["ratings"]["ppo-v4"].update(mu=40.0), r"the rating of ppo-v4 is not what its games give"),
        (lambda d: d.update(ratings=[]), r"its ratings must name exactly its agents"),
        (lambda d: d["ratings"].pop("random"), r"its ratings must name exactly its agents"),
        (lambda d: d["games"][0]["points"][0].__setitem__(0, "8"), r"its games must be tables of 3-6 of its agents"),
        (lambda d: d["games"][0]["lineup"].__setitem__(0, "stranger"), r"its games must be tables of 3-6"),
        (lambda d: d.update(tables=401), r"its table count and seed must be those of its games"),
        (lambda d: d.pop("provenance"), r"a field is missing or of the wrong kind"),
        (lambda d: d["provenance"].update(command="a | b"), r"its command must be 1-2000 characters"),
        (lambda d: d["agents"].append("x|y"), r"its agent 'x\|y'"),
    ],
)
def test_a_ratings_file_whose_ratings_its_games_do_not_give_is_refused(results: Path, edit: Any, message: str) -> None:
    """The ratings shown are fitted again from the file's games and compared; every field the page prints is
    checked: a ``ValueError`` naming the file."""
    (results / leaderboard.RATINGS_FILE).write_text(json.dumps(ratings_edited(edit)))
    with pytest.raises(ValueError, match=message):
        leaderboard.generate(results)


def leaderboard_command(argv: list[str]) -> tuple[int, str]:
    printed = io.StringIO()
    return main(["leaderboard", *argv], output_stream=printed), printed.getvalue()


def test_the_command_writes_and_checks_the_page(results: Path, tmp_path: Path) -> None:
    """``friday13 leaderboard`` writes ``generate``'s page; ``--check`` exits 0 while the page matches and 1 when
    it differs or is missing, without touching it."""
    page = tmp_path / "leaderboard.md"
    check = ["--check", "--results", str(results), "--out", str(page)]
    assert leaderboard_command(check)[0] == 1  # no page yet
    assert not page.exists()
    assert leaderboard_command(["--results", str(results), "--out", str(page)]) == (0, f"wrote {page}\n")
    assert page.read_text() == leaderboard.generate(results, page)
    code, printed = leaderboard_command(check)
    assert code == 0 and "matches" in printed
    page.write_text(page.read_text().replace("random", "rand0m", 1))
    code, printed = leaderboard_command(check)
    assert code == 1 and "differs" in printed
    assert "rand0m" in page.read_text()
    write(results, made_result(get_suite("card-4p-quick"), "cautious", seed=4))  # a new file: the page is stale
    leaderboard_command(["--results", str(results), "--out", str(page)])
    assert leaderboard_command(check)[0] == 0
    shutil.rmtree(results / "friday-levels-v2")
    assert leaderboard_command(check)[0] == 1


def test_a_bad_result_file_makes_the_command_exit_2(results: Path, tmp_path: Path) -> None:
    """A file the leaderboard refuses is argparse's error (exit 2), and no page is written."""
    write(results, {**made_result(get_suite("card-4p-quick"), "cautious"), "complete": False})
    page = tmp_path / "leaderboard.md"
    with pytest.raises(SystemExit) as stop:
        leaderboard_command(["--results", str(results), "--out", str(page)])
    assert stop.value.code == 2
    assert not page.exists()


def test_the_page_lists_agents_by_score(results: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With references, the card table ranks agents by normalised IQM on ``card-4p``, best first, with the
    figures of their files."""
    main_suite = dataclasses.replace(
        get_suite("card-4p"), references={"random": (0.25, 0.0, 0.0, 0.0), "search": (0.9, 0.6, 0.5, 0.25)}
    )
    monkeypatch.setattr(leaderboard, "suites", lambda: {**suites(), "card-4p": main_suite})
    weak, strong = made_result(main_suite, "weak", win=0.2, seed=5), made_result(main_suite, "strong", win=0.8)
    for data in (weak, strong):
        write(results, data)
    assert strong["normalised"]["iqm"]["value"] > weak["normalised"]["iqm"]["value"]
    page = leaderboard.generate(results)
    card = page[page.index("## Friday the 13th (card game)") : page.index("## Friday (solo)")]
    assert card.index("| `strong` |") < card.index("| `weak` |")
    assert leaderboard.format_interval(strong["normalised"]["iqm"], 2) in card
    assert "| `random` |" not in card  # card-4p-quick is left out of the main table


def test_the_page_does_not_depend_on_the_hash_seed(results: Path) -> None:
    """Generated in three processes with different ``PYTHONHASHSEED``s, the page is the same text: ``--check``
    must not fail on a machine that hashes strings differently."""
    card_4p = get_suite("card-4p")
    for index, spec in enumerate(["alpha", "bravo", "charlie", "delta", "echo"]):
        write(results, made_result(card_4p, spec, seed=index))
    script = "import sys; from friday13_env.benchmark import leaderboard; print(leaderboard.generate(sys.argv[1]))"
    pages = {
        subprocess.run(
            [sys.executable, "-c", script, str(results)],
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        ).stdout
        for seed in (1, 2, 3)
    }
    assert len(pages) == 1
