"""Views of a Friday game: text (the environment's ``ansi``/``human`` rendering) and an image of it
(``rgb_array``), drawn with numpy only."""

from __future__ import annotations

import textwrap

import numpy as np

from friday13_env.core.bitmap import Canvas, Color
from friday13_env.friday.actions import action_name
from friday13_env.friday.cards import ABILITY_LABELS, MAX_LIFE, PIRATES, STEP_NAMES, card_label, hazard_side
from friday13_env.friday.engine import final_score, legal_actions
from friday13_env.friday.levels import LEVELS
from friday13_env.friday.state import Phase, State
from friday13_env.friday.strength import fight_target, fight_total, slot_values

RENDER_MODES = ("ansi", "human", "rgb_array")
"""The environment's render modes. ``ansi``: text; ``human``: the text printed after every step; ``rgb_array``: the
text's picture, drawn here."""


def _hazard_label(card: int) -> str:
    """Hazard side as ``wild animals (free 4; 4/7/11) -> realization +3 [1x destroy]``."""
    side = hazard_side(card)
    values = "/".join(map(str, side.values))
    return f"{side.name} (free {side.free}; {values}) -> {card_label(card)}"


def _phase_name(state: State, ended: str | None, game_over: bool) -> str:
    """The phase a view shows: ``GAME_OVER`` once the episode ``ended`` early as a game ends (``game_over``: an
    illegal action); the game's own phase otherwise (a truncation: the game stands where it was)."""
    return Phase.GAME_OVER.name if ended is not None and game_over else state.phase.name


def render_text(state: State, ended: str | None = None, game_over: bool = True) -> str:
    """Multi-line description: status, piles, the current decision and the legal actions.

    ``ended`` says why the episode ended before the game did: then no action is legal, and the text says so and ends
    with ``ended``; with ``game_over`` (the environment's illegal action) the phase shown is ``GAME_OVER``, as at every
    end of a game, and without it (a truncation) the game's own."""
    lines = [
        f"Friday level {state.level} | step {STEP_NAMES[state.step]} | life {state.life} "
        f"(reserve {state.reserve}) | phase {_phase_name(state, ended, game_over)}",
        f"Robinson stack {len(state.robinson)} (unseen aging {len(state.hidden)}, known top "
        f"{state.known_top}, known bottom {state.known_bottom}) | discard {len(state.discard)} | "
        f"destroyed {len(state.destroyed)} | aging stack {len(state.aging)} | hazard stack "
        f"{len(state.hazard_stack)} | hazard discard {len(state.hazard_discard)}",
    ]
    for i, pirate in enumerate(state.pirates):
        status = "beaten" if state.pirates_defeated[i] else "waiting"
        lines.append(f"Pirate {'AB'[i]}: {PIRATES[pirate].label} [{status}]")
    for i, card in enumerate(state.hazard_options):
        lines.append(f"Hazard {'AB'[i]}: {_hazard_label(card)}")
    fight = state.fight
    if fight is not None:
        opponent = f"pirate {'AB'[fight.pirate]}" if fight.hazard < 0 else _hazard_label(fight.hazard)
        lines.append(
            f"Fight: {opponent} | free {fight.free_used}/{fight.free_total} | points "
            f"{fight_total(fight)} vs {fight_target(state)} | step -1 x{fight.step_downs}"
        )
        for i, (slot, value) in enumerate(zip(fight.table, slot_values(fight), strict=True)):
            flags = [
                name
                for name, on in (
                    ("paid", slot.paid),
                    ("used", slot.used),
                    ("face down", slot.face_down),
                    ("doubled", slot.doubled),
                )
                if on
            ]
            lines.append(f"  slot {i}: {card_label(slot.card)} = {value} {' '.join(flags)}".rstrip())
    if state.pending is not None:
        lines.append(f"Pending: {ABILITY_LABELS[state.pending.ability]} from slot {state.pending.source}")
    if state.looked or state.placed:
        lines.append("Looking at: " + ", ".join(card_label(c) for c in state.looked))
        lines.append("Placed on top so far: " + ", ".join(card_label(c) for c in state.placed))
    if state.phase is Phase.LOSS_DESTROY:
        lines.append(f"Destroy budget: {state.loss_budget}")
    if state.done:
        lines.append(f"Game over: {'won' if state.won else 'lost'}, score {final_score(state)}")
    elif ended is not None:
        lines += ["Legal: none", ended]
    else:
        lines.append("Legal: " + "; ".join(f"{a}={action_name(a, state.phase)}" for a in legal_actions(state)))
    return "\n".join(lines)


COLUMNS, ROWS, SCALE = 80, 36, 2
"""The image: 80 x 36 character cells of 12 x 20 pixels, so every frame is 960 x 720 (multiples of 16)."""
BACKGROUND: Color = (24, 26, 33)
TEXT: Color = (225, 225, 225)
TITLE: Color = (250, 210, 90)
DIM: Color = (70, 74, 86)
MUTED: Color = (150, 155, 170)
LIFE: Color = (70, 170, 90)
RESERVE: Color = (200, 170, 60)
SHORT: Color = (200, 80, 70)
FIGHT_SEGMENTS = 30
_HEADER_ROWS = 5
_BAR_COLUMN = 20


def life_segments(state: State) -> list[Color]:
    """The life bar's ``MAX_LIFE`` boxes: life, reserve, the tokens of the level's pool lost so far (dim), then the
    tokens the level does not play with, undrawn (``BACKGROUND``): level 4's pool is 20 tokens, not 22
    (docs/CONVENTIONS.md, interpretation 1), so its game starts with two absent tokens, not two lost ones."""
    level = LEVELS[state.level]
    held = state.life + state.reserve
    pool = max(level.life + level.reserve, held)  # (a hand-built state may hold more: none is shown lost)
    absent = max(0, MAX_LIFE - pool)
    return [LIFE] * state.life + [RESERVE] * state.reserve + [DIM] * (pool - held) + [BACKGROUND] * absent


def render_rgb(state: State, ended: str | None = None, game_over: bool = True) -> np.ndarray:
    """The game as a uint8 (720, 960, 3) image: status, a life bar (life, reserve, lost), the piles, a bar of
    the fight's points against the hazard value, then the text view's details (pirates, hazards, table
    cards, the pending decision, the legal actions, or ``ended`` and ``game_over`` as in :func:`render_text`), cut off
    with ``...``
    if they do not fit."""
    canvas = Canvas(COLUMNS, ROWS, SCALE, BACKGROUND)
    phase = _phase_name(state, ended, game_over)
    canvas.text(0, 0, f"FRIDAY  LEVEL {state.level}  STEP {STEP_NAMES[state.step]}  PHASE {phase}", TITLE)
    canvas.text(1, 0, f"LIFE {state.life} RESERVE {state.reserve}", TEXT)
    canvas.bar(1, _BAR_COLUMN, COLUMNS - _BAR_COLUMN, life_segments(state))
    canvas.text(
        2,
        0,
        f"STACK {len(state.robinson)}  DISCARD {len(state.discard)}  DESTROYED {len(state.destroyed)}  AGING "
        f"{len(state.aging)}  HAZARDS {len(state.hazard_stack)}  HAZARD DISCARD {len(state.hazard_discard)}",
        TEXT,
    )
    fight = state.fight
    if fight is None:
        canvas.text(3, 0, "NO FIGHT", MUTED)
    else:
        total, target = fight_total(fight), fight_target(state)
        winning = total >= target
        canvas.text(3, 0, f"POINTS {total} / {target}", TEXT)
        share = 1.0 if target <= 0 else max(0.0, min(1.0, total / target))
        filled = round(FIGHT_SEGMENTS * share)
        color = LIFE if winning else SHORT
        segments = [color] * filled + [DIM] * (FIGHT_SEGMENTS - filled)
        canvas.bar(3, _BAR_COLUMN, COLUMNS - _BAR_COLUMN, segments)
    canvas.rule(4, DIM)
    details = render_text(state, ended, game_over).split("\n")[2:]  # the first two lines are the status and piles above
    lines = [
        (part, TITLE if line.startswith(("Game over", ended or "\0")) else MUTED if line.startswith("Legal") else TEXT)
        for line in details
        for part in textwrap.wrap(line, COLUMNS, subsequent_indent="    ") or [""]
    ]
    room = ROWS - _HEADER_ROWS
    if len(lines) > room:
        lines = [*lines[: room - 1], ("...", DIM)]
    for row, (text, color) in enumerate(lines, start=_HEADER_ROWS):
        canvas.text(row, 0, text, color)
    return canvas.image
