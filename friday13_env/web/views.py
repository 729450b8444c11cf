"""What a page draws: JSON-ready views of both games' positions, and the card game's round scoring in words.

A *frame* is one position after one move (or after a deal), with the move that led to it and, at the end of a
round, the scoring explained. The replay viewer steps through a list of frames; the live page shows the last
one and keeps the rest as its history. The views are built from the engine's state here, once, so that the
page never recomputes a rule: totals, captures, majorities and points all come from the engine.

Hidden information stays hidden where it must: :func:`seat_view` removes every hand but one seat's before a
frame leaves the server of a live game. A solo view shows only what the player sees (the Robinson stack as a
count, never its order).
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

from friday13_env.friday import actions as solo_actions
from friday13_env.friday.cards import ABILITY_LABELS, MAX_LIFE, PIRATES, STEP_NAMES, Ability, card_type, hazard_side
from friday13_env.friday.engine import final_score
from friday13_env.friday.engine import legal_actions as solo_legal_actions
from friday13_env.friday.state import Phase, State
from friday13_env.friday.strength import fight_target, fight_total, slot_values
from friday13_env.friday13 import engine as card_engine
from friday13_env.friday13.cards import FRIDAY_POINTS, FRIDAY_TYPE, NUM_PILES, OMEN_POINTS, OMEN_TYPE_NAMES
from friday13_env.friday13.engine import GameState, Rules
from friday13_env.web.record import CardRecord, CardStep, SoloRecord, card_positions, solo_positions

YOU = "you"
"""The label of the person's seat on the live page; the texts address it in the second person."""
TYPE_KEYS = ("cat", "mirror", "ladder", "friday")
"""How the page names the four card types (the three omen types, then Friday the 13th)."""
PLURALS = ("black cats", "broken mirrors", "ladders")


# -- the card game -------------------------------------------------------------------------------------------
def card_table(rules: Rules, seats: list[str], you: int | None) -> dict[str, Any]:
    """What stays fixed during a card game: the table, the seat labels, the deck's cards and actions."""
    deck = rules.deck
    return {
        "game": "friday13",
        "players": rules.num_players,
        "deck": deck.name,
        "rounds": rules.num_rounds,
        "seats": seats,
        "you": you,
        "kinds": [
            {"type": TYPE_KEYS[deck.kind_types[kind]], "value": deck.kind_values[kind], "name": deck.kind_name(kind)}
            for kind in range(deck.num_kinds)
        ],
        "actions": [
            {"kind": kind, "pile": pile, "name": deck.action_name(action)}
            for action in range(deck.num_actions)
            for kind, pile in [deck.action_kind_and_pile(action)]
        ],
        "piles": list(OMEN_TYPE_NAMES),
    }


def card_frame(
    state: GameState, move: dict[str, Any] | None = None, round_end: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The position ``state`` with every hand (see :func:`seat_view` for one player's view)."""
    return {
        "round": state.round,
        "current": None if state.round_over else state.current,
        "start": card_engine.start_player(state),
        "hands": [hand[:] for hand in state.hands],
        "hand_sizes": [sum(hand) for hand in state.hands],
        "dummy": None if state.dummy is None else state.dummy[:],
        "piles": [pile[:] for pile in state.piles],
        "totals": state.pile_totals[:],
        "captured": [stack[:] for stack in state.captured],
        "scores": state.scores[:],
        "legal": card_engine.legal_actions(state),
        "move": move,
        "round_end": round_end,
        "game_over": state.game_over,
    }


def seat_view(frame: dict[str, Any], seat: int) -> dict[str, Any]:
    """``frame`` as ``seat`` sees it: the other hands and the dummy hidden (their sizes stay), and the legal moves
    only when it is that seat's turn."""
    view = dict(frame)
    view["hands"] = [hand if index == seat else None for index, hand in enumerate(frame["hands"])]
    view["dummy"] = None
    if frame["current"] != seat:
        view["legal"] = []
    return view


def card_move(step: CardStep, seats: list[str]) -> dict[str, Any]:
    """A move in words and numbers: who played which card on which pile, the announced total, what was taken."""
    deck = step.before.rules.deck
    seat = step.before.current
    kind, pile = deck.action_kind_and_pile(step.action)
    announced = step.before.pile_totals[pile] + deck.kind_values[kind]
    you = seats[seat] == YOU
    text = f"{seats[seat]} play{'' if you else 's'} {deck.kind_name(kind)} on the {OMEN_TYPE_NAMES[pile]} pile "
    text += f"(total {announced})"
    if step.taken:
        text += f" and take{'' if you else 's'} {step.taken} card{'s' if step.taken > 1 else ''}"
    return {
        "seat": seat,
        "action": step.action,
        "kind": kind,
        "pile": pile,
        "announced": announced,
        "taken": step.taken,
        "text": text + ".",
    }


def explain_round(state: GameState, seats: list[str]) -> dict[str, Any]:
    """The scoring of the round ``state`` has just finished, in numbers and in words.

    For each omen type: every player's count and who, if anyone, holds the sole majority and so discards those
    cards (a tie for the most: nobody does). Then each player's points: the omen cards kept (1 each) and the
    Friday the 13th cards (2 each, never discarded). The points are the engine's own (``last_round_points``);
    the explanation is checked against them, so the words cannot drift from the rules.
    """
    captured = state.captured
    points = state.last_round_points
    assert points is not None, "explain_round needs a finished round"
    types = []
    discards: dict[int, list[int]] = {seat: [] for seat in range(len(seats))}
    for omen in range(NUM_PILES):
        counts = [stack[omen] for stack in captured]
        most = max(counts)
        holders = [seat for seat, count in enumerate(counts) if count == most]
        sole = holders[0] if most > 0 and len(holders) == 1 else None
        if most == 0:
            text = f"Nobody took any {PLURALS[omen]}."
        elif sole is not None:
            you = seats[sole] == YOU
            text = f"{seats[sole]} {'have' if you else 'has'} the most {PLURALS[omen]} ({most}) and discard"
            text += f"{'' if you else 's'} them."
            discards[sole].append(omen)
        else:
            names = " and ".join(seats[seat] for seat in holders)
            text = f"{names} tie for the most {PLURALS[omen]} ({most}): nobody discards them."
        types.append({"type": OMEN_TYPE_NAMES[omen], "counts": counts, "most": most, "discarder": sole, "text": text})
    rows = []
    for seat, stack in enumerate(captured):
        kept = sum(stack[omen] for omen in range(NUM_PILES) if omen not in discards[seat])
        fridays = stack[FRIDAY_TYPE]
        gained = kept * OMEN_POINTS + fridays * FRIDAY_POINTS
        if gained != points[seat]:
            raise AssertionError(f"the explanation of seat {seat} gives {gained} points, the engine {points[seat]}")
        parts = [f"{kept} omen card{'s' if kept != 1 else ''} kept x {OMEN_POINTS}"]
        if fridays:
            parts.append(f"{fridays} Friday the 13th x {FRIDAY_POINTS}")
        text = f"{seats[seat]}: {' + '.join(parts)} = {gained} point{'s' if gained != 1 else ''}"
        total = state.scores[seat]
        rows.append({"seat": seat, "kept": kept, "fridays": fridays, "points": gained, "total": total, "text": text})
    return {"round": state.round, "types": types, "rows": rows, "leaders": card_engine.winners(state.scores)}


def seat_names(seats: list[str]) -> list[str]:
    """The seat labels as a text names them, one name per seat: a label that several seats share gets its seat
    number; should a name so made equal another (labels ``["a (seat 3)", "x", "a", "a"]``), every seat gets its
    number, which makes them unique (the ``(seat n)`` endings differ). ``seatNames`` in ``viewer.js`` is the same."""
    names = [f"{label} (seat {seat + 1})" if seats.count(label) > 1 else label for seat, label in enumerate(seats)]
    if len(set(names)) < len(names):
        names = [f"{label} (seat {seat + 1})" for seat, label in enumerate(seats)]
    return names


def card_frames(record: CardRecord) -> list[dict[str, Any]]:
    """Every frame of a recorded card game: each deal, then one frame per move (a round's last move carries its
    scoring explained)."""
    starts, steps = card_positions(record)
    names = seat_names(record.seats)
    played = iter(steps)
    frames = []
    for start, moves in zip(starts, record.moves, strict=True):
        frames.append(card_frame(start))
        frames.extend(move_frame(next(played), names) for _ in moves)
    return frames


def move_frame(step: CardStep, seats: list[str]) -> dict[str, Any]:
    """The position after a move, with the move in words and, when it ended a round, the round's scoring
    explained: what a replay and a live game show after every move."""
    after = step.after
    round_end = explain_round(after, seats) if after.round_over else None
    return card_frame(after, card_move(step, seats), round_end)


# -- the solo game -------------------------------------------------------------------------------------------
def solo_card(card: int) -> dict[str, Any]:
    """A fighting card as the page draws it: name, fighting value, ability, and its hazard side if it has one."""
    kind = card_type(card)
    side = kind.hazard
    return {
        "id": card,
        "name": kind.name,
        "value": kind.value,
        "ability": "" if kind.ability is Ability.NONE else ABILITY_LABELS[kind.ability],
        "aging": kind.is_aging,
        "hazard": None if side is None else {"name": side.name, "free": side.free, "values": list(side.values)},
    }


def choice_label(state: State, action: int) -> str:
    """A legal solo action in the words of the table, naming the cards it concerns."""
    phase = state.phase
    a = solo_actions
    if phase is Phase.CHOOSE_HAZARD and action in (a.HAZARD_A, a.HAZARD_B):
        return _hazard_offer(state, state.hazard_options[action - a.HAZARD_A])
    if phase is Phase.LAST_HAZARD:
        return _hazard_offer(state, state.hazard_options[0]) if action == a.FIGHT_LAST else "Skip the last hazard"
    if phase is Phase.CHOOSE_PIRATE and action in (a.PIRATE_A, a.PIRATE_B):
        return f"Fight pirate {'AB'[action - a.PIRATE_A]} first: {PIRATES[state.pirates[action - a.PIRATE_A]].label}"
    if phase is Phase.FIGHT and state.fight is not None:
        if a.ACTIVATE <= action < a.ACTIVATE + a.MAX_SLOTS:
            card = state.fight.table[action - a.ACTIVATE].card
            return f"Use {card_type(card).name}: {ABILITY_LABELS[card_type(card).ability]}"
        return {a.DRAW_FREE: "Draw a free card", a.BUY: "Buy a card (life)", a.END_FIGHT: "End the fight"}.get(
            action, solo_actions.action_name(action, phase)
        )
    if a.TARGET <= action < a.TARGET + a.MAX_SLOTS and state.fight is not None:
        card = state.fight.table[action - a.TARGET].card
        if phase is Phase.LOSS_DESTROY:
            return f"Destroy {card_type(card).name} ({card_type(card).destroy_cost} life)"
        assert state.pending is not None
        return f"{ABILITY_LABELS[state.pending.ability]}: {card_type(card).name} ({card_type(card).value:+d})"
    if a.SORT_DISCARD <= action < a.SORT_DISCARD + a.SORT_SIZE:
        return f"Discard {card_type(state.looked[action - a.SORT_DISCARD]).name}"
    if a.SORT_TOP <= action < a.SORT_TOP + a.SORT_SIZE:
        return f"Put {card_type(state.looked[action - a.SORT_TOP]).name} on top next"
    return solo_actions.action_name(action, phase).capitalize()


def _hazard_offer(state: State, card: int) -> str:
    """A hazard to fight, with what it takes and what it gives: ``Fight wild animals (value 7, 4 free cards) to
    win weapon +4`` (two hazards of one name differ by the card they give)."""
    side = hazard_side(card)
    value = side.values[min(state.step, len(side.values) - 1)]
    free = f"{side.free} free card{'s' if side.free != 1 else ''}"
    return f"Fight {side.name} (value {value}, {free}) to win {card_type(card).name} {card_type(card).value:+d}"


def distinct_labels(state: State, legal: list[int]) -> list[str]:
    """``choice_label`` of every legal action, made distinct where two would read alike (two table cards of one
    name: each gets its place on the table). Every one of the look-alikes gets its suffix, none keeps the bare text,
    so that no label can be taken for another choice's: the buttons, the hints and the moves all use these."""
    a = solo_actions
    plain = [choice_label(state, action) for action in legal]
    labels = list(plain)
    for index, (action, label) in enumerate(zip(legal, plain, strict=True)):
        if plain.count(label) < 2:
            continue
        if a.ACTIVATE <= action < a.TARGET + a.MAX_SLOTS:
            labels[index] = f"{label} (table card {(action - a.ACTIVATE) % a.MAX_SLOTS + 1})"
        elif a.SORT_DISCARD <= action < a.SORT_TOP + a.SORT_SIZE:
            labels[index] = f"{label} (looked-at card {(action - a.SORT_DISCARD) % a.SORT_SIZE + 1})"
        else:
            labels[index] = f"{label} (choice {index + 1})"
    return labels


PHASE_TEXT = {
    Phase.CHOOSE_HAZARD: "Choose the hazard to fight; the other goes to the hazard discard pile.",
    Phase.LAST_HAZARD: "One hazard card is left: fight it or skip it.",
    Phase.CHOOSE_PIRATE: "Both pirates wait: choose which to fight first.",
    Phase.FIGHT: "Fight: draw free cards, buy cards with life, use abilities, or end the fight.",
    Phase.TARGET: "Choose the card the ability acts on.",
    Phase.EXTRA_DRAW: "+2 cards: draw the second card or not.",
    Phase.SORT_LOOK: "Sort 3 cards: look at another card, discard one, or keep them.",
    Phase.SORT_ORDER: "Sort 3 cards: choose the next card from the top.",
    Phase.LOSS_DESTROY: "You lost the fight: destroy played cards with the life you paid, or stop.",
    Phase.GAME_OVER: "The game is over.",
}


def solo_frame(state: State, move: dict[str, Any] | None = None) -> dict[str, Any]:
    """A solo position: life, step, piles as counts, pirates, the hazards on offer, the fight and the choices."""
    fight = state.fight
    fight_view = None
    if fight is not None:
        against = f"pirate {'AB'[fight.pirate]}" if fight.hazard < 0 else hazard_side(fight.hazard).name
        fight_view = {
            "against": against,
            "hazard": None if fight.hazard < 0 else solo_card(fight.hazard),
            "free_used": fight.free_used,
            "free_total": fight.free_total,
            "points": fight_total(fight),
            "target": fight_target(state),
            "step_downs": fight.step_downs,
            "slots": [
                {**solo_card(slot.card), "points": points, "paid": slot.paid, "used": slot.used}
                | {"face_down": slot.face_down, "doubled": slot.doubled}
                for slot, points in zip(fight.table, slot_values(fight), strict=True)
            ],
        }
    legal = solo_legal_actions(state)
    return {
        "level": state.level,
        "step": STEP_NAMES[state.step],
        "life": state.life,
        "reserve": state.reserve,
        "max_life": MAX_LIFE,
        "phase": state.phase.name,
        "phase_text": PHASE_TEXT[state.phase],
        "piles": {
            "robinson": len(state.robinson),
            "discard": len(state.discard),
            "destroyed": len(state.destroyed),
            "aging": len(state.aging),
            "hazards": len(state.hazard_stack),
            "hazard_discard": len(state.hazard_discard),
        },
        "pirates": [
            {"label": PIRATES[pirate].label, "beaten": beaten}
            for pirate, beaten in zip(state.pirates, state.pirates_defeated, strict=True)
        ],
        "hazards": [solo_card(card) for card in state.hazard_options],
        "fight": fight_view,
        "pending": None if state.pending is None else ABILITY_LABELS[state.pending.ability],
        "looked": [solo_card(card) for card in state.looked],
        "placed": [solo_card(card) for card in state.placed],
        "loss_budget": state.loss_budget,
        "choices": [
            {"action": action, "label": label}
            for action, label in zip(legal, distinct_labels(state, legal), strict=True)
        ],
        "legal": legal,
        "move": move,
        "done": state.done,
        "won": state.won,
        "score": final_score(state) if state.done else None,
    }


def solo_table(level: int, player: str) -> dict[str, Any]:
    return {"game": "friday", "level": level, "player": player}


def solo_frames(record: SoloRecord) -> list[dict[str, Any]]:
    """Every frame of a recorded solo game: the first decision, then one frame after each move."""
    positions = solo_positions(record)
    frames = [solo_frame(positions[0][0])]
    for (state, action), (after, _) in pairwise(positions):
        assert action is not None
        frames.append(solo_frame(after, solo_move(state, action)))
    return frames


def solo_move(state: State, action: int) -> dict[str, Any]:
    """A solo move as a frame carries it, named in the position it was chosen in (before it is played) as its
    button was (:func:`solo_label`)."""
    return {"action": action, "text": solo_label(state, action)}


def solo_label(state: State, action: int) -> str:
    """The label of the legal solo ``action`` among the position's choices (:func:`distinct_labels`): what its
    button reads, and so what a hint or a move calls it."""
    legal = solo_legal_actions(state)
    return distinct_labels(state, legal)[legal.index(action)] if action in legal else choice_label(state, action)


def record_view(record: CardRecord | SoloRecord) -> dict[str, Any]:
    """A whole record for the viewer: the fixed table and every frame (nothing hidden: a replay shows all)."""
    if isinstance(record, CardRecord):
        return {"table": card_table(record.rules, record.seats, None), "frames": card_frames(record)}
    return {"table": solo_table(record.level, record.player), "frames": solo_frames(record)}
