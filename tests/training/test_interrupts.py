"""Ctrl-C and SIGTERM in a run script: the training loop saves what it can, ``run_main`` ends with one line."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from typing import Any

import pytest
from friday13_training.runs import Interrupted, run_main


@dataclass
class NoFlags:
    """A script without flags: ``run_main`` only needs a dataclass to tell which flags were given."""


def test_run_main_ends_with_one_line_and_the_shells_status(capsys: pytest.CaptureFixture[str]) -> None:
    def train(args: Any, given: set[str]) -> None:
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Interrupted as stop:
            stop.saved = "checkpoint at 4,096 timesteps in runs/x; resume with --resume"
            raise

    with pytest.raises(SystemExit) as exit_:
        run_main(NoFlags, lambda argv: NoFlags(), train, [])
    assert exit_.value.code == 128 + signal.SIGTERM
    err = capsys.readouterr().err
    assert err == "stopped by SIGTERM: checkpoint at 4,096 timesteps in runs/x; resume with --resume\n"


def test_run_main_says_when_nothing_was_saved(capsys: pytest.CaptureFixture[str]) -> None:
    def train(args: Any, given: set[str]) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(SystemExit) as exit_:
        run_main(NoFlags, lambda argv: NoFlags(), train, [])
    assert exit_.value.code == 128 + signal.SIGINT
    assert capsys.readouterr().err == "stopped by SIGINT: nothing was saved\n"
