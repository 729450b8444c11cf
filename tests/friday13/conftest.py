"""Fixtures shared by the batched-engine tests."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env.friday13.batched.engine import GameBatch
from tests.friday13.batch_deals import DealLog


@pytest.fixture
def deal_log(monkeypatch: pytest.MonkeyPatch) -> DealLog:
    """A ``DealLog`` fed by every ``GameBatch._deal`` call of the test."""
    log = DealLog()
    deal = GameBatch._deal

    def spy(self: GameBatch, games: np.ndarray) -> None:
        deal(self, games)
        log.record(self, games)

    monkeypatch.setattr(GameBatch, "_deal", spy)
    return log
