"""Hand-built scenarios for every ability of the starting, knowledge and aging cards."""

from __future__ import annotations

from friday13_env.friday import actions as A
from friday13_env.friday.engine import legal_actions
from friday13_env.friday.scenario import build_state, find_card, find_cards
from friday13_env.friday.state import Phase, Slot
from friday13_env.friday.strength import fight_target, fight_total
from tests.friday.helpers import BOOKS, CANNIBALS, DISTRACTED, EATING, FOCUSED, GENIUS, HUNGRY, STUPID, WEAK, WILD, play

SCARED = find_cards("scared")  # aging: highest card = 0
RAFT = find_card("food", 0)  # hazard side: with the raft to the wreck (the other raft, BOOKS, is a table card here)
# Knowledge cards, by ability.
FOOD_1, EQUIPMENT = find_card("food", 1), find_card("equipment")  # +1 life, +2 cards
EXPERIENCE, REALIZATION = find_card("experience", 2), find_card("realization", 1)  # +1 card, 1x destroy
REPEAT, MIMICRY = find_card("repeat", 1), find_card("mimicry", 0)  # 1x double, 1x copy
VISION, DECEPTION = find_card("vision", 2), find_card("deception", 0)  # sort 3 cards, 1x below the stack
STRATEGY_1, STRATEGY_2 = find_card("strategy", 2), find_card("strategy", 0)  # 1x exchange, 2x exchange


def test_plus_one_life_and_used_flag():
    state = build_state(life=15, hazard=WILD, table=[FOOD_1])
    play(state, A.ACTIVATE + 0)
    assert state.life == 16 and state.fight.table[0].used
    assert A.ACTIVATE + 0 not in legal_actions(state), "each ability once per fight"


def test_plus_two_life():
    state = build_state(life=15, hazard=WILD, table=[EATING])
    play(state, A.ACTIVATE + 0)
    assert state.life == 17


def test_plus_one_card_goes_to_the_right_side_for_free():
    state = build_state(life=15, hazard=WILD, robinson=[GENIUS, WEAK[0]], table=[EXPERIENCE])
    play(state, A.ACTIVATE + 0)
    assert [(s.card, s.paid) for s in state.fight.table] == [(EXPERIENCE, False), (GENIUS, True)]
    assert state.fight.free_used == 1 and state.life == 15


def test_plus_two_cards_second_is_optional():
    state = build_state(hazard=WILD, robinson=[GENIUS, WEAK[0], WEAK[1]], table=[EQUIPMENT])
    play(state, A.ACTIVATE + 0)
    assert state.phase is Phase.EXTRA_DRAW and legal_actions(state) == [A.CONTINUE, A.DONE]
    play(state, A.CONTINUE)
    assert [s.card for s in state.fight.table] == [EQUIPMENT, GENIUS, WEAK[0]]
    declined = build_state(hazard=WILD, robinson=[GENIUS, WEAK[0]], table=[EQUIPMENT])
    play(declined, A.ACTIVATE + 0, A.DONE)
    assert [s.card for s in declined.fight.table] == [EQUIPMENT, GENIUS] and declined.phase is Phase.FIGHT


def test_destroy_turns_a_card_face_down_cancels_it_and_removes_it_after_the_fight():
    state = build_state(
        life=10, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[REALIZATION, GENIUS, FOCUSED[0], HUNGRY]
    )
    play(state, A.ACTIVATE + 0)
    assert legal_actions(state) == [A.TARGET + 1, A.TARGET + 2, A.TARGET + 3], "only other face-up cards"
    play(state, A.TARGET + 3)
    assert fight_total(state.fight) == 4
    play(state, A.END_FIGHT)
    assert state.destroyed == [HUNGRY] and state.life == 10, "the destroyed aging card's -1 life is cancelled"
    assert HUNGRY not in state.discard and WILD in state.discard


def test_face_down_cards_cannot_be_targeted_again():
    state = build_state(hazard=WILD, table=[REALIZATION, STRATEGY_1, Slot(STUPID[0], paid=False, face_down=True)])
    play(state, A.ACTIVATE + 1)
    assert legal_actions(state) == [A.TARGET + 0]


def test_double_counts_at_the_end_and_only_once_per_card():
    state = build_state(hazard=WILD, table=[REPEAT, GENIUS, MIMICRY])
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert state.fight.table[1].doubled and fight_total(state.fight) == 1 + 4
    play(state, A.ACTIVATE + 2)  # copy the double ...
    play(state, A.TARGET + 0)
    assert legal_actions(state) == [A.TARGET + 0], "... but the doubled genius cannot be doubled again"
    play(state, A.TARGET + 0)
    assert fight_total(state.fight) == 2 + 4


def test_copy_repeats_another_cards_ability_even_if_used():
    state = build_state(life=10, hazard=WILD, table=[EATING, MIMICRY])
    play(state, A.ACTIVATE + 0)
    assert state.life == 12
    play(state, A.ACTIVATE + 1, A.TARGET + 0)
    assert state.life == 14 and state.phase is Phase.FIGHT


def test_copy_offers_neither_aging_abilities_nor_copy_nor_blank_cards():
    other_copy = find_card("mimicry", 1)
    state = build_state(hazard=WILD, table=[MIMICRY, other_copy, HUNGRY, GENIUS])
    assert A.ACTIVATE + 0 not in legal_actions(state)


def test_step_minus_one_uses_the_lower_step_value_and_is_useless_in_green():
    state = build_state(step=1, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[BOOKS, GENIUS, *FOCUSED[:2]])
    assert fight_target(state) == 7
    play(state, A.ACTIVATE + 0)
    assert fight_target(state) == 4
    play(state, A.END_FIGHT)
    assert WILD in state.discard
    green = build_state(step=0, hazard=WILD, robinson=WEAK[:2], table=[BOOKS])
    assert A.ACTIVATE + 0 not in legal_actions(green)
    red = build_state(step=2, hazard=WILD, table=[BOOKS, MIMICRY])
    play(red, A.ACTIVATE + 0, A.ACTIVATE + 1, A.TARGET + 0)
    assert fight_target(red) == 4, "a copied step -1 lowers red to green"


def test_sort_three_look_discard_and_order():
    a, b, c, d = GENIUS, STUPID[0], FOCUSED[0], WEAK[0]
    state = build_state(hazard=WILD, robinson=[a, b, c, d], table=[VISION])
    play(state, A.ACTIVATE + 0)
    assert state.phase is Phase.SORT_LOOK and state.looked == [a]
    play(state, A.CONTINUE, A.CONTINUE)
    assert state.looked == [a, b, c]
    assert legal_actions(state) == [A.DONE, A.SORT_DISCARD + 0, A.SORT_DISCARD + 1, A.SORT_DISCARD + 2]
    play(state, A.SORT_DISCARD + 1)
    assert state.discard == [b] and state.phase is Phase.SORT_ORDER
    assert legal_actions(state) == [A.SORT_TOP + 0, A.SORT_TOP + 1]
    play(state, A.SORT_TOP + 1)
    assert state.robinson == [c, a, d] and state.known_top == 2 and state.phase is Phase.FIGHT


def test_sort_three_can_look_at_fewer_and_keep_all():
    state = build_state(hazard=WILD, robinson=[GENIUS, WEAK[0]], table=[VISION])
    play(state, A.ACTIVATE + 0, A.DONE)
    assert state.robinson == [GENIUS, WEAK[0]] and state.known_top == 1 and state.phase is Phase.FIGHT


def test_exchange_once_replaces_on_the_same_side():
    state = build_state(hazard=WILD, robinson=[GENIUS], table=[STRATEGY_1, Slot(DISTRACTED[0], paid=True)])
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert [(s.card, s.paid) for s in state.fight.table] == [(STRATEGY_1, False), (GENIUS, True)]
    assert state.discard == [DISTRACTED[0]] and state.phase is Phase.FIGHT


def test_exchange_twice_second_is_optional_and_may_hit_the_new_card():
    state = build_state(hazard=WILD, robinson=[STUPID[1], GENIUS], table=[STRATEGY_2, DISTRACTED[0]])
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert state.fight.table[1].card == STUPID[1]
    assert legal_actions(state) == [A.DONE, A.TARGET + 1]
    play(state, A.TARGET + 1)
    assert state.fight.table[1].card == GENIUS and sorted(state.discard) == sorted([DISTRACTED[0], STUPID[1]])
    stop = build_state(hazard=WILD, robinson=[GENIUS], table=[STRATEGY_2, DISTRACTED[0]])
    play(stop, A.ACTIVATE + 0, A.TARGET + 1, A.DONE)
    assert stop.phase is Phase.FIGHT and stop.fight.table[1].card == GENIUS


def test_exchanging_a_destroyed_aging_card_cancels_its_ability():
    state = build_state(
        life=5,
        hazard=WILD,
        hazard_stack=[RAFT, CANNIBALS],
        robinson=[GENIUS],
        table=[STRATEGY_1, HUNGRY, FOCUSED[0], FOCUSED[1]],
    )
    play(state, A.ACTIVATE + 0, A.TARGET + 1, A.END_FIGHT)
    assert state.life == 5 and WILD in state.discard


def test_below_the_stack_gives_back_a_free_card():
    state = build_state(hazard=WILD, robinson=[GENIUS], table=[DECEPTION, DISTRACTED[0], WEAK[0], WEAK[1]])
    assert A.DRAW_FREE not in legal_actions(state)
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert state.robinson == [GENIUS, DISTRACTED[0]] and state.known_bottom == 1
    assert state.fight.free_used == 3 and A.DRAW_FREE in legal_actions(state)


def test_below_the_stack_on_a_paid_card_gives_nothing_back():
    state = build_state(hazard=RAFT, robinson=[GENIUS], table=[DECEPTION, Slot(DISTRACTED[0], paid=True)])
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert state.fight.free_used == 1 and A.DRAW_FREE not in legal_actions(state)


def test_below_the_stack_with_an_empty_stack_reshuffles_first():
    state = build_state(
        hazard=WILD, robinson=[], discard=[WEAK[2]], aging=[STUPID[0]], table=[DECEPTION, DISTRACTED[0]]
    )
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert sorted(state.robinson[:2]) == sorted([WEAK[2], STUPID[0]]) and state.robinson[2] == DISTRACTED[0]
    assert state.aging_taken == 1 and state.hidden == {STUPID[0]}
    empty = build_state(hazard=WILD, table=[DECEPTION, DISTRACTED[0]])
    assert A.ACTIVATE + 0 not in legal_actions(empty), "needs a card to form the stack from"


def test_highest_card_zero_hits_the_highest_unchanged_positive_card():
    state = build_state(hazard=WILD, table=[GENIUS, FOCUSED[0], SCARED[0]])
    assert fight_total(state.fight) == 1
    doubled = build_state(hazard=WILD, table=[Slot(GENIUS, paid=False, doubled=True), FOCUSED[0], SCARED[0]])
    assert fight_total(doubled.fight) == 4, "the doubled genius is changed, so the focused card is zeroed"
    two = build_state(hazard=WILD, table=[GENIUS, FOCUSED[0], FOCUSED[1], SCARED[0], SCARED[1]])
    assert fight_total(two.fight) == 1
    down = build_state(hazard=WILD, table=[GENIUS, FOCUSED[0], Slot(SCARED[0], paid=False, face_down=True)])
    assert fight_total(down.fight) == 3, "a destroyed scared card has no effect"
