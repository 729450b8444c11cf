"""Hand-built scenarios for the pirate fights and the five special pirates."""

from __future__ import annotations

from friday13_env.friday import actions as A
from friday13_env.friday.cards import PIRATES, PirateAbility
from friday13_env.friday.engine import final_score, legal_actions
from friday13_env.friday.scenario import build_state, find_card, find_cards
from friday13_env.friday.state import Phase, Slot
from friday13_env.friday.strength import fight_target, fight_total
from tests.friday.helpers import BOOKS, DISTRACTED, FOCUSED, GENIUS, STUPID, WEAK, WILD, play

CANNIBAL_WEAPONS = find_cards("weapon", 4)  # both; hazard side: cannibals, free 5, red 14
NORMAL_20 = 0  # pirate ids (see cards.PIRATES)
DOUBLE_COST, HALF_COUNT, PLUS_ONE, AGING_VALUE, ALL_HAZARDS = 5, 6, 7, 8, 9


def test_pirate_ids_match_their_abilities():
    assert [PIRATES[i].ability for i in (DOUBLE_COST, HALF_COUNT, PLUS_ONE, AGING_VALUE, ALL_HAZARDS)] == [
        PirateAbility.DOUBLE_COST,
        PirateAbility.HALF_COUNT,
        PirateAbility.PLUS_ONE_PER_CARD,
        PirateAbility.AGING_VALUE,
        PirateAbility.ALL_HAZARDS,
    ]


def test_choose_pirate_then_the_other_follows_and_winning_both_wins_the_game():
    state = build_state(step=3, life=6, pirates=[AGING_VALUE, PLUS_ONE], robinson=[GENIUS, WEAK[0]], aging_taken=0)
    state.phase = Phase.CHOOSE_PIRATE
    assert legal_actions(state) == [A.PIRATE_A, A.PIRATE_B]
    play(state, A.PIRATE_A)  # value 2 x 0 aging cards = 0
    assert (state.fight.pirate, state.fight.free_total, fight_target(state)) == (0, 5, 0)
    play(state, A.DRAW_FREE, A.END_FIGHT)
    assert state.pirates_defeated == [True, False] and state.fight.pirate == 1, "the second fight starts at once"
    assert state.fight.table == [] and state.discard == [GENIUS]
    assert (state.fight.free_total, fight_target(state)) == (10, 52)
    state.fight.table = [Slot(c, paid=False) for c in [*CANNIBAL_WEAPONS, *FOCUSED, find_card("weapon", 2)]]
    assert fight_total(state.fight) == 13 + 6
    state.fight.pirate_value = 19  # shortcut: check the game end, not the arithmetic
    play(state, A.END_FIGHT)
    assert state.done and state.won is True
    assert final_score(state) == (0 + 2 + 13) + 2 * 15 + 5 * 6


def test_pirate_fight_cannot_be_lost_on_purpose_and_unaffordable_cards_lose_the_game():
    state = build_state(step=3, life=0, pirate=0, pirates=[NORMAL_20, PLUS_ONE], robinson=WEAK[:8])
    play(state, *[A.DRAW_FREE] * 6)
    assert legal_actions(state) == [A.BUY], "no ending while short of points; the next card must be bought"
    play(state, A.BUY)
    assert state.done and state.won is False and state.pirates_defeated == [False, False]


def test_pirate_fight_with_points_enough_may_end():
    state = build_state(step=3, life=3, pirate=0, pirates=[NORMAL_20, PLUS_ONE], table=CANNIBAL_WEAPONS)
    state.fight.pirate_value = 8
    assert A.END_FIGHT in legal_actions(state)


def test_step_minus_one_is_useless_against_pirates():
    state = build_state(step=3, pirate=0, robinson=WEAK[:3], table=[BOOKS])
    assert A.ACTIVATE + 0 not in legal_actions(state)


def test_double_cost_pirate_charges_two_life_per_extra_card():
    state = build_state(step=3, life=5, pirate=1, pirates=[NORMAL_20, DOUBLE_COST], robinson=WEAK + DISTRACTED)
    assert (state.fight.free_total, fight_target(state)) == (7, 16)
    play(state, *[A.DRAW_FREE] * 7, A.BUY)
    assert state.life == 3 and len(state.fight.table) == 8
    state.life, state.reserve = 1, 21
    play(state, A.BUY)
    assert state.done and state.won is False and state.life == 0 and state.reserve == 22


def test_half_count_pirate_counts_the_best_half_including_aging_cards():
    state = build_state(
        step=3, pirate=0, pirates=[HALF_COUNT, PLUS_ONE], table=[GENIUS, *FOCUSED[:2], WEAK[0], STUPID[0]]
    )
    assert (state.fight.free_total, fight_target(state)) == (9, 22)
    assert fight_total(state.fight) == -2 + 2 + 1, "3 places: the aging card plus the two best"
    no_aging = build_state(step=3, pirate=0, pirates=[HALF_COUNT, PLUS_ONE], table=[GENIUS, *FOCUSED[:2], WEAK[0]])
    assert fight_total(no_aging.fight) == 3
    negatives = build_state(step=3, pirate=0, pirates=[HALF_COUNT, PLUS_ONE], table=[GENIUS, *DISTRACTED[:3]])
    assert fight_total(negatives.fight) == 2, "empty places are better than negative cards"


def test_plus_one_pirate_adds_one_per_table_card_including_face_down():
    table = [GENIUS, WEAK[0], DISTRACTED[0], Slot(STUPID[0], paid=True, face_down=True)]
    state = build_state(step=3, pirate=1, pirates=[NORMAL_20, PLUS_ONE], table=table)
    assert fight_total(state.fight) == (2 + 0 - 1 + 0) + 4


def test_aging_value_pirate_is_fixed_when_its_fight_starts():
    state = build_state(
        step=3, pirate=0, pirates=[AGING_VALUE, PLUS_ONE], aging_taken=4, aging=[STUPID[0]], discard=[WEAK[0]]
    )
    assert (state.fight.free_total, fight_target(state)) == (5, 8)
    play(state, A.DRAW_FREE)
    assert state.aging_taken == 5 and fight_target(state) == 8


def test_all_hazards_pirate_sums_the_hazard_discard_pile():
    state = build_state(step=3, pirate=0, pirates=[ALL_HAZARDS, PLUS_ONE], hazard_discard=[WILD, CANNIBAL_WEAPONS[0]])
    assert (state.fight.free_total, fight_target(state)) == (4 + 5, 11 + 14)
    state.fight.table = [Slot(c, paid=False) for c in (CANNIBAL_WEAPONS[1], GENIUS)]
    state.won, state.phase = False, Phase.GAME_OVER
    assert final_score(state) == (4 + 2) - 3 * 2, "those hazard cards still count -3 each"
