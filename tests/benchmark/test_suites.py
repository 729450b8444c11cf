"""The shipped suites are what they claim: their deals hash to the pinned digests, their anchors play as their
fingerprints say, and a suite whose deals or anchors drifted is refused before any game."""

from __future__ import annotations

import dataclasses
import json
from importlib import resources
from typing import Any

import pytest

from friday13_env.benchmark import fingerprints, runner
from friday13_env.benchmark.suite import NORMALISERS, SPLITS, Split, Suite, get_suite, suite_from_dict, suites
from friday13_env.friday13.agents import REGISTRY
from tests.benchmark.helpers import anchor_fingerprint, small_suite

SHIPPED = sorted(suites())


def test_the_shipped_suite_files_are_the_suites() -> None:
    """Every ``suites/*.json`` file is one suite named as its file, and the six documented suites are there."""
    folder = resources.files("friday13_env.benchmark") / "suites"
    stems = sorted(entry.name.removesuffix(".json") for entry in folder.iterdir() if entry.name.endswith(".json"))
    assert stems == SHIPPED
    assert set(SHIPPED) >= {"card-4p", "card-4p-quick", "card-sizes", "card-german", "card-mixed", "friday-levels"}


@pytest.mark.parametrize("name", SHIPPED)
def test_a_suite_survives_its_json_form(name: str) -> None:
    """``suite_from_dict(suite.to_dict())`` gives the same suite, through real JSON text."""
    suite = get_suite(name)
    assert suite_from_dict(json.loads(json.dumps(suite.to_dict()))) == suite


@pytest.mark.parametrize("name", SHIPPED)
def test_a_suite_pins_every_anchor_it_seats_or_normalises_by(name: str) -> None:
    """Each cell's opponents and both normalisers have a 16-hex fingerprint; references are the normalisers'."""
    suite = get_suite(name)
    seated = {opponent for cell in suite.cells for opponent in cell.opponents}
    assert seated | set(NORMALISERS) <= set(suite.anchors)
    assert all(len(value) == 16 and int(value, 16) >= 0 for value in suite.anchors.values())
    assert set(suite.references) <= set(NORMALISERS)
    assert sorted(suite.splits) == sorted(SPLITS)
    assert suite.split("test").seed != suite.split("dev").seed
    assert suite.deals_sha256["test"] != suite.deals_sha256["dev"]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_deals_hash_to_the_pinned_digests(name: str) -> None:
    """Both splits' deals, generated again, hash to the suite's frozen ``deals_sha256``."""
    suite = get_suite(name)
    for split in SPLITS:
        assert fingerprints.deals_digest(suite, split) == suite.deals_sha256[split], f"{suite.id} {split}"


ANCHORS = sorted(
    {(suite.game, runner._decks(suite)[0], anchor) for suite in suites().values() for anchor in suite.anchors}
)


@pytest.mark.parametrize(("game", "deck", "anchor"), ANCHORS)
def test_every_anchor_plays_as_its_fingerprint_says(game: str, deck: str, anchor: str) -> None:
    """A fresh fingerprint of each anchor (built with seed 0) equals the one every suite of its game and deck pins."""
    found = anchor_fingerprint(game, deck, anchor)
    pinned = {
        suite.id: suite.anchors[anchor]
        for suite in suites().values()
        if suite.game == game and anchor in suite.anchors and runner._decks(suite)[0] == deck
    }
    assert pinned and set(pinned.values()) == {found}, pinned


def test_a_fingerprint_tells_agents_and_decks_apart() -> None:
    """The fingerprint is not a constant: different anchors, and one anchor at two decks, hash differently."""
    standard = [anchor_fingerprint("friday13", "standard", name) for name in ("random", "cautious", "majority")]
    assert len(set(standard)) == 3
    assert anchor_fingerprint("friday13", "german", "cautious") != standard[1]


def test_a_suite_whose_deals_changed_is_refused() -> None:
    """Another split seed under the same pinned digest is an error naming the split's deals, before any game."""
    suite = small_suite()
    assert runner.check_suite(suite, "test") == suite.deals_sha256["test"]
    moved = dataclasses.replace(suite, splits={**suite.splits, "test": Split(suite.split("test").seed + 1, 5)})
    with pytest.raises(ValueError, match=r"suite tiny-v1: the test deals this installation generates hash to"):
        runner.check_suite(moved, "test")
    runner.check_suite(moved, "dev")  # the other split is untouched
    more = dataclasses.replace(suite, splits={**suite.splits, "dev": Split(suite.split("dev").seed, 6)})
    with pytest.raises(ValueError, match=r"the dev deals .* not the frozen"):
        runner.check_suite(more, "dev")


def test_an_anchor_that_plays_differently_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """If ``cautious`` came to build another agent, the suite that pins it is refused, naming the anchor."""
    suite = small_suite()
    runner.check_suite(suite, "test")
    random_factory = REGISTRY._factories["random"]
    monkeypatch.setitem(REGISTRY._factories, "cautious", random_factory)
    with pytest.raises(ValueError, match=r"anchor 'cautious' plays differently from the suite's"):
        runner.check_suite(suite, "test")
    with pytest.raises(ValueError, match=r"anchor 'cautious' plays differently"):
        runner.prepare("random", suite, workers=1)


def test_an_edited_anchor_fingerprint_is_refused() -> None:
    """A suite file pinning another fingerprint for an anchor is refused with both fingerprints in the message."""
    suite = small_suite()
    edited = dataclasses.replace(suite, anchors={**suite.anchors, "random": "0123456789abcdef"})
    with pytest.raises(ValueError, match=r"anchor 'random' .* frozen 0123456789abcdef"):
        runner.check_suite(edited, "test")


def suite_data() -> dict[str, Any]:
    return json.loads(json.dumps(get_suite("card-4p").to_dict()))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda data: data.pop("splits"), r"not a benchmark suite: KeyError\('splits'\)"),
        (lambda data: data["splits"].pop("dev"), r"must have the splits \['test', 'dev'\], has \['test'\]"),
        (lambda data: data["references"].update(random=[0.0, 0.1, 0.2]), r"random's references have 3 cells, not 4"),
        (lambda data: data.update(game="chess"), r"unknown game 'chess'"),
        (lambda data: data["cells"][0].pop("players"), r"not a benchmark suite"),
        (lambda data: data.update(cells=None), r"not a benchmark suite"),
        (lambda data: data["cells"][0].update(opponents="random"), r"opponents must be a list, not 'random'"),
        (lambda data: data["cells"][0].update(players=4.9), r"players must be a whole number .*, not 4\.9"),
        (lambda data: data["cells"][0].update(players=5), r"cell 4p-vs-random: 5 players must be 3-6, the agent and"),
        (lambda data: data["cells"][0].update(players=7, opponents=["random"] * 6), r"7 players must be 3-6"),
        (lambda data: data["cells"][0].update(deck="french"), r"deck 'french' is not one of \['german', 'standard'\]"),
        (
            lambda data: data["anchors"].pop("majority"),
            r"must pin every anchor it seats \(\['cautious', 'majority', 'random', 'search'\]\)",
        ),
        (lambda data: data["references"].update(median=[0.5] * 4), r"references are \['random', 'search'\]'s, not"),
        (lambda data: data["references"].update(search=data["references"]["random"]), r"the same score: it cannot be"),
        (lambda data: data["references"]["search"].__setitem__(0, 1.5), r"search's references must be win shares"),
        (lambda data: data["references"]["search"].__setitem__(0, "0.5"), r"a reference score must be a number"),
        (lambda data: data["splits"]["test"].update(deals=0), r"split test must have 1 to 100,000 deals, has 0"),
        (lambda data: data["splits"]["test"].update(deals=10**12), r"split test must have 1 to 100,000 deals"),
        (lambda data: data.update(version=0), r"must have a version, a round and a cell"),
        (lambda data: data.update(version=True), r"version must be a whole number"),
        (lambda data: data.update(name=["card-4p"]), r"name must be a text"),
    ],
)
def test_a_file_that_is_not_a_suite_is_refused(edit: Any, message: str) -> None:
    """Missing splits, a missing or extra split, references of the wrong length, an unknown game or a broken cell;
    a value of the wrong kind (never coerced: a text of opponents is not a list of letters, 4.9 players is not
    4); a table whose size is not its seats', an unknown deck; an anchor seated but not pinned; references that
    are not the normalisers', not win shares, or that cannot normalise a cell; no deals or too many."""
    data = suite_data()
    edit(data)
    with pytest.raises(ValueError, match=message):
        suite_from_dict(data)


SUITE_DEFINITIONS = {
    "card-4p-quick-v1": "92f9eeed085c2bf34ca09a3657da5f3ea245f232f26992208ab64bf26312bca6",
    "card-4p-v1": "2e3bed5236c4c955924ebaecb8d632fbde4856b58bb5f482bf74235dcdae8aed",
    "card-german-v1": "1eb2d37cf8d2bbb0ec6b2afe37deec2600a55887aa426f03b7fc2efb90f4cae6",
    "card-mixed-v1": "0c789252ab20dacb3d901553aaa95e30d71b50d760f079d7145906aa06cf08ac",
    "card-sizes-v1": "af3921ecfcc7cf937db3e5cc7d3c2eb9f57ea932077c3da0c377ed68a643590d",
    "friday-levels-v2": "47ae8c9ae6f2dba5a9e13d9c53c3859536f7d09290965cb63d32eead7a06b8da",
}
"""Every shipped suite version's ``definition_sha256``: what its cited numbers mean. An edit to a suite (its cells,
opponents, splits, anchors or references) fails here: it must become a new version (``version`` + 1, a new entry
here, its results in a new folder), never a silent change to one that results already cite."""


def test_a_shipped_suite_version_is_never_edited() -> None:
    """Each shipped suite is exactly the definition its version was frozen with; a changed opponent changes it."""
    assert {suite.id: suite.definition_sha256 for suite in suites().values()} == SUITE_DEFINITIONS
    suite = get_suite("card-4p")
    cells = (dataclasses.replace(suite.cells[0], opponents=("search",) * 3), *suite.cells[1:])
    assert dataclasses.replace(suite, cells=cells).definition_sha256 != suite.definition_sha256
    assert dataclasses.replace(suite, title="another title").definition_sha256 == suite.definition_sha256


def test_a_suite_object_that_cannot_be_scored_is_refused_before_a_game() -> None:
    """``run_benchmark`` with a ``Suite`` object checks it as a suite file is checked: references that cannot
    normalise a cell are an error before any game, not a division by zero after every game."""
    suite = small_suite(references={"random": (0.25, 0.25), "search": (0.25, 0.9)})
    with pytest.raises(ValueError, match=r"suite 'tiny': a cell's references give random and search the same score"):
        runner.prepare("random", suite, workers=1)


def test_references_of_the_right_length_are_read() -> None:
    """References with one score per cell are kept, as tuples of floats."""
    data = suite_data()
    data["references"] = {"random": [0, 0, 0, 0], "search": [1, 0.5, 0.4, 0.25]}
    suite: Suite = suite_from_dict(data)
    assert suite.references == {"random": (0.0, 0.0, 0.0, 0.0), "search": (1.0, 0.5, 0.4, 0.25)}


@pytest.mark.parametrize("name", ["nope", "", None, 3, "card-4p-v1"])
def test_an_unknown_suite_lists_the_suites(name: object) -> None:
    """``get_suite`` of anything but a shipped name is a ``ValueError`` listing every suite."""
    with pytest.raises(ValueError, match=r"unknown benchmark suite") as error:
        get_suite(name)
    assert all(repr(suite) in str(error.value) for suite in SHIPPED)


def test_a_missing_split_is_named() -> None:
    """Asking a suite for a split it does not have lists its splits."""
    with pytest.raises(ValueError, match=r"has no split 'train'; its splits: \['dev', 'test'\]"):
        get_suite("card-4p").split("train")
