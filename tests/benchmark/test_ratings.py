"""Ratings at mixed tables: seeded lineups of 3-6 different agents, Plackett-Luce ratings that a seed reproduces
exactly and that order agents by their points, and bad pools refused before any game."""

from __future__ import annotations

import io
import json
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from friday13_env.benchmark import ratings
from friday13_env.cli import main
from friday13_env.core.specs import AgentSpec

pytest.importorskip("openskill")

POOL = tuple(AgentSpec(name) for name in ("a", "b", "c", "d", "e", "f", "g"))
THREE = ["random", "cautious", "majority"]


@pytest.fixture(scope="module")
def rated() -> dict[str, Any]:
    """Eight tables of the three fast anchors, in this process."""
    return ratings.run_ratings(THREE, 8, seed=1, workers=1)


def no_game(unit: object) -> None:
    raise AssertionError("a table was played")


def test_a_table_seats_three_to_six_different_agents() -> None:
    """Every lineup is 3-6 distinct agents of the pool; all four sizes occur; a pool of 3 always seats all 3."""
    lineups = [ratings.table_lineup(POOL, 5, table) for table in range(200)]
    for lineup in lineups:
        assert 3 <= len(lineup) <= 6
        assert len(set(lineup)) == len(lineup) and set(lineup) <= set(POOL)
    assert {len(lineup) for lineup in lineups} == {3, 4, 5, 6}
    assert len({lineup[0] for lineup in lineups}) == len(POOL)  # every agent gets the first seat sometimes
    small = POOL[:3]
    assert all(sorted(ratings.table_lineup(small, 5, t), key=str) == list(small) for t in range(20))


def test_a_seed_gives_the_same_tables() -> None:
    """The lineup of table ``t`` depends only on the seed and ``t``; another seed gives other tables."""
    first = [ratings.table_lineup(POOL, 5, table) for table in range(50)]
    assert first == [ratings.table_lineup(POOL, 5, table) for table in range(50)]
    assert first[10:20] == [ratings.table_lineup(POOL, 5, table) for table in range(10, 20)]
    assert first != [ratings.table_lineup(POOL, 6, table) for table in range(50)]


def test_a_seed_reproduces_the_ratings_exactly(rated: dict[str, Any]) -> None:
    """Two runs of the same pool, tables and seed agree on every game and rating, on one process or two."""
    again = ratings.run_ratings(THREE, 8, seed=1, workers=2)
    assert again["games"] == rated["games"]
    assert again["ratings"] == rated["ratings"]
    other = ratings.run_ratings(THREE, 8, seed=2, workers=1)
    assert other["games"] != rated["games"]


def test_the_ratings_describe_the_games(rated: dict[str, Any]) -> None:
    """8 tables of 3 agents, each deal in 3 rotations; the scripted agents rate above ``random``."""
    assert rated["format"] == ratings.RATINGS_FORMAT
    assert (rated["agents"], rated["tables"], rated["seed"]) == (THREE, 8, 1)
    assert len(rated["games"]) == 8
    for table in rated["games"]:
        assert sorted(table["lineup"]) == sorted(THREE)
        assert len(table["points"]) == 3 and all(len(points) == 3 for points in table["points"])
    scores = rated["ratings"]
    assert all(scores[name]["games"] == 24 for name in THREE)
    for name in THREE:
        assert scores[name]["ordinal"] == pytest.approx(scores[name]["mu"] - 3 * scores[name]["sigma"])
        assert scores[name]["sigma"] < 25 / 3  # the games made every agent more certain
    assert scores["cautious"]["mu"] > scores["random"]["mu"]
    assert scores["majority"]["mu"] > scores["random"]["mu"]
    json.dumps(rated, allow_nan=False)  # JSON-ready


def test_fewer_points_rate_higher() -> None:
    """On hand-made tables where ``A`` always has the fewest points, ``A`` is rated first, and ties tie."""
    tables = [
        {"lineup": ["A", "B", "C"], "points": [[0, 10, 20], [1, 5, 30]]},
        {"lineup": ["C", "A", "B"], "points": [[15, 2, 9], [40, 0, 3]]},
    ]
    found = ratings.fit(tables, ["A", "B", "C"])
    order = sorted(found, key=lambda name: -found[name]["ordinal"])
    assert order == ["A", "B", "C"]
    assert {name: found[name]["games"] for name in found} == {"A": 4, "B": 4, "C": 4}
    tied = ratings.fit([{"lineup": ["A", "B", "C"], "points": [[5, 5, 5]] * 3}], ["A", "B", "C"])
    assert tied["A"]["mu"] == pytest.approx(tied["B"]["mu"]) == pytest.approx(tied["C"]["mu"])
    untouched = ratings.fit([], ["A", "B", "C"])
    assert untouched["A"] == untouched["C"] and untouched["A"]["games"] == 0


@pytest.mark.parametrize(
    ("agents", "tables", "message"),
    [
        (["random", "random", "cautious"], 4, r"agent 'random' is listed twice, in \['random', 'random', 'cautious'\]"),
        (["random", "cautious"], 4, r"at least 3 different agents"),
        (["random", "cautious", "nobody"], 4, r"unknown .*agent 'nobody'"),
        (["random", "cautious", "search:budget"], 4, r"options are written key=value"),
        (THREE, 0, r"tables"),
        (THREE, -1, r"tables"),
    ],
)
def test_a_bad_pool_is_refused_before_any_game(
    agents: list[str], tables: int, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A repeated agent, fewer than 3, an unknown spec or no tables: a ``ValueError`` and no table played."""
    monkeypatch.setattr(ratings, "play_tables", no_game)
    with pytest.raises(ValueError, match=message):
        ratings.run_ratings(agents, tables, seed=0, workers=1)


def test_bad_counts_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A negative seed or zero workers: a ``ValueError`` before any game."""
    monkeypatch.setattr(ratings, "play_tables", no_game)
    with pytest.raises(ValueError, match=r"seed"):
        ratings.run_ratings(THREE, 4, seed=-1, workers=1)
    with pytest.raises(ValueError, match=r"workers"):
        ratings.run_ratings(THREE, 4, seed=0, workers=0)


def test_a_difference_in_mu_reads_as_a_win_share() -> None:
    """No difference is the equal seat of 4 players (0.25); the share grows with the difference, below 1."""
    shares = ratings.win_share_of_difference([0.0, 1.0, 2.0, 4.0, 8.0], 4.0)
    assert shares[0] == pytest.approx(0.25, abs=1e-9)
    assert all(a < b for a, b in pairwise(shares))
    assert shares[-1] < 1.0
    assert ratings.win_share_of_difference([0.0], 1.0)[0] == pytest.approx(0.25, abs=1e-9)


def test_the_ratings_command_writes_its_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``friday13 ratings`` writes the result of ``run_ratings``; a repeated agent exits 2 and writes nothing."""
    out = tmp_path / "ratings.json"
    argv = ["ratings", "--agents", *THREE, "--tables", "4", "--seed", "1", "--workers", "1", "--out", str(out)]
    printed = io.StringIO()
    assert main(argv, output_stream=printed) == 0
    written = json.loads(out.read_text())
    assert written["games"] == ratings.run_ratings(THREE, 4, seed=1, workers=1)["games"]
    assert f"wrote {out}" in printed.getvalue()
    bad = tmp_path / "bad.json"
    with pytest.raises(SystemExit) as stop:
        main(["ratings", "--agents", "random", "random", "cautious", "--out", str(bad)], output_stream=io.StringIO())
    assert stop.value.code == 2
    assert "at least 3 different agents" in capsys.readouterr().err
    assert not bad.exists()
