"""Hand-built scenarios for the basic rules: set-up, hazards, drawing, winning, losing, life, steps."""

from __future__ import annotations

import numpy as np
import pytest

from friday13_env.friday import actions as A
from friday13_env.friday.cards import NUM_CARDS, card_type
from friday13_env.friday.encoding import encode
from friday13_env.friday.engine import apply_action, final_score, legal_actions, new_game
from friday13_env.friday.scenario import build_state, find_card
from friday13_env.friday.state import Phase, Slot
from tests.friday.helpers import CANNIBALS, DISTRACTED, EATING, FOCUSED, GENIUS, HUNGRY, STUPID, WEAK, WILD, play

# Aging cards: -2 life, stop, -5 points.
VERY_HUNGRY, VERY_TIRED, SUICIDAL = (find_card(name) for name in ("very hungry", "very tired", "suicidal"))
RAFT = find_card("books")  # hazard side: with the raft to the wreck, free 1, values 0/1/3


# --------------------------------------------------------------------------- set-up


@pytest.mark.parametrize(
    ("level", "life", "deck", "aging", "boxed"),
    [(1, 20, 18, 10, 1), (2, 20, 19, 9, 1), (3, 20, 19, 10, 0), (4, 18, 19, 10, 0)],
)
def test_level_setup(level, life, deck, aging, boxed):
    state = new_game(level, np.random.default_rng(level))
    assert (state.life, state.reserve) == (life, 2)
    assert len(state.robinson) == deck and len(state.hidden) == deck - 18
    assert len(state.aging) == aging and len(state.boxed) == boxed
    assert state.aging_taken == (0 if level == 1 else 1)
    assert len(state.hazard_options) == 2 and len(state.hazard_stack) == 28
    assert len(set(state.pirates)) == 2 and state.pirates_defeated == [False, False]
    assert state.phase is Phase.CHOOSE_HAZARD and state.step == 0
    difficult = [card_type(c).difficult for c in state.aging]
    assert difficult == sorted(difficult), "normal aging cards lie on top of the difficult ones"
    assert sum(difficult) == 3
    assert (find_card("very stupid") in state.boxed) == (level <= 2)
    if level >= 2:
        assert all(card_type(c).is_aging and not card_type(c).difficult for c in state.hidden)


def test_bad_level_is_rejected():
    with pytest.raises(ValueError, match=r"level must be one of \[1, 2, 3, 4\]"):
        new_game(5, np.random.default_rng(0))


@pytest.mark.parametrize("rng", [None, 0, np.random.RandomState(0), np.random.default_rng])
def test_the_engine_takes_only_a_numpy_generator(rng):
    message = r"rng must be a numpy.random.Generator \(np.random.default_rng\(seed\)\), got "
    with pytest.raises(ValueError, match=message):
        new_game(1, rng)
    state = new_game(1, np.random.default_rng(0))
    before = encode(state)
    with pytest.raises(ValueError, match=message):
        apply_action(state, A.HAZARD_A, rng)
    assert np.array_equal(encode(state), before), "refused before anything was played"


def test_same_seed_same_game():
    a, b = new_game(3, np.random.default_rng(7)), new_game(3, np.random.default_rng(7))
    assert (a.robinson, a.aging, a.hazard_options, a.pirates) == (
        b.robinson,
        b.aging,
        b.hazard_options,
        b.pirates,
    )


# --------------------------------------------------------------------------- hazards and steps


def test_choose_hazard_discards_the_other():
    state = new_game(1, np.random.default_rng(0))
    first, second = state.hazard_options
    play(state, A.HAZARD_B)
    assert state.fight.hazard == second and state.hazard_discard == [first]
    assert state.fight.free_total == card_type(second).hazard.free
    assert legal_actions(state) == [A.DRAW_FREE], "the first card must be drawn before anything else"


def test_last_hazard_skip_starts_next_step_with_reshuffled_discard():
    state = build_state(hazard_discard=[WILD, CANNIBALS], robinson=WEAK[:3])
    state.hazard_options = [RAFT]
    state.phase = Phase.LAST_HAZARD
    assert legal_actions(state) == [A.FIGHT_LAST, A.SKIP_LAST]
    play(state, A.SKIP_LAST)
    assert state.step == 1 and state.hazard_discard == []
    assert sorted(state.hazard_options + state.hazard_stack) == sorted([RAFT, WILD, CANNIBALS])
    assert len(state.hazard_options) == 2 and state.phase is Phase.CHOOSE_HAZARD


def test_last_hazard_can_be_fought():
    state = build_state(robinson=WEAK[:3])
    state.hazard_options = [RAFT]
    state.phase = Phase.LAST_HAZARD
    play(state, A.FIGHT_LAST)
    assert state.fight.hazard == RAFT and state.hazard_options == []


def test_red_step_end_goes_to_pirates():
    state = build_state(step=2, hazard_discard=[WILD], robinson=WEAK[:3])
    state.hazard_options = [RAFT]
    state.phase = Phase.LAST_HAZARD
    play(state, A.SKIP_LAST)
    assert state.step == 3 and state.phase is Phase.CHOOSE_PIRATE
    assert sorted(state.hazard_discard) == sorted([WILD, RAFT]), "remaining hazards stay in the discard"


# --------------------------------------------------------------------------- drawing and buying


def test_free_cards_then_buying_costs_one_life():
    state = build_state(life=10, hazard=WILD, robinson=WEAK[:6])
    play(state, A.DRAW_FREE)
    assert A.BUY not in legal_actions(state), "extra cards only after the free ones"
    play(state, A.DRAW_FREE, A.DRAW_FREE, A.DRAW_FREE)
    assert A.DRAW_FREE not in legal_actions(state)
    play(state, A.BUY)
    assert state.life == 9 and state.reserve == 13
    assert [s.paid for s in state.fight.table] == [False] * 4 + [True]


def test_cannot_buy_against_a_hazard_without_life():
    state = build_state(life=0, hazard=RAFT, robinson=WEAK[:3], table=[WEAK[3]])
    assert legal_actions(state) == [A.END_FIGHT]


def test_stop_card_on_the_left_stops_free_cards_and_destroying_it_resumes():
    realization = find_card("realization", 0)
    state = build_state(hazard=WILD, robinson=[VERY_TIRED, *WEAK[:3]], table=[realization])
    play(state, A.DRAW_FREE)
    assert A.DRAW_FREE not in legal_actions(state) and A.BUY in legal_actions(state)
    play(state, A.ACTIVATE + 0, A.TARGET + 1)
    assert state.fight.table[1].face_down
    assert A.DRAW_FREE in legal_actions(state), "free cards may continue once the stop card is gone"


def test_stop_card_on_the_right_is_only_a_zero():
    state = build_state(hazard=WILD, robinson=WEAK[:3], table=[Slot(VERY_TIRED, paid=True)])
    assert A.DRAW_FREE in legal_actions(state)


# --------------------------------------------------------------------------- winning and losing


def test_winning_turns_the_hazard_into_a_knowledge_card():
    state = build_state(hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[GENIUS, *FOCUSED[:2]])
    play(state, A.END_FIGHT)
    assert sorted(state.discard) == sorted([WILD, GENIUS, *FOCUSED[:2]])
    assert state.fight is None and state.phase is Phase.CHOOSE_HAZARD
    assert state.hazard_options == [RAFT, CANNIBALS] and state.life == 20


def test_deliberate_loss_pays_the_difference_and_destroys_1_or_2_per_card():
    state = build_state(life=10, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[DISTRACTED[0], STUPID[0], WEAK[0]])
    play(state, A.END_FIGHT)  # total -3 against 4: pay 7
    assert state.life == 3 and state.phase is Phase.LOSS_DESTROY and state.loss_budget == 7
    assert legal_actions(state) == [A.DONE, A.TARGET + 0, A.TARGET + 1, A.TARGET + 2]
    play(state, A.TARGET + 1)  # the aging card costs 2
    assert state.loss_budget == 5 and state.destroyed == [STUPID[0]]
    play(state, A.TARGET + 0, A.TARGET + 0)  # distracted, then weak: 1 each
    assert sorted(state.destroyed) == sorted([STUPID[0], DISTRACTED[0], WEAK[0]])
    assert state.fight is None and state.hazard_discard == [WILD] and state.life == 3


def test_no_extra_sacrifice_and_aging_life_is_separate():
    state = build_state(life=10, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[GENIUS, FOCUSED[0], HUNGRY])
    play(state, A.END_FIGHT)  # total 3 against 4: pay 1, plus 1 for »hungry«
    assert state.life == 8 and state.loss_budget == 1
    assert legal_actions(state) == [A.DONE, A.TARGET + 0, A.TARGET + 1], "the aging card would cost 2"
    play(state, A.TARGET + 1)
    assert state.destroyed == [FOCUSED[0]] and state.fight is None
    assert sorted(state.discard) == sorted([GENIUS, HUNGRY])


def test_loss_destroy_can_stop_early():
    state = build_state(hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[WEAK[0], WEAK[1]])
    play(state, A.END_FIGHT, A.DONE)
    assert state.destroyed == [] and sorted(state.discard) == sorted(WEAK[:2]) and state.life == 16


def test_paying_down_to_zero_is_fine_but_owing_more_loses():
    ok = build_state(life=4, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[WEAK[0]])
    play(ok, A.END_FIGHT)
    assert ok.life == 0 and not ok.done
    lost = build_state(life=3, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[WEAK[0]])
    play(lost, A.END_FIGHT)
    assert lost.done and lost.won is False and lost.life == 0 and lost.reserve == 22


def test_aging_life_is_paid_even_when_winning():
    state = build_state(life=10, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[GENIUS, *FOCUSED[:2], VERY_HUNGRY])
    play(state, A.END_FIGHT)
    assert state.life == 8 and WILD in state.discard
    broke = build_state(life=1, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[GENIUS, *FOCUSED[:2], VERY_HUNGRY])
    play(broke, A.END_FIGHT)
    assert broke.done and broke.won is False


def test_life_is_capped_at_22_and_by_the_reserve():
    state = build_state(life=21, hazard=WILD, table=[EATING])
    play(state, A.ACTIVATE + 0)
    assert (state.life, state.reserve) == (22, 0)
    full = build_state(life=22, hazard=WILD, robinson=WEAK[:2], table=[EATING])
    assert A.ACTIVATE + 0 not in legal_actions(full), "+life is pointless (and not offered) at 22"
    level4 = build_state(level=4, life=19, hazard=WILD, table=[EATING])
    play(level4, A.ACTIVATE + 0)
    assert (level4.life, level4.reserve) == (20, 0), "level 4 has only 20 tokens in play"


# --------------------------------------------------------------------------- the Robinson stack running out


def test_reshuffle_adds_an_aging_card_only_when_another_card_is_needed():
    state = build_state(hazard=WILD, robinson=[WEAK[0]], discard=[GENIUS, FOCUSED[0]], aging=[STUPID[0], SUICIDAL])
    play(state, A.DRAW_FREE)
    assert state.robinson == [] and state.discard == [GENIUS, FOCUSED[0]] and state.aging_taken == 0
    play(state, A.DRAW_FREE)
    assert state.aging == [SUICIDAL] and state.aging_taken == 1 and state.discard == []
    in_play = state.robinson + [s.card for s in state.fight.table[1:]]
    assert sorted(in_play) == sorted([GENIUS, FOCUSED[0], STUPID[0]])
    assert state.hidden == ({STUPID[0]} & set(state.robinson)), "the added aging card is face down"


def test_empty_aging_stack_just_reshuffles():
    state = build_state(hazard=WILD, robinson=[], discard=[GENIUS], aging=[])
    play(state, A.DRAW_FREE)
    assert state.fight.table[0].card == GENIUS and state.aging_taken == 0


def test_nothing_left_to_draw_allows_ending_with_no_card():
    state = build_state(hazard=RAFT, hazard_stack=[WILD, CANNIBALS])
    assert legal_actions(state) == [A.END_FIGHT]
    play(state, A.END_FIGHT)  # total 0 beats the green raft (0)
    assert state.discard == [RAFT]


def test_illegal_action_names_the_legal_ones_and_game_over_rejects_steps():
    state = build_state(hazard=WILD, robinson=WEAK[:2])
    with pytest.raises(ValueError, match=r"illegal action 3 in phase FIGHT; legal actions: 0 \(draw a free card\)"):
        play(state, A.END_FIGHT)
    lost = build_state(life=0, hazard=WILD, hazard_stack=[RAFT, CANNIBALS], table=[WEAK[0]])
    play(lost, A.END_FIGHT)
    with pytest.raises(ValueError, match="game is over"):
        play(lost, A.DONE)


@pytest.mark.parametrize("action", [1.0, True, False, np.float64(0), np.bool_(True), np.array([1]), "0", None, [0]])
def test_apply_action_takes_only_integers(action):
    state = new_game(1, np.random.default_rng(0))
    before = encode(state)
    message = (
        r"action must be an integer \(a Python int, a numpy integer or a 0-d integer array\), got .*; "
        r"legal actions: 0 \(fight hazard A\), 1 \(fight hazard B\)"
    )
    with pytest.raises(ValueError, match=message):
        play(state, action)
    assert np.array_equal(encode(state), before), "nothing was played"


@pytest.mark.parametrize("action", [np.int64(1), np.uint8(1), np.array(1)])
def test_apply_action_takes_numpy_integers_like_ints(action):
    a, b = new_game(1, np.random.default_rng(0)), new_game(1, np.random.default_rng(0))
    assert np.array_equal(encode(play(a, action)), encode(play(b, 1)))


# --------------------------------------------------------------------------- score


def test_final_score_counts_cards_pirates_life_and_unbeaten_hazards():
    state = build_state(
        life=10,
        step=3,
        robinson=[GENIUS, WILD, STUPID[0]],
        discard=[FOCUSED[0]],
        destroyed=[SUICIDAL],
        hazard_discard=[RAFT, CANNIBALS],
        pirates_defeated=[True, True],
    )
    state.won, state.phase = True, Phase.GAME_OVER
    assert final_score(state) == (2 + 3 - 5 + 1) + 30 + 50 - 6
    state.won, state.pirates_defeated = False, [True, False]
    assert final_score(state) == (2 + 3 - 5 + 1) + 15 - 6, "life only counts when the game is won"


def test_every_card_is_somewhere_after_building():
    state = build_state(hazard=WILD, robinson=WEAK, table=[GENIUS])
    cards = sorted(c for zone in state.all_zones().values() for c in zone)
    assert cards == list(range(NUM_CARDS))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": 5}, r"level must be one of \[1, 2, 3, 4\], got 5"),
        ({"life": 30}, r"life must be an int in 0\.\.22 at level 1 \(its 20 life and 2 reserve tokens\), got 30"),
        ({"level": 4, "life": 21}, r"life must be an int in 0\.\.20 at level 4 \(its 18 life and 2 reserve"),
        ({"life": -1}, r"life must be an int in 0\.\.22"),
        ({"life": 2.0}, r"life must be an int in 0\.\.22 .*, got 2\.0"),
        ({"step": 4}, r"step must be an int in 0\.\.3 \(3: the pirates\), got 4"),
        ({"aging_taken": 12}, r"aging_taken must be an int in 0\.\.11, got 12"),
        ({"robinson": [0], "discard": [0]}, r"card 0 \(.+\) is in robinson and again in discard; each card must be"),
        ({"robinson": [GENIUS, GENIUS]}, r"card \d+ \(genius\) is in robinson and again in robinson"),
        ({"hazard": WILD, "hazard_stack": [WILD]}, r"card \d+ \(vision\) is in hazard and again in hazard_stack"),
        ({"hazard": WILD, "table": [Slot(WEAK[0], paid=True)], "discard": [WEAK[0]]}, r"is in table and again in"),
        ({"discard": [99]}, r"discard holds 99; card ids are ints in 0\.\.58"),
        ({"destroyed": [-1]}, r"destroyed holds -1; card ids are ints in 0\.\.58"),
        ({"aging": [True]}, r"aging holds True; card ids are ints in 0\.\.58"),
        ({"table": [1.0], "hazard": WILD}, r"table holds 1\.0; card ids are ints in 0\.\.58"),
        ({"hazard": 999}, r"hazard must be a hazard card, one of 29\.\.58, got 999"),
        ({"hazard": GENIUS}, r"hazard must be a hazard card, one of 29\.\.58, got \d+ \(genius\)"),
        ({"hazard_stack": [GENIUS]}, r"hazard_stack holds \d+ \(genius\), not a hazard card \(29\.\.58\)"),
        ({"pirate": 5}, r"pirate must be an int in 0\.\.1 \(an index into pirates=\), got 5"),
        ({"pirate": True}, r"pirate must be an int in 0\.\.1 .*, got True"),
        ({"hazard": WILD, "pirate": 0}, r"give hazard= or pirate= \(the fight\), not both"),
        ({"table": [GENIUS]}, r"table= needs a fight: give hazard= or pirate="),
        ({"pirates": (0, 10)}, r"pirates must be two different pirate ids in 0\.\.9, got \(0, 10\)"),
        ({"pirates": (3, 3)}, r"pirates must be two different pirate ids"),
        ({"pirates_defeated": (True,)}, r"pirates_defeated must be two bools, got \(True,\)"),
        ({"hidden": [GENIUS]}, r"hidden cards must be in the Robinson stack: \d+ \(genius\) is not"),
    ],
)
def test_build_state_refuses_what_no_game_can_hold(kwargs, message):
    with pytest.raises(ValueError, match=message):
        build_state(**kwargs)


@pytest.mark.parametrize(("index", "shown"), [(9, "9"), (-1, "-1"), (True, "True"), (0.0, "0.0")])
def test_find_card_refuses_an_index_past_the_copies(index, shown):
    with pytest.raises(ValueError, match=rf"index must be an int in 0\.\.0 \(1 card called 'genius'\), got {shown}"):
        find_card("genius", index=index)
    assert find_card("weak", index=np.int64(2)) == find_card("weak", index=2)
