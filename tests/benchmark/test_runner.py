"""``run_benchmark`` gives the same rows on any number of workers, continues an interrupted run to the same
result, refuses a partial file that is not this run's, and ``friday13 benchmark`` checks its options first."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from friday13_env.benchmark import command, play, runner
from friday13_env.benchmark.suite import Cell, Suite, suites
from friday13_env.cli import main
from friday13_env.friday13.evaluation.duplicate import seatings
from tests.benchmark.helpers import anchor_fingerprint, small_suite

DEALS = 5
"""Two units per cell (``UNIT_DEALS`` is 4): the second one short."""


@pytest.fixture(scope="module")
def suite() -> Suite:
    return small_suite(deals=DEALS)


@pytest.fixture(scope="module")
def majority(suite: Suite) -> dict[str, Any]:
    """``majority`` on the small suite, uninterrupted, in this process."""
    return runner.run_benchmark("majority", suite, workers=1)


class Interrupt:
    """A progress callback that presses Ctrl-C once ``units`` units have finished (its first call is the start)."""

    def __init__(self, units: int) -> None:
        self.units = units
        self.calls: list[tuple[int, int]] = []

    def __call__(self, done: int, total: int) -> None:
        self.calls.append((done, total))
        if len(self.calls) > self.units:
            raise KeyboardInterrupt


def test_the_workers_do_not_change_the_result(suite: Suite, majority: dict[str, Any]) -> None:
    """One process or a spawn pool of two: the same rows, cells and scores (``reproduces``)."""
    parallel = runner.run_benchmark("majority", suite, workers=2)
    assert runner.reproduces(majority, parallel)
    assert parallel["rows"] == majority["rows"]
    assert parallel["cost"]["decisions"] == majority["cost"]["decisions"]
    assert (majority["provenance"]["workers"], parallel["provenance"]["workers"]) == (1, 2)
    other = runner.run_benchmark("cautious", suite, workers=1)
    assert not runner.reproduces(majority, other)


def test_a_result_counts_every_rotation_of_every_deal(suite: Suite, majority: dict[str, Any]) -> None:
    """Games per cell are deals x distinct rotations; one row per deal; win shares and figures add up."""
    expected = [DEALS * len(seatings(["agent", *cell.opponents])) for cell in suite.cells]
    assert expected == [DEALS * 4, DEALS * 3] == suite.games_per_cell("test")
    assert [cell["games"] for cell in majority["cells"]] == expected
    assert [cell["deals"] for cell in majority["cells"]] == [DEALS, DEALS]
    assert [cell["name"] for cell in majority["cells"]] == [cell.name for cell in suite.cells]
    assert majority["complete"] is True and majority["normalised"] is None  # the small suite has no references
    assert majority["suite"] == {
        "name": "tiny",
        "version": 1,
        "id": "tiny-v1",
        "split": "test",
        "deals_sha256": suite.deals_sha256["test"],
    }
    assert majority["agent"] == {
        "spec": "majority",
        "fingerprint": anchor_fingerprint("friday13", "standard", "majority"),
        "checkpoint_sha256": None,
    }
    for cell, rows in zip(majority["cells"], majority["rows"], strict=True):
        rows = np.asarray(rows)
        assert rows.shape == (DEALS, len(play.METRICS))
        assert np.all((rows[:, 0] >= 0) & (rows[:, 0] <= 1))
        assert cell["win_share"]["value"] == pytest.approx(rows[:, 0].mean())
        assert 0 <= cell["win_share"]["low"] <= cell["win_share"]["value"] <= cell["win_share"]["high"] <= 1
        assert cell["margin"]["value"] == pytest.approx(rows[:, 1].mean())
    assert majority["cells"][0]["win_share"]["value"] > 0.5  # majority beats three random players
    assert majority["cost"]["decisions"] > 0 and majority["cost"]["ms_per_move"] > 0


def test_the_dev_split_plays_other_deals(suite: Suite, majority: dict[str, Any]) -> None:
    """``split="dev"`` plays the dev deals: another digest and other rows."""
    dev = runner.run_benchmark("majority", suite, split="dev", workers=1)
    assert dev["suite"]["split"] == "dev" and dev["suite"]["deals_sha256"] == suite.deals_sha256["dev"]
    assert dev["rows"] != majority["rows"]
    with pytest.raises(ValueError, match=r"has no split 'train'"):
        runner.run_benchmark("majority", suite, split="train", workers=1)


def test_an_agent_against_copies_of_itself_is_an_equal_seat() -> None:
    """``random`` against three ``random``s (and two at 3 players): exactly ``1/n``, margin 0, nothing played."""
    own = small_suite(
        (Cell("4p-vs-random", 4, "standard", ("random",) * 3), Cell("3p-vs-random", 3, "standard", ("random",) * 2)),
        deals=DEALS,
    )
    result = runner.run_benchmark("random", own, workers=1)
    for cell, rows, players in zip(result["cells"], result["rows"], (4, 3), strict=True):
        assert rows == [[1 / players, 0.0]] * DEALS
        assert cell["win_share"] == {"value": 1 / players, "low": 1 / players, "high": 1 / players}
        assert cell["margin"] == {"value": 0.0, "low": 0.0, "high": 0.0}
    assert result["cost"] == {"ms_per_move": None, "decisions": 0}


def test_an_interrupted_run_continues_to_the_same_result(
    suite: Suite, majority: dict[str, Any], tmp_path: Path
) -> None:
    """Ctrl-C after two units leaves only ``OUT.partial`` (incomplete, those units); the next run plays the rest,
    writes ``OUT``, removes the partial file, and reproduces an uninterrupted run."""
    out = tmp_path / "majority.json"
    partial = runner.partial_path(out)
    interrupt = Interrupt(units=2)
    with pytest.raises(KeyboardInterrupt):
        runner.execute(runner.prepare("majority", suite, workers=1, out=out), interrupt)
    assert not out.exists()
    kept = json.loads(partial.read_text())
    assert kept["complete"] is False
    assert sorted(kept["units"]) == ["0:0", "0:4"]  # the first cell's two units
    assert kept["suite"] == majority["suite"] and kept["agent"] == majority["agent"]
    assert [done for done, _ in interrupt.calls] == [0, 16, 20]

    progress: list[tuple[int, int]] = []
    resumed = runner.execute(runner.prepare("majority", suite, workers=1, out=out), lambda *p: progress.append(p))
    assert progress[0] == (20, 35) and progress[-1] == (35, 35) and len(progress) == 3
    assert out.exists() and not partial.exists()
    assert json.loads(out.read_text()) == resumed
    assert resumed["provenance"]["resumed_units"] == 2
    assert resumed["provenance"]["elapsed_note"] == "this session only"
    assert runner.reproduces(resumed, majority)
    assert resumed["rows"] == majority["rows"]


def test_a_partial_run_of_another_agent_is_refused(suite: Suite, tmp_path: Path) -> None:
    """A partial file made for ``majority`` is never mixed into a ``cautious`` run: ``prepare`` names the other
    agent, and the file is left as it was."""
    out = tmp_path / "out.json"
    other = runner.prepare("majority", suite, workers=1)
    text = json.dumps({**other.header, "complete": False, "units": {}})
    runner.partial_path(out).write_text(text)
    with pytest.raises(ValueError, match=r"is a partial run of another agent \(\{'spec': 'majority'"):
        runner.prepare("cautious", suite, workers=1, out=out)
    with pytest.raises(ValueError, match=r"is a partial run of another suite"):
        runner.prepare("majority", small_suite(deals=DEALS, seeds=(21, 22)), workers=1, out=out)
    with pytest.raises(ValueError, match=r"is a partial run of another suite"):
        runner.prepare("majority", suite, split="dev", workers=1, out=out)
    assert runner.partial_path(out).read_text() == text
    runner.prepare("majority", suite, workers=1, out=out)  # its own run takes it


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", r"is not JSON"),
        ("[1, 2]", r"is not a .*friday13-benchmark-result"),
        (json.dumps({"format": runner.RESULT_FORMAT, "format_version": 99}), r"has format version 99"),
        ('{"format": NaN}', r"is not JSON: NaN is not a number a result holds"),
        ("[" * 100_000, r"is not JSON: nested too deeply"),
    ],
)
def test_a_damaged_partial_file_is_a_clear_error(suite: Suite, tmp_path: Path, content: str, message: str) -> None:
    """Garbage, another JSON document or another format version in ``OUT.partial``: a ``ValueError`` naming it."""
    out = tmp_path / "out.json"
    runner.partial_path(out).write_text(content)
    with pytest.raises(ValueError, match=rf"partial benchmark file .*out\.json\.partial {message}"):
        runner.prepare("majority", suite, workers=1, out=out)


@pytest.mark.parametrize(
    "units",
    [
        {"0:0": {"rows": [[0.5]], "act_seconds": 0.0, "decisions": 1}},
        {"0:0": {"rows": [[0.5, "x"]] * 4, "act_seconds": 0.0, "decisions": 1}},
        {"0:0": {"act_seconds": 0.0, "decisions": 1}},
        {"0:0": [1, 2]},
        [],
        {"0:1": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1}},  # not where a unit starts
        {"-1:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1}},  # (Python's last cell)
        {"9:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1}},  # no such cell
        {"0:0": {"rows": [[0.5, 1.0]], "act_seconds": 0.0, "decisions": 1}},  # 1 of its 4 deals
        {"0:4": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1}},  # the last unit holds 1 deal
        {"0:0": {"rows": [[7.0, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1}},  # a win share of 7
        {"0:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": "1", "decisions": 1}},
        {"0:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": 1.9}},
        {"0:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": True}},
        {"0:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": -1.0, "decisions": 1}},
        {"0:0": {"rows": [[0.5, 1.0]] * 4, "act_seconds": 0.0, "decisions": -1}},
    ],
)
def test_a_partial_file_with_damaged_units_is_refused(suite: Suite, tmp_path: Path, units: Any) -> None:
    """This run's header but units that are not this run's units (a cell or a first deal it does not have, another
    number of deals) or not rows of two finite numbers with win shares in [0, 1], or without a time in seconds and
    a count of moves: a ``ValueError`` saying to delete it, before any game."""
    out = tmp_path / "out.json"
    header = runner.prepare("majority", suite, workers=1).header
    runner.partial_path(out).write_text(json.dumps({**header, "complete": False, "units": units}))
    with pytest.raises(ValueError, match=r"is a damaged partial benchmark file .*; delete it to start again"):
        runner.prepare("majority", suite, workers=1, out=out)


def test_an_oversized_partial_file_is_refused_unread(
    suite: Suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over ``MAX_RESULT_BYTES`` the file is refused by its size: garbage in it is never parsed."""
    out = tmp_path / "out.json"
    runner.partial_path(out).write_text("x" * 101)
    monkeypatch.setattr(runner, "MAX_RESULT_BYTES", 100)
    with pytest.raises(ValueError, match=r"is 101 bytes, over the 100-byte limit; not read"):
        runner.prepare("majority", suite, workers=1, out=out)
    monkeypatch.setattr(runner, "MAX_RESULT_BYTES", 101)
    with pytest.raises(ValueError, match=r"is not JSON"):
        runner.prepare("majority", suite, workers=1, out=out)


@pytest.mark.parametrize("target", ["/dev/zero", "folder"])
def test_a_file_that_is_not_a_regular_file_is_refused_unread(suite: Suite, tmp_path: Path, target: str) -> None:
    """A link to a device (which reports no size and never ends) or a folder in the place of a partial file: a
    ``ValueError``, and nothing is read from it."""
    out = tmp_path / "out.json"
    if target == "folder":
        runner.partial_path(out).mkdir()
    else:
        runner.partial_path(out).symlink_to(target)
    with pytest.raises(ValueError, match=r"out\.json\.partial is not a regular file; not read"):
        runner.prepare("majority", suite, workers=1, out=out)


def test_bad_worker_counts_are_refused(suite: Suite) -> None:
    """``workers`` must be a positive int, checked before anything is built."""
    for workers in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match=r"workers"):
            runner.prepare("majority", suite, workers=workers)  # type: ignore[arg-type]


# -- friday13 benchmark ----------------------------------------------------------------------------------


def benchmark(argv: list[str]) -> tuple[int, str]:
    """``friday13 benchmark ARGV`` in this process: its exit code and what it printed."""
    output = io.StringIO()
    try:
        code = main(["benchmark", *argv], output_stream=output)
    except SystemExit as stop:
        code = int(stop.code or 0)
    return code, output.getvalue()


def test_the_command_lists_every_suite() -> None:
    """``--list`` prints each suite's name, version, game and cells."""
    code, printed = benchmark(["--list"])
    assert code == 0
    for suite in suites().values():
        assert f"{suite.name} (v{suite.version}, {suite.game}): {suite.title}" in printed
        assert all(cell.name in printed for cell in suite.cells)
    assert "card-4p (v1, friday13)" in printed and "friday-levels (v2, friday)" in printed


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--suite", "nope", "--agent", "random"], r"unknown suite 'nope'; suites: \['card-4p', 'card-4p-quick'"),
        (["--list", "--agent", "x"], r"--list takes no --agent or --suite"),
        (["--list", "--suite", "card-4p"], r"--list takes no --agent or --suite"),
        (["--agent", "random"], r"give --agent SPEC and --suite NAME"),
        (["--suite", "card-4p", "--agent", "nobody"], r"unknown .*agent 'nobody'; known agents: \['cautious'"),
        (["--suite", "card-4p", "--agent", "random", "--workers", "0"], r"must be a positive integer"),
        (["--suite", "card-4p", "--agent", "random", "--split", "train"], r"invalid choice: 'train'"),
    ],
)
def test_the_command_refuses_bad_options(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 2 with argparse's message, and no game played."""

    def no_game(unit: object) -> None:
        raise AssertionError("a game was played")

    monkeypatch.setattr(runner, "play_unit", no_game)
    code, _ = benchmark(argv)
    assert code == 2
    assert re.search(message, capsys.readouterr().err)


def test_the_command_keeps_a_complete_result_unless_told(
    suite: Suite, majority: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    """The command plays a suite into ``--out``; run again it refuses to replace the file (exit 2, file kept)
    unless ``--overwrite``, and continues a partial file it finds, saying so."""
    monkeypatch.setattr(command, "suites", lambda: {"tiny": suite})
    out = tmp_path / "res" / "majority.json"
    argv = ["--agent", "majority", "--suite", "tiny", "--workers", "1", "--no-progress", "--out", str(out)]
    code, printed = benchmark(argv)
    assert code == 0, capsys.readouterr().err
    assert printed.startswith("majority on tiny-v1 (test split)") and f"wrote {out}" in printed
    written = json.loads(out.read_text())
    assert runner.reproduces(written, majority)

    kept = out.read_text()
    code, _ = benchmark(argv)
    assert code == 2
    assert f"{out} holds a complete result; --overwrite replaces it" in capsys.readouterr().err
    assert out.read_text() == kept

    with pytest.raises(KeyboardInterrupt):
        runner.execute(runner.prepare("majority", suite, workers=1, out=out), Interrupt(units=1))
    code, printed = benchmark([*argv, "--overwrite"])
    assert code == 0
    assert f"continuing the partial run in {out}.partial" in printed
    assert runner.reproduces(json.loads(out.read_text()), majority)
    assert not runner.partial_path(out).exists()


def test_without_the_benchmark_extra_a_referenced_suite_is_refused_before_any_game(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A suite with references needs scipy for its aggregate: without it, ``prepare`` names the extra at once."""
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ModuleNotFoundError, match=r'pip install "friday13-env\[benchmark\]"'):
        runner.prepare("random", "friday-levels", workers=1)
