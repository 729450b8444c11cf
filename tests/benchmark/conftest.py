"""Fixtures shared by the benchmark tests."""

from __future__ import annotations

from typing import Any

import pytest

from friday13_env.benchmark import command, ratings


@pytest.fixture
def fake_ratings(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """``run_ratings`` as the command calls it, recording its arguments and returning a small result unplayed."""
    pytest.importorskip("openskill")
    calls: list[dict[str, Any]] = []

    def run_ratings(plan: Any, tables: int, seed: int = 0, workers: int | None = None) -> dict[str, Any]:
        calls.append({"plan": plan, "tables": tables, "seed": seed, "workers": workers})
        rating = {"mu": 25.0, "sigma": 8.0, "ordinal": 1.0, "games": 0}
        ratings_of = {spec.label: rating for spec in plan.fingerprints}
        return {"format": ratings.RATINGS_FORMAT, "format_version": 1, "ratings": ratings_of}

    monkeypatch.setattr(command, "run_ratings", run_ratings)
    return calls
