"""The terminal game: move parsing, scripted complete games, bad input, options and entry points."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import numpy as np
import pytest

from friday13_env import agents, cli
from friday13_env.friday13 import play
from friday13_env.friday13.agents import RandomAgent
from friday13_env.friday13.cards import GERMAN_DECK, STANDARD_DECK
from friday13_env.friday13.engine import Rules
from friday13_env.friday13.scenario import from_hands

HAND_LINE = re.compile(r"^Hand of player_(\d): (.*)$", re.MULTILINE)


class ScriptedPlayer(io.TextIOBase):
    """An input stream that answers each prompt from the transcript so far, like a person would.

    It first sends the ``openers`` verbatim (malformed and illegal moves, commands), then plays the
    first card of the hand last printed, so that every game is driven to its end.
    """

    def __init__(self, output: io.StringIO, openers: list[str] | None = None) -> None:
        self.output = output
        self.openers = list(openers or [])
        self.sent: list[str] = []

    def readline(self, size: int | None = -1) -> str:
        if self.openers:
            line = self.openers.pop(0)
        else:
            hand = HAND_LINE.findall(self.output.getvalue())[-1][1]
            first = hand.split(", ")[0].split(" x")[0]
            line = "f13 ladder" if first == "f13" else first
        self.sent.append(line)
        return line + "\n"


def run_game(argv: list[str], openers: list[str] | None = None) -> tuple[int, str, ScriptedPlayer]:
    output = io.StringIO()
    player = ScriptedPlayer(output, openers)
    code = play.main(argv, player, output)
    return code, output.getvalue(), player


# -- move parsing ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("cat 1", 0),
        ("cat 7", 4),
        ("Mirror 2", 6),
        ("MIRROR   5", 8),
        ("m5", 8),
        ("l1", 10),
        ("ladder 7", 14),
        ("black cat 5", 3),
        ("play broken mirror 4", 7),
        ("cats 2", 1),
        ("f13 cat", 15),
        ("F13 Mirror", 16),
        ("f13ladder", 17),
        ("f13 l", 17),
        ("friday 13th m", 16),
        ("f13 on the cat pile", 15),
    ],
)
def test_parse_move_standard_deck(text: str, action: int) -> None:
    assert play.parse_move(text, STANDARD_DECK) == action


def test_parse_move_german_deck_has_zero_cards() -> None:
    assert play.parse_move("cat 0", GERMAN_DECK) == 0
    assert play.parse_move("mirror 7", GERMAN_DECK) == 11
    assert play.parse_move("f13 ladder", GERMAN_DECK) == 20


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("banana", "cannot read 'banana' as a card"),
        ("", "cannot read '' as a card"),
        ("cat", "cannot read 'cat'"),
        ("mirror 2 5", "cannot read"),
        ("7 cat", "cannot read"),
        ("cat 3", "there is no cat 3 in the standard deck; values are 1, 2, 4, 5, 7"),
        ("cat 0", "there is no cat 0 in the standard deck"),
        ("f13", "say which pile the Friday the 13th card goes on: 'f13 cat', 'f13 mirror', 'f13 ladder'"),
        ("f13 dog", "say which pile"),
        ("f13 cat mirror", "say which pile"),
    ],
)
def test_parse_move_explains_bad_input(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        play.parse_move(text, STANDARD_DECK)


# -- complete games ----------------------------------------------------------------------------
def test_scripted_player_finishes_a_full_game_through_bad_input() -> None:
    openers = ["banana", "cat 3", "help", "board", "f13", "", "HELP"]
    code, transcript, player = run_game(["--players", "4", "--seat", "0", "--seed", "0"], openers)
    assert code == 0
    assert "Sorry, cannot read 'banana' as a card" in transcript
    assert "Sorry, there is no cat 3 in the standard deck" in transcript
    assert "Sorry, say which pile the Friday the 13th card goes on" in transcript
    assert transcript.count("Legal moves: ") == 2
    # Seat 0 of 4 holds 13, 12, 12 and 13 cards in rounds 1-4 (the start player rotates).
    assert transcript.count("You play ") == 50
    assert len(player.sent) == 50 + len(openers)
    assert transcript.count("Your move (player_0)> ") == len(player.sent)
    for round_number in range(1, 5):
        assert f"=== Round {round_number} of 4: player_{round_number - 1} starts ===" in transcript
        assert f"Round {round_number} over." in transcript
    assert "Game over. Winner(s) with " in transcript
    assert re.search(r"You win!|You share the win!|You finish with \d+ points, rank [2-4] of 4\.", transcript)


def test_an_illegal_move_is_explained_and_asked_again() -> None:
    output = io.StringIO()
    # Find a card the human does not hold in the seeded deal, then try to play it first.
    probe = io.StringIO()
    play.main(["--players", "3", "--seed", "5", "--rounds", "1"], io.StringIO(""), probe)
    hand = HAND_LINE.findall(probe.getvalue())[0][1]
    missing = next(
        STANDARD_DECK.action_name(a)
        for a in range(15)
        if not re.search(rf"(^|, ){STANDARD_DECK.action_name(a)}( x\d)?(,|$)", hand)
    )
    player = ScriptedPlayer(output, [missing])
    assert play.main(["--players", "3", "--seed", "5", "--rounds", "1"], player, output) == 0
    transcript = output.getvalue()
    assert f"Illegal move: you hold no {missing}. Your hand: {hand}. Legal moves: " in transcript
    assert transcript.count("Your move (player_0)> ") == len(player.sent)
    assert "Game over." in transcript


def test_the_same_seed_replays_the_same_game() -> None:
    def argv(seed: int) -> list[str]:
        return ["--players", "5", "--seat", "2", "--seed", str(seed), "--rounds", "2", "--opponents", "random"]

    assert run_game(argv(7))[1] == run_game(argv(7))[1]
    assert run_game(argv(7))[1] != run_game(argv(8))[1]


def test_opponent_plays_and_captures_are_narrated() -> None:
    deck = STANDARD_DECK
    rules = Rules(num_players=3, deck=deck, num_rounds=1)
    hand = {name: [0] * deck.num_kinds for name in ("ladder 1", "cat 2", "mirror 5")}
    for name, counts in hand.items():
        counts[play.parse_move(name, deck)] = 1
    mirror = [play.parse_move(card, deck) for card in ("mirror 1", "mirror 4", "mirror 4")]
    state = from_hands(rules, list(hand.values()), piles=[[], mirror, []])
    output = io.StringIO()
    game = play.Game(0, {1: RandomAgent(0), 2: RandomAgent(1)}, np.random.default_rng(0), output, state)
    game.play(io.StringIO("l1\n").readline)
    lines = output.getvalue().splitlines()
    assert lines[lines.index("Your move (player_0)> You play ladder 1 on ladder (total 1).") :] == [
        "Your move (player_0)> You play ladder 1 on ladder (total 1).",
        "player_1 plays cat 2 on black cat (total 2).",
        "player_2 plays mirror 5 on broken mirror (total 14) and takes 3 cards.",
        "",
        "Round 1 over. Bad-luck points (this round / total):",
        "  player_0 (you)             0 /   0",
        "  player_1 (random)          0 /   0",
        "  player_2 (random)          0 /   0",
        "",
        "Game over. Winner(s) with 0 points: player_0 (you), player_1 (random), player_2 (random).",
        "You share the win!",
    ]


# -- leaving -----------------------------------------------------------------------------------
def test_end_of_input_leaves_cleanly() -> None:
    output = io.StringIO()
    assert play.main(["--seed", "0"], io.StringIO("cat 3\n"), output) == 0
    transcript = output.getvalue()
    assert "Sorry, there is no cat 3" in transcript
    assert transcript.endswith("Input ended before the game did; leaving the game.\n")


def test_quit_leaves_cleanly() -> None:
    output = io.StringIO()
    assert play.main(["--seed", "0"], io.StringIO("QUIT\ncat 1\n"), output) == 0
    assert output.getvalue().endswith("You left the game. Goodbye!\n")
    assert "You play" not in output.getvalue()


# -- options -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--players", "7"], "argument --players: invalid choice: 7"),
        (["--players", "four"], "argument --players: invalid int value"),
        (["--opponents", "nobody"], f"unknown Friday the 13th agent 'nobody'; known agents: {agents.names()}"),
        (["--opponents", "search:budget=0"], "argument --opponents: search option budget must be a positive int"),
        (["--opponents", "endgame:policy=x.npz"], "endgame option policy: 'x.npz' is neither a zoo policy"),
        (["--opponents", "x" * 5000], "(5000 characters); known agents"),
        (
            ["--deck", "german", "--opponents", "ensemble-v1"],
            "plays the 'standard' deck, but this table plays the 'german' deck",
        ),
        (
            ["--deck", "german", "--opponents", "endgame"],
            "plays the 'standard' deck, but this table plays the 'german' deck",
        ),
        (["--seed", "-5"], "argument --seed: must be a non-negative integer, got '-5'"),
        (["--seed", "1.5"], "argument --seed: must be a non-negative integer, got '1.5'"),
        (["--seed", "9" * 5000], "argument --seed: must be an integer of at most 20 digits, got 5000 characters"),
        (["--players", "4" * 5000], "argument --players: must be an integer of at most 20 digits"),
        (["--rounds", "1" * 5000], "argument --rounds: must be an integer of at most 20 digits"),
        (["--seat", "0" * 5000], "argument --seat: must be an integer of at most 20 digits"),
        (["--opponents", "random", "random"], "--opponents needs one agent or 3 (one per other seat), got 2"),
        (["--players", "3", "--opponents", "random", "random", "random"], "needs one agent or 2"),
        (["--seat", "4"], "--seat must be in 0..3 for 4 players, got 4"),
        (["--seat", "-1"], "--seat must be in 0..3"),
        (["--deck", "french"], "argument --deck: invalid choice: 'french'"),
        (["--rounds", "0"], "argument --rounds: must be an integer in 1..100, got '0'"),
        (["--rounds", "101"], "argument --rounds: must be an integer in 1..100, got '101'"),
    ],
)
def test_bad_options_exit_with_code_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    for main, prefix in ((play.main, []), (cli.main, ["play"])):
        with pytest.raises(SystemExit) as exited:
            main([*prefix, *argv], io.StringIO(""), io.StringIO())
        assert exited.value.code == 2
        assert message in capsys.readouterr().err


def test_bad_options_leak_no_python_internals(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["--seed", "9" * 5000], ["--players", "4" * 5000], ["--opponents", "y" * 5000]):
        with pytest.raises(SystemExit):
            play.main(argv, io.StringIO(""), io.StringIO())
        error = capsys.readouterr().err
        assert "Traceback" not in error and "set_int_max_str_digits" not in error and "Errno" not in error
        assert len(error) < 1_000


def test_cli_needs_a_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main([])
    assert exited.value.code == 2
    assert "required: COMMAND" in capsys.readouterr().err


def test_cli_play_is_the_same_game() -> None:
    argv = ["--players", "3", "--seed", "3", "--rounds", "1"]
    direct = run_game(argv)[1]
    output = io.StringIO()
    assert cli.main(["play", *argv], ScriptedPlayer(output), output) == 0
    assert output.getvalue() == direct


@pytest.mark.skipif(
    not {"cautious", "majority", "search"} <= set(agents.names()), reason="scripted agents not registered yet"
)
def test_scripted_opponents_by_name() -> None:
    code, transcript, _ = run_game(
        ["--players", "4", "--opponents", "cautious", "majority", "search", "--seed", "1", "--rounds", "1"]
    )
    assert code == 0
    assert "Opponents: player_1 (cautious), player_2 (majority), player_3 (search)" in transcript
    assert "Game over." in transcript


def test_opponents_take_every_agent_spec() -> None:
    """The same agent language as ``agents.make``: options, zoo names, the endgame agent with no options."""
    code, transcript, _ = run_game(
        ["--players", "4", "--opponents", "search:budget=600", "endgame", "ensemble-v1", "--seed", "2", "--rounds", "1"]
    )
    assert code == 0
    assert "Opponents: player_1 (search), player_2 (endgame), player_3 (ensemble-v1)" in transcript
    assert "Game over." in transcript


def test_endgame_with_a_policy_option_is_not_read_as_a_file_path(tmp_path: pytest.TempPathFactory) -> None:
    import shutil

    from friday13_env.friday13.agents.registry import REGISTRY

    policy = shutil.copy(REGISTRY.zoo()["ensemble-v1"], f"{tmp_path}/x.npz")
    code, transcript, _ = run_game(
        ["--players", "3", "--opponents", f"endgame:policy={policy},budget=300", "--seed", "1", "--rounds", "1"]
    )
    assert code == 0
    assert "Opponents: player_1 (endgame), player_2 (endgame)" in transcript


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("mirror -5", "there is no mirror -5 in the standard deck; values are 1, 2, 4, 5, 7"),
        ("cat +1", "there is no cat +1 in the standard deck"),
        ("m-5", "there is no mirror -5 in the standard deck"),
        ("cat " + "1" * 5000, "there is no cat 111111... (5000 digits) in the standard deck"),
        ("cat 4" + "0" * 4299, "there is no cat 400000... (4300 digits) in the standard deck"),
    ],
)
def test_signs_and_huge_numbers_are_not_cards(typed: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as error:
        play.parse_move(typed, STANDARD_DECK)
    assert len(str(error.value)) < 200


def test_a_negative_or_huge_card_is_refused_in_the_game() -> None:
    huge = "mirror " + "5" * 5000
    code, transcript, player = run_game(["--players", "3", "--seed", "0", "--rounds", "1"], ["mirror -5", huge])
    assert code == 0
    assert "Sorry, there is no mirror -5 in the standard deck" in transcript
    assert "Sorry, there is no mirror 555555... (5000 digits) in the standard deck" in transcript
    assert "set_int_max_str_digits" not in transcript and "5" * 100 not in transcript
    # Both were refused: every move played came after them, one per line sent.
    assert transcript.count("You play ") == len(player.sent) - 2
    assert transcript.count("Your move (player_0)> ") == len(player.sent)


def test_an_overlong_line_is_answered_briefly() -> None:
    code, transcript, _ = run_game(["--players", "3", "--seed", "0", "--rounds", "1"], ["z" * 5000])
    assert code == 0
    assert "Sorry, cannot read 'zzzzzzzzzz" in transcript
    assert "z" * 200 not in transcript


class Terminal(io.StringIO):
    """Standard input as a terminal: ``isatty`` is true (its text is never read: ``input()`` is)."""

    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_line_editing(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("readline")
    screen = io.StringIO()
    typed = ScriptedPlayer(screen, ["mirror -5"])
    prompts: list[str] = []

    def fake_input(prompt: str = "") -> str:
        prompts.append(prompt)
        screen.write(prompt)
        return typed.readline().rstrip("\n")

    monkeypatch.delitem(sys.modules, "readline", raising=False)
    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr("builtins.input", fake_input)
    assert play.main(["--players", "3", "--seed", "0", "--rounds", "1"]) == 0
    assert "readline" in sys.modules  # imported for the terminal: arrow keys edit the line
    assert prompts == ["Your move (player_0)> "] * len(typed.sent)
    assert "Sorry, there is no mirror -5" in screen.getvalue()
    assert "Game over." in screen.getvalue()


def test_end_of_input_at_a_terminal_leaves_cleanly(monkeypatch: pytest.MonkeyPatch) -> None:
    screen = io.StringIO()

    def end_of_input(prompt: str = "") -> str:
        raise EOFError

    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr("builtins.input", end_of_input)
    assert play.main(["--seed", "0"]) == 0
    assert screen.getvalue().endswith("Input ended before the game did; leaving the game.\n")


def test_piped_input_is_read_without_line_editing() -> None:
    reader = play.line_reader(io.StringIO("cat 1\n"), io.StringIO())
    assert not isinstance(reader, play.TerminalInput)
    assert reader() == "cat 1\n"


def test_module_runs_with_piped_input() -> None:
    # Offer every card in turn, over and over: each turn skips the cards not held (with a message).
    moves = [STANDARD_DECK.action_name(action) for action in range(STANDARD_DECK.num_actions)]
    completed = subprocess.run(
        [sys.executable, "-m", "friday13_env.friday13.play", "--players", "3", "--rounds", "1", "--seed", "0"],
        input="\n".join(moves * 20) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.count("You play ") == 13
    assert "Illegal move: you hold no " in completed.stdout
    assert "Game over." in completed.stdout


def test_piped_input_does_not_load_readline() -> None:
    script = (
        "import sys; from friday13_env.friday13 import play; "
        "play.main(['--players', '3', '--rounds', '1', '--seed', '0']); "
        "print('readline loaded:', 'readline' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", script], input="quit\n", capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "You left the game. Goodbye!" in completed.stdout
    assert "readline loaded: False" in completed.stdout


def test_friday13_help_lists_the_commands() -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "friday13_env.cli", "--help"], capture_output=True, text=True, timeout=60, check=False
    )
    assert completed.returncode == 0, completed.stderr
    assert "play" in completed.stdout and "evaluate" in completed.stdout
    played = subprocess.run(
        [sys.executable, "-m", "friday13_env.cli", "play", "--help"], capture_output=True, text=True, timeout=60
    )
    assert played.returncode == 0 and "--opponents" in played.stdout
