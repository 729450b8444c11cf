"""Text rendering of a game, shared by the environment's ``ansi`` mode and the play CLI."""

from __future__ import annotations

from friday13_env.friday13.cards import NUM_PILES, OMEN_TYPE_NAMES, OMEN_TYPES, Deck
from friday13_env.friday13.engine import GameState


def hand_text(hand: list[int], deck: Deck) -> str:
    """``cat 1, cat 7, mirror 2 x2, f13 x3``: one entry per kind held, with a count when above one."""
    parts = []
    for kind, count in enumerate(hand):
        if count:
            name = deck.kind_name(kind)
            parts.append(name if count == 1 else f"{name} x{count}")
    return ", ".join(parts) if parts else "(empty)"


def pile_text(pile: list[int], deck: Deck) -> str:
    return " ".join(str(deck.kind_values[k]) + ("*" if k == deck.friday_kind else "") for k in pile) or "-"


def render_state(state: GameState, *, show_hand_of: int | None = None) -> str:
    """A multi-line summary: round, piles with totals, captured counts, scores and one hand.

    Friday the 13th cards in piles are marked with ``*``. ``show_hand_of`` defaults to the player
    to move; pass another seat to render a different private view.
    """
    rules = state.rules
    deck = rules.deck
    lines = [f"Round {state.round + 1}/{rules.num_rounds}   start: player_{state.start_player}"]
    for pile_index in range(NUM_PILES):
        name = OMEN_TYPE_NAMES[pile_index]
        lines.append(
            f"  {name:<14} total {state.pile_totals[pile_index]:>2}  [{pile_text(state.piles[pile_index], deck)}]"
        )
    lines.append("  seat       hand  captured (" + "/".join(OMEN_TYPES) + "/f13)  score")
    for seat in range(rules.num_players):
        by_type = state.captured[seat]
        marker = ">" if seat == state.current and not state.round_over else " "
        lines.append(
            f"{marker} player_{seat}  {sum(state.hands[seat]):>4}  {'/'.join(map(str, by_type)):<25}  "
            f"{state.scores[seat]:>5}"
        )
    if state.game_over:
        best = min(state.scores)
        lines.append(
            "Game over. Winner(s): " + ", ".join(f"player_{s}" for s, score in enumerate(state.scores) if score == best)
        )
    else:
        seat = state.current if show_hand_of is None else show_hand_of
        lines.append(f"Hand of player_{seat}: {hand_text(state.hands[seat], deck)}")
    return "\n".join(lines)
