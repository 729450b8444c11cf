"""Typed results of a tournament, and their JSON form."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from friday13_env.core.stats import CONFIDENCE, Estimate


@dataclass(frozen=True)
class AgentStats:
    """How one agent (all its copies together) did in one matchup, per game."""

    label: str
    seats: int
    """How many seats the agent fills at the table (e.g. 3 for the copies in "A vs B" at 4 players)."""
    win_rate: Estimate
    """Share of the wins; a win shared by ``k`` players counts ``1/k``. Per seat: ``1/n`` is an equal seat."""
    points: Estimate
    """Bad-luck points per game (lower is better)."""
    rank: Estimate
    """Rank per game, 1 = best; ties get the average of the ranks they span."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "seats": self.seats,
            "win_rate": self.win_rate.to_dict(),
            "points": self.points.to_dict(),
            "rank": self.rank.to_dict(),
        }


@dataclass(frozen=True)
class MatchupResult:
    """One matchup at one table size."""

    label: str
    focus: str | None
    """The focus agent of an "A vs copies of B" matchup; ``None`` for a mixed table."""
    opponents: tuple[str, ...]
    num_players: int
    deals: int
    games: int
    """Games actually played: every deal once per distinct seat rotation."""
    agents: tuple[AgentStats, ...]

    def stats(self, label: str) -> AgentStats:
        for entry in self.agents:
            if entry.label == label:
                return entry
        raise ValueError(f"no agent {label!r} in matchup {self.label!r}; agents: {[a.label for a in self.agents]}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "focus": self.focus,
            "opponents": list(self.opponents),
            "num_players": self.num_players,
            "deals": self.deals,
            "games": self.games,
            "agents": [entry.to_dict() for entry in self.agents],
        }


@dataclass(frozen=True)
class EvaluationResult:
    """Everything a tournament measured, plus what is needed to reproduce it."""

    seed: int
    deck: str
    num_rounds: int
    chunk_deals: int
    matchups: tuple[MatchupResult, ...]
    seating_mode: str = "rotations"
    """How each deal seated the lineup (``duplicate.SEATINGS``)."""
    elapsed_s: float = field(default=0.0, compare=False)
    """Wall time; excluded from equality so that reruns with the same seed compare equal."""

    @property
    def player_counts(self) -> list[int]:
        return sorted({matchup.num_players for matchup in self.matchups})

    def at(self, num_players: int) -> list[MatchupResult]:
        """The matchups played at one table size, in order."""
        return [matchup for matchup in self.matchups if matchup.num_players == num_players]

    def to_dict(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "deck": self.deck,
            "num_rounds": self.num_rounds,
            "chunk_deals": self.chunk_deals,
            "confidence": CONFIDENCE,
            "seatings": self.seating_mode,
            "interval": f"Student-t over per-deal means (each deal averaged over its seat {self.seating_mode})",
            "elapsed_s": self.elapsed_s,
            "matchups": [matchup.to_dict() for matchup in self.matchups],
        }
