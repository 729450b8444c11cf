"""Readable text view of a Friday game (the environment's ``ansi``/``human`` rendering)."""

from __future__ import annotations

from friday13_env.friday.actions import action_name
from friday13_env.friday.cards import ABILITY_LABELS, PIRATES, STEP_NAMES, card_label, hazard_side
from friday13_env.friday.engine import final_score, legal_actions
from friday13_env.friday.state import Phase, State
from friday13_env.friday.strength import fight_target, fight_total, slot_values


def _hazard_label(card: int) -> str:
    """Hazard side as ``wild animals (free 4; 4/7/11) -> realization +3 [1x destroy]``."""
    side = hazard_side(card)
    values = "/".join(map(str, side.values))
    return f"{side.name} (free {side.free}; {values}) -> {card_label(card)}"


def render_text(state: State) -> str:
    """Multi-line description: status, piles, the current decision and the legal actions."""
    lines = [
        f"Friday level {state.level} | step {STEP_NAMES[state.step]} | life {state.life} "
        f"(reserve {state.reserve}) | phase {state.phase.name}",
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
    else:
        lines.append("Legal: " + "; ".join(f"{a}={action_name(a, state.phase)}" for a in legal_actions(state)))
    return "\n".join(lines)
