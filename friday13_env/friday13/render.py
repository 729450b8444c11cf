"""Text rendering of a game, shared by the environment's ``ansi`` mode, its ``rgb_array`` mode and the play CLI.

``table_lines`` lays the table out once, as styled lines; ``render_state`` joins them into the
``ansi`` text and :mod:`friday13_env.friday13.render_image` draws the same lines as an image, so the
two modes always show the same content.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from friday13_env.friday13.cards import NUM_PILES, OMEN_TYPE_NAMES, OMEN_TYPES, Deck
from friday13_env.friday13.engine import GameState, start_player
from friday13_env.friday13.options import check_choice

RENDER_MODES = ("ansi", "human", "rgb_array")
"""The environments' render modes. ``ansi``: text; ``human``: the text printed after every step; ``rgb_array``: the
text drawn as an image (:mod:`friday13_env.friday13.render_image`)."""

Style = Literal["title", "pile", "columns", "seat", "to_move", "hand", "game_over"]


class Line(NamedTuple):
    """One line of the rendered table: its text and what it shows (the image colours it by ``style``)."""

    text: str
    style: Style
    pile: int = -1
    """The pile a ``"pile"`` line shows (0 black cat, 1 broken mirror, 2 ladder); -1 otherwise."""


def check_render_mode(render_mode: object) -> None:
    """A ``ValueError`` naming the render modes unless ``render_mode`` is one of them or ``None``."""
    check_choice("render_mode", render_mode, [None, *RENDER_MODES])


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


def hand_line(seat: int, hand: list[int], deck: Deck) -> str:
    return f"Hand of player_{seat}: {hand_text(hand, deck)}"


def winners_line(winners: list[int]) -> str:
    return "Game over. Winner(s): " + ", ".join(f"player_{seat}" for seat in winners)


def table_lines(state: GameState, *, show_hand_of: int | None = None) -> list[Line]:
    """The table as styled lines: round, piles with totals, one row per seat, then one hand or the winners."""
    rules = state.rules
    deck = rules.deck
    lines = [Line(f"Round {state.round + 1}/{rules.num_rounds}   start: player_{start_player(state)}", "title")]
    for pile_index in range(NUM_PILES):
        name = OMEN_TYPE_NAMES[pile_index]
        text = f"  {name:<14} total {state.pile_totals[pile_index]:>2}  [{pile_text(state.piles[pile_index], deck)}]"
        lines.append(Line(text, "pile", pile_index))
    lines.append(Line("  seat       hand  captured (" + "/".join(OMEN_TYPES) + "/f13)  score", "columns"))
    for seat in range(rules.num_players):
        by_type = state.captured[seat]
        to_move = seat == state.current and not state.round_over
        text = (
            f"{'>' if to_move else ' '} player_{seat}  {sum(state.hands[seat]):>4}  {'/'.join(map(str, by_type)):<25}  "
            f"{state.scores[seat]:>5}"
        )
        lines.append(Line(text, "to_move" if to_move else "seat"))
    if state.game_over:
        best = min(state.scores)
        lines.append(Line(winners_line([s for s, score in enumerate(state.scores) if score == best]), "game_over"))
    else:
        seat = state.current if show_hand_of is None else show_hand_of
        lines.append(Line(hand_line(seat, state.hands[seat], deck), "hand"))
    return lines


def render_state(state: GameState, *, show_hand_of: int | None = None) -> str:
    """A multi-line summary: round, piles with totals, captured counts, scores and one hand.

    Friday the 13th cards in piles are marked with ``*``. ``show_hand_of`` defaults to the player
    to move; pass another seat to render a different private view.
    """
    return "\n".join(line.text for line in table_lines(state, show_hand_of=show_hand_of))
