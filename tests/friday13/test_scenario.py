"""Hand-built positions (``friday13_env.friday13.scenario.from_hands``): every bad description refused with what is
wrong, and a partial position set up exactly as described."""

from __future__ import annotations

import pytest

from friday13_env.friday13.engine import start_player
from friday13_env.friday13.scenario import from_hands
from tests.friday13.test_rules import FOUR, STD, THREE, counts, empty, pile

ONE_EACH = [counts(STD, "cat 1"), counts(STD, "cat 2"), counts(STD, "cat 4")]


@pytest.mark.parametrize(
    ("hands", "options", "message"),
    [
        (ONE_EACH[:2], {}, "expected 3 or 4 hands for 3 players, got 2"),
        ([*ONE_EACH, empty(), empty()], {}, "expected 3 or 4 hands for 3 players, got 5"),
        ([*ONE_EACH[:2], [1, 0]], {}, r"a hand needs 16 counts \(one per card kind\), got 2"),
        ([*ONE_EACH[:2], [-1] + [0] * 15], {}, "a hand cannot hold negative counts"),
        (ONE_EACH, {"scores": [0, 0]}, "expected 3 scores, got 2"),
        (ONE_EACH, {"round_index": 4}, r"round_index must be in 0\.\.3, got 4"),
        (ONE_EACH, {"current": 3}, r"current must be a seat in 0\.\.2, got 3"),
        (ONE_EACH, {"piles": [[], []]}, "expected 3 piles, got 2"),
        (ONE_EACH, {"piles": [[16], [], []]}, "pile 0 holds unknown card kind 16"),
        (ONE_EACH, {"piles": [[], [0], []]}, "cat 1 cannot lie on pile 1"),
        (ONE_EACH, {"piles": [[4, 4], [], []]}, r"pile totals \[14, 0, 0\] exceed 13"),
        (ONE_EACH, {"captured": [empty()] * 2}, "expected 3 captured stacks, got 2"),
        (ONE_EACH, {"captured": [[0] * 4, [0] * 4, [1]]}, "a captured stack needs 4 non-negative counts by type"),
        (ONE_EACH, {"captured": [[0] * 4, [0] * 4, [0, -1, 0, 0]]}, "a captured stack needs 4 non-negative"),
        (ONE_EACH, {"played": [0] * 15}, r"a played list needs 16 counts \(one per card kind\), got 15"),
        ([empty()] * 3, {}, "every hand is empty"),
        ([counts(STD, "cat 1"), counts(STD, "cat 2", "cat 4"), empty()], {}, r"hand sizes \[1, 2, 0\]"),
        ([counts(STD, "cat 1", "cat 2", "cat 4"), counts(STD, "cat 2"), empty()], {}, "may differ by at most one"),
        # whole numbers, never rounded (a float count or seat was floored or became a hand of 1.5 cards)
        ([*ONE_EACH[:2], [1.5] + [0] * 15], {}, r"a hand's count must be a whole number \(an int\), got 1\.5"),
        ([*ONE_EACH[:2], [True] + [0] * 15], {}, r"a hand's count must be a whole number \(an int\), got True"),
        (ONE_EACH, {"scores": [1.7, 0, 0]}, r"a score must be a whole number \(an int\), got 1\.7"),
        (ONE_EACH, {"scores": [-1, 0, 0]}, r"scores cannot be negative, got \[-1, 0, 0\]"),
        (ONE_EACH, {"current": 1.0}, r"current must be a whole number \(an int\), got 1\.0"),
        (ONE_EACH, {"current": "1"}, r"current must be a whole number \(an int\), got '1'"),
        (ONE_EACH, {"round_index": 1.0}, r"round_index must be a whole number"),
        (ONE_EACH, {"piles": [[4.9], [], []]}, r"a pile's card kind must be a whole number \(an int\), got 4\.9"),
        (ONE_EACH, {"captured": [[0] * 4, [0] * 4, [0.5, 0, 0, 0]]}, r"a captured count must be a whole number"),
        # no card kind more often than the deck holds it, no more piled or captured than played
        ([[10] + [0] * 15, *ONE_EACH[1:]], {}, r"10 copies of cat 1 in the hands and the played cards; the standard "),
        (ONE_EACH, {"piles": [[0, 0], [], []], "played": counts(STD, "cat 1")}, r"holds fewer cards than the piles"),
        (ONE_EACH, {"piles": [[0, 0, 0], [], []]}, r"4 copies of cat 1 in the hands and the played cards"),
        (
            ONE_EACH,
            {"captured": [[0, 0, 0, 1000], [0] * 4, [0] * 4]},
            r"1000 Friday the 13th cards in the hands, on the piles and in the captured stacks; the standard deck "
            r"holds 8",
        ),
        (
            ONE_EACH,
            {"captured": [[2, 0, 0, 0], [0] * 4, [0] * 4], "played": counts(STD, "cat 5")},
            r"2 captured and 0 piled black cat cards, but only 1 played this round",
        ),
    ],
)
def test_from_hands_validates_its_input(hands: list[list[int]], options: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        from_hands(THREE, hands, **options)


def test_from_hands_sets_up_a_partial_position() -> None:
    state = from_hands(
        FOUR,
        [counts(STD, "cat 1"), counts(STD, "cat 2", "cat 4"), counts(STD, "f13", "f13"), counts(STD, "ladder 1")],
        round_index=2,
        current=1,
        piles=[pile(STD, "f13", "cat 5"), [], pile(STD, "ladder 7")],
        captured=[[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]],
        scores=[3, 1, 4, 1],
    )
    assert (state.round, state.current, start_player(state), state.plays_left) == (2, 1, 2, 6)
    assert state.pile_totals == [9, 0, 7]
    assert state.scores == [3, 1, 4, 1]
    assert state.captured[1] == [0, 1, 0, 0]
    assert state.played == counts(STD, "f13", "cat 5", "ladder 7")  # defaults to the cards in the piles
