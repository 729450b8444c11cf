"""The page as a person uses it, in headless Chromium (Debian's package, never a downloaded build).

Run with ``pytest -m browser`` (CI does, after ``apt-get install chromium``); ``FRIDAY13_CHROMIUM`` names another
binary. Screenshots go to ``FRIDAY13_SCREENSHOTS`` when it is set (the closing notes show them), else to the
test's temporary folder.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")
uvicorn = pytest.importorskip("uvicorn")
sync_api = pytest.importorskip("playwright.sync_api")

from friday13_env.friday import engine as solo_engine  # noqa: E402
from friday13_env.web import record, replay_html  # noqa: E402
from friday13_env.web.app import create_app  # noqa: E402
from friday13_env.web.sessions import SessionStore  # noqa: E402

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("FRIDAY13_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TIMEOUT_MS = 30_000


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """``friday13 serve``'s application on a free loopback port, in a thread of this process."""
    port = _free_port()
    config = uvicorn.Config(create_app(SessionStore(20, 600.0)), host="127.0.0.1", port=port, log_level="warning")
    instance = uvicorn.Server(config)
    thread = threading.Thread(target=instance.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not instance.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    instance.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"no Chromium at {CHROMIUM}: install Debian's package (apt-get install chromium) or set FRIDAY13_CHROMIUM"
        )
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS)
        yield instance
        instance.close()


@pytest.fixture
def page(browser: Any, server: str) -> Iterator[Any]:
    # bypass_csp: the page's policy forbids eval, which Playwright's wait_for_function uses (the page needs none).
    context = browser.new_context(viewport={"width": 1100, "height": 900}, bypass_csp=True)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    errors: list[str] = []
    tab.on("pageerror", lambda error: errors.append(str(error)))
    tab.goto(server + "/")
    tab.wait_for_selector("#start-card:focus")
    yield tab
    context.close()
    assert not errors, f"the page raised: {errors}"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("FRIDAY13_SCREENSHOTS", tmp_path))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _wait_for_turn(page: Any) -> str:
    """Wait until the page awaits the person: ``"move"``, ``"round"`` (the scoring panel) or ``"over"``."""
    page.wait_for_function(
        "document.querySelector('#board').dataset.ready === 'yes' || !document.querySelector('#round-end').hidden"
    )
    if page.is_visible("#round-end"):
        return "round"
    return "over" if page.is_visible("#download") else "move"


def _game_id(page: Any) -> str:
    return str(page.evaluate("localStorage.getItem('friday13-env-game') || ''"))


def _start_card_game(page: Any, opponents: str = "cautious", rounds: int = 4, players: int = 4) -> None:
    page.select_option("#speed", "0")
    page.select_option("#players", str(players))
    page.select_option("#rounds", str(rounds))
    for select in page.locator("#opponents select").all():
        select.select_option(opponents)
    page.click("#start-card")


def _seat_scores(page: Any) -> list[int]:
    texts = page.locator("#board .seat .score").all_text_contents()
    return [int(text.split(":")[1]) for text in texts]


def test_a_whole_card_game_by_clicking_matches_the_engine(page: Any, shots: Path) -> None:
    _start_card_game(page)
    game_id = ""
    rounds_explained = 0
    moves = 0
    while True:
        state = _wait_for_turn(page)
        game_id = game_id or _game_id(page)
        if state == "round":
            rounds_explained += 1
            body = page.locator("#round-end-body")
            assert body.locator(".majorities li").count() == 3
            assert body.locator(".round-table tbody tr").count() == 4
            if rounds_explained == 1:
                page.screenshot(path=str(shots / "card-round-end.png"))
            page.click("#continue")
            continue
        if state == "over":
            break
        if moves == 8:
            page.screenshot(path=str(shots / "card-game.png"))
        legal = page.locator("#board button.legal")
        assert legal.count() > 0
        legal.first.click()
        moves += 1
    assert rounds_explained == 4
    replay = page.request.get(f"{page.url.rstrip('/')}/api/games/{game_id}/replay").json()
    game = record.from_dict(replay)
    assert isinstance(game, record.CardRecord)
    _, steps = record.card_positions(game)
    assert _seat_scores(page) == steps[-1].after.scores
    assert "wins" in page.text_content("#message") or "share the win" in page.text_content("#message")


def test_a_reload_keeps_the_game(page: Any) -> None:
    _start_card_game(page, opponents="majority", rounds=1)
    for _ in range(3):
        _wait_for_turn(page)
        page.locator("#board button.legal").first.click()
    _wait_for_turn(page)
    frames = page.get_attribute("#board", "data-frames")
    hand = page.locator("#board .hand-card").evaluate_all(
        "cards => cards.map(c => c.dataset.kind + 'x' + c.dataset.count)"
    )
    game_id = _game_id(page)
    page.reload()
    _wait_for_turn(page)
    assert _game_id(page) == game_id
    assert page.get_attribute("#board", "data-frames") == frames
    assert (
        page.locator("#board .hand-card").evaluate_all(
            "cards => cards.map(c => c.dataset.kind + 'x' + c.dataset.count)"
        )
        == hand
    )
    assert page.locator("#board button.legal").count() > 0


def test_a_reload_after_a_round_ended_shows_its_scoring_again(page: Any) -> None:
    _start_card_game(page, opponents="cautious", rounds=2)
    while _wait_for_turn(page) == "move":
        page.locator("#board button.legal").first.click()
    scoring = page.text_content("#round-end-body")
    page.reload()
    assert _wait_for_turn(page) == "round"
    assert page.text_content("#round-end-body") == scoring
    page.keyboard.press("Enter")
    assert _wait_for_turn(page) == "move"
    assert page.get_attribute("#board", "data-ready") == "yes"


def test_the_keyboard_alone_plays_a_game(page: Any) -> None:
    page.select_option("#speed", "0")
    page.select_option("#rounds", "1")
    page.focus("#start-card")
    page.keyboard.press("Enter")
    presses = 0
    while True:
        state = _wait_for_turn(page)
        if state == "over":
            break
        if state == "round":
            page.keyboard.press("Enter")
            continue
        # Alternate the two ways a keyboard plays: the number key, and Enter on the focused (first legal) move.
        before = int(page.get_attribute("#board", "data-frames"))
        page.keyboard.press("1" if presses % 2 else "Enter")
        presses += 1
        page.wait_for_function(
            f"Number(document.querySelector('#board').dataset.frames) > {before}"
            " || !document.querySelector('#round-end').hidden"
        )
    assert presses > 5
    assert page.is_visible("#download")


def test_a_hint_names_the_adviser_and_a_legal_move(page: Any) -> None:
    _start_card_game(page, rounds=1)
    _wait_for_turn(page)
    page.keyboard.press("h")
    page.wait_for_selector("#hint-box:not([hidden])")
    assert "ppo-v4" in page.text_content("#hint-box .hint-text")
    action = page.get_attribute("#hint-box", "data-action")
    assert page.locator(f'#board button.legal[data-action="{action}"]').count() == 1


def test_a_whole_solo_game_by_clicking_matches_the_engine(page: Any, shots: Path) -> None:
    page.select_option("#speed", "0")
    page.select_option("#level", "1")
    page.click("#start-solo")
    shot_taken = False
    while _wait_for_turn(page) == "move":
        if not shot_taken and page.locator("#board .fight .slot").count() >= 3:
            page.screenshot(path=str(shots / "solo-fight.png"), full_page=True)
            shot_taken = True
        before = page.get_attribute("#board", "data-frames")
        page.locator("#board button.legal").first.click()
        page.wait_for_function(f"document.querySelector('#board').dataset.frames !== '{before}'")
    game_id = page.url.rstrip("/")
    replay = page.request.get(f"{game_id}/api/games/{_game_id_after_end(page)}/replay").json()
    game = record.from_dict(replay)
    assert isinstance(game, record.SoloRecord)
    final = record.solo_positions(game)[-1][0]
    assert int(page.get_attribute("#board .result", "data-score")) == solo_engine.final_score(final)


def _game_id_after_end(page: Any) -> str:
    """A finished game's id, from the replay link (the saved id is cleared when a game ends)."""
    href = page.get_attribute("#download", "href")
    return href.split("/api/games/")[1].split("/")[0]


def test_a_phone_sized_screen_needs_no_sideways_scrolling(browser: Any, server: str, shots: Path) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, bypass_csp=True
    )
    tab = context.new_page()
    tab.goto(server + "/")
    tab.select_option("#speed", "0")
    tab.select_option("#players", "6")
    tab.click("#start-card")
    _wait_for_turn(tab)
    width, inner = tab.evaluate("[document.scrollingElement.scrollWidth, innerWidth]")
    tab.screenshot(path=str(shots / "card-phone.png"), full_page=True)
    context.close()
    assert width <= inner


def test_the_round_scoring_fits_a_phone_screen(browser: Any, server: str) -> None:
    context = browser.new_context(viewport={"width": 320, "height": 640}, is_mobile=True, bypass_csp=True)
    context.set_default_timeout(TIMEOUT_MS)
    tab = context.new_page()
    tab.goto(server + "/")
    tab.select_option("#speed", "0")
    tab.select_option("#players", "6")
    tab.select_option("#rounds", "1")
    tab.click("#start-card")
    while _wait_for_turn(tab) == "move":
        tab.locator("#board button.legal").first.click()
    assert tab.is_visible("#round-end")
    inner, outer = tab.evaluate(
        "[document.querySelector('#round-end').scrollWidth, document.querySelector('#round-end').clientWidth]"
    )
    assert tab.locator("#round-end .round-table tbody tr").count() == 6
    context.close()
    assert inner <= outer


def test_the_full_table_of_a_three_player_replay_shows_the_dummy_hand(browser: Any, tmp_path: Path) -> None:
    import numpy as np

    from friday13_env.friday13 import engine
    from friday13_env.friday13.engine import Rules

    rules = Rules(num_players=3, num_rounds=1)
    state = engine.new_game(rules, np.random.default_rng(1))
    game = record.new_card_record(rules, ["a", "b", "c"])
    game.start_round(state)
    path = replay_html.write(game, tmp_path / "three.html")
    context = browser.new_context()
    tab = context.new_page()
    tab.goto(path.as_uri())
    tab.wait_for_selector("#viewer[data-index='0']")
    cards = tab.locator("#viewer .mini-hand svg.card").count()
    dummy = tab.locator("#viewer .seat.dummy .mini-hand svg.card").count()
    context.close()
    assert cards == rules.deck.size
    assert dummy == sum(state.dummy or [])


def test_a_replay_file_opens_from_disk_without_network_and_steps_to_the_end(
    browser: Any, tmp_path: Path, shots: Path
) -> None:
    import numpy as np

    from friday13_env.friday13 import engine
    from friday13_env.friday13.engine import Rules

    rng = np.random.default_rng(3)
    rules = Rules(num_players=4, num_rounds=2)
    state = engine.new_game(rules, rng)
    game = record.new_card_record(rules, ["alice", "</script><script>alert(1)</script>", "carol", "dave"])
    game.start_round(state)
    while True:
        action = int(rng.choice(engine.legal_actions(state)))
        engine.play(state, action)
        game.move(action)
        if state.round_over:
            if state.game_over:
                break
            engine.next_round(state, rng)
            game.start_round(state)
    path = replay_html.write(game, tmp_path / "game.html")
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    requests: list[str] = []

    def network(route: Any) -> None:
        """Let the file itself load; any other request (none is expected) is noted and refused."""
        if route.request.url.startswith("file:"):
            route.continue_()
        else:
            requests.append(route.request.url)
            route.abort()

    context.route("**/*", network)
    tab = context.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(path.as_uri())
    tab.wait_for_selector("#viewer[data-index='0']")
    tab.focus("#viewer")
    tab.keyboard.press("ArrowRight")
    tab.wait_for_selector("#viewer[data-index='1']")
    tab.keyboard.press("End")
    last = str(sum(len(moves) for moves in game.moves) + len(game.deals) - 1)
    tab.wait_for_selector(f"#viewer[data-index='{last}']")
    scores = [int(text.split(":")[1]) for text in tab.locator("#viewer .seat .score").all_text_contents()]
    assert scores == state.scores
    assert tab.locator(".viewer-scoring .round-table").count() == 1
    tab.select_option(".view-seat", "0")
    assert tab.locator("#viewer .hand").count() == 1
    tab.select_option(".view-seat", "all")
    tab.locator(".viewer-controls input[type=range]").fill("30")
    tab.wait_for_selector("#viewer[data-index='30']")
    assert tab.locator("#viewer .mini-hand").count() == 4
    tab.screenshot(path=str(shots / "replay.png"), full_page=True)
    context.close()
    assert not dialogs, "a seat label ran as script"
    assert requests == []


def test_the_board_stops_awaiting_the_person_as_soon_as_a_move_is_sent(page: Any) -> None:
    # data-ready is how a script (and these tests) knows the page waits for the person; a stale "yes" while the
    # move is in flight let a test read a board the bots' reply was redrawing.
    _start_card_game(page, opponents="majority", rounds=1)
    _wait_for_turn(page)
    ready_after_click = page.evaluate(
        "() => { document.querySelector('#board button.legal').click();"
        " return document.querySelector('#board').dataset.ready; }"
    )
    assert ready_after_click == "no"
    assert _wait_for_turn(page) in ("move", "round")
