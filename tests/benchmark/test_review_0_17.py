"""The benchmark review of 0.17: ``friday13 benchmark --out`` inside its own ``--replays`` folder was allowed, where
a replay file of the same name would replace the result (``friday13 evaluate`` refuses any output in that folder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from friday13_env.benchmark import command
from tests.benchmark.helpers import friday13, small_suite


def test_an_out_inside_the_replays_folder_is_refused_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(command, "suites", lambda: {"tiny": small_suite()})
    replays = tmp_path / "replays"
    out = replays / "nested" / "random.json"
    argv = ["benchmark", "--agent", "random", "--suite", "tiny", "--workers", "1", "--no-progress", "--out", str(out)]
    code, _ = friday13([*argv, "--replays", str(replays), "--replay-deals", "1"])
    assert code == 2
    assert f"--out {out} is inside {replays}, the folder --replays saves its files in" in capsys.readouterr().err
    assert not replays.exists()
