"""Play Friday the 13th in the terminal against registered agents or checkpoints.

``friday13 play --players 4 --opponents cautious majority search --seat 0 --seed 0`` (or
``python -m friday13_env.friday13.play ...``). Moves are typed as cards: ``cat 7``, ``mirror 2``, ``l1``,
``f13 mirror``; ``help`` lists the legal moves, ``board`` reprints the table, ``quit`` leaves.
Opponents are agent specs, exactly as ``friday13_env.agents.make`` takes them: ``search:budget=600``,
``endgame``, ``ensemble-v1`` or a checkpoint path.

The game runs on the engine directly rather than through an environment because a person wants to
hear about every single play (which card, which pile, the announced total, what was taken) and the
round results, which ``engine.play`` and ``last_round_points`` report as they happen. Input is
read from any text stream so tests can script whole games; bad input is answered and asked again, never a crash
(a pipe or file that cannot play, a line without end or ``MAX_REFUSED`` lines in a row that play no move, ends the
game with status 1). At a terminal, lines are read with ``input()`` and the ``readline`` module where Python has it,
so the arrow keys edit the line and recall earlier moves instead of printing escape codes.
"""

from __future__ import annotations

import argparse
import io
import re
import signal
import sys
from collections.abc import Callable, Sequence
from typing import TextIO

import numpy as np

from friday13_env.core.agent import error_text
from friday13_env.core.specs import integer_argument, non_negative_argument, range_argument, shown
from friday13_env.friday13 import agents, engine
from friday13_env.friday13.agents import Agent
from friday13_env.friday13.agents.seating import make_seated
from friday13_env.friday13.cards import DECKS, OMEN_TYPE_NAMES, OMEN_TYPES, Deck, get_deck
from friday13_env.friday13.encoding import mover_observation
from friday13_env.friday13.engine import MAX_PLAYERS, MAX_ROUNDS, MIN_PLAYERS, GameState, Rules, new_game
from friday13_env.friday13.render import hand_text, render_state

PILE_ALIASES: dict[str, int] = {
    **{name: pile for pile, name in enumerate(OMEN_TYPES)},
    **{name[0]: pile for pile, name in enumerate(OMEN_TYPES)},
    "cats": 0,
    "mirrors": 1,
    "ladders": 2,
}
"""Words naming a pile (omen type): ``cat``/``c``, ``mirror``/``m``, ``ladder``/``l`` (plurals too)."""
FRIDAY_ALIASES = frozenset({"f", "f13", "fri", "friday"})
FILLER_WORDS = frozenset({"black", "broken", "on", "the", "th", "pile", "play"})
"""Words a player may type that carry no meaning (``play black cat 7``, ``f13 on the mirror pile``)."""
HELP_WORDS = frozenset({"help", "h", "?", "moves"})
BOARD_WORDS = frozenset({"board", "b", "show", "table"})
QUIT_WORDS = frozenset({"quit", "q", "exit"})
SHOWN_DIGITS = 6
"""A card value longer than this is echoed as its first digits and its length."""
TYPE_HELP = "Type 'help' for your legal moves."
MAX_LINE = 1_000
"""The longest line (characters, without its newline) read as a command: a longer one is answered "line too long",
and no more than this is held in memory however long it is (``friday13 play < /dev/zero`` reads on in bounded
memory)."""
MAX_SKIPPED = 1_000_000
"""The most characters of one over-long line read on and dropped: a stream with no newline in as many
(``friday13 play < /dev/zero``) cannot play, and the game leaves instead of reading it for ever."""
MAX_REFUSED = 100
"""Lines in a row that play no move (refused, over-long, help, board) after which a pipe or a file is given up on
(``yes x | friday13 play`` would otherwise be answered for ever); at a terminal the player may take all they want."""
INSTRUCTIONS = (
    "Type a card to play it: 'cat 7', 'mirror 2', 'ladder 1' (or 'c7', 'm2', 'l1'); a Friday the 13th card "
    "needs its pile: 'f13 cat', 'f13 mirror', 'f13 ladder'.\n"
    "'help' lists your legal moves, 'board' shows the table again, 'quit' leaves the game."
)


class TerminalInput:
    """Lines typed at a terminal, read with ``input()`` so that ``readline`` (imported here, where Python
    has it) gives line editing and history: arrow keys move the cursor instead of printing escape codes.

    Called with the prompt, which ``input()`` prints itself so that editing never overwrites it.
    Returns the line with its newline, or ``""`` at the end of input, like ``TextIO.readline``.
    """

    def __init__(self) -> None:
        self.line_editing = enable_line_editing()

    def __call__(self, prompt: str = "") -> str:
        try:
            return input(prompt) + "\n"
        except EOFError:
            return ""


def enable_line_editing() -> bool:
    """Import ``readline`` (which hooks line editing into ``input()``); ``False`` where it is missing."""
    try:
        import readline  # noqa: F401
    except ImportError:  # Windows without pyreadline, or a Python built without it
        return False
    return True


def line_reader(input_stream: TextIO, output_stream: TextIO) -> Callable[[], str]:
    """How the game reads the player's lines: ``TerminalInput`` for a person at a terminal (standard input
    and output, input a TTY), else the stream's own ``readline`` (pipes, files, tests). Only the terminal
    case imports ``readline``."""
    if isinstance(input_stream, io.TextIOWrapper):
        input_stream.reconfigure(errors="replace")  # bytes that are not text become U+FFFD, answered as a bad move
    if input_stream is sys.stdin and output_stream is sys.stdout and _is_terminal(input_stream):
        return TerminalInput()
    return BoundedLines(input_stream)


class LineTooLong(Exception):
    """A line longer than ``MAX_LINE`` characters was read (and the rest of it skipped)."""


class BoundedLines:
    """The lines of a stream, each read with a limit: a line of at most ``MAX_LINE`` characters is returned with its
    newline (``""`` at the end of input, like ``TextIO.readline``); a longer one is read on to its end in pieces of
    at most ``MAX_LINE + 1`` characters and dropped, and ``LineTooLong`` says so, so the game answers it and reads
    the next line. A stream without newlines (``/dev/zero``) never fills the memory, and past ``MAX_SKIPPED``
    characters ``InputUnusable`` ends the reading."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self) -> str:
        line = self.stream.readline(MAX_LINE + 1)
        if len(line) <= MAX_LINE or line.endswith("\n"):
            return line
        skipped = len(line)
        while skipped <= MAX_SKIPPED:  # the rest of the line, up to its newline or the end of input, goes unkept
            rest = self.stream.readline(MAX_LINE + 1)
            if not rest or rest.endswith("\n"):
                raise LineTooLong
            skipped += len(rest)
        raise InputUnusable(f"A line ran past {MAX_SKIPPED:,} characters without a newline")


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed stream, or one without isatty
        return False


class InputClosed(Exception):
    """The input stream ended (EOF) before the game did."""


class InputUnusable(Exception):
    """A pipe or file that cannot play: a line without end, or ``MAX_REFUSED`` lines in a row that play no move."""


class QuitGame(Exception):
    """The player typed ``quit``."""


class AgentFailed(Exception):
    """An opponent raised, or answered with something that is not a legal move: the game cannot go on."""


def parse_move(text: str, deck: Deck) -> int:
    """The action a typed card names, e.g. ``"Mirror 5"`` or ``"f13 l"``; ``ValueError`` explains a bad one.

    Only the syntax and the deck are checked here; whether the player holds the card is not.
    """
    # A sign stays with its number ("mirror -5" is no card, not mirror 5); other punctuation separates words.
    words = [word for word in re.findall(r"[a-z]+|[-+]?\d+", text.lower()) if word not in FILLER_WORDS]
    if words and words[0] in FRIDAY_ALIASES:
        rest = words[2:] if words[1:2] == ["13"] else words[1:]
        if len(rest) != 1 or rest[0] not in PILE_ALIASES:
            raise ValueError(f"say which pile the Friday the 13th card goes on: {_friday_moves()}")
        return deck.friday_kind + PILE_ALIASES[rest[0]]
    if len(words) != 2 or words[0] not in PILE_ALIASES or not re.fullmatch(r"[-+]?\d+", words[1]):
        raise ValueError(f"cannot read {shown(text.strip())} as a card; type e.g. 'cat 7', 'm2' or 'f13 ladder'")
    pile, number = PILE_ALIASES[words[0]], words[1]
    values = [str(value) for value in deck.omen_values]
    # Compared as text: a sign or a 5,000-digit number is simply no card (and never reaches int()).
    value = (number.lstrip("0") or "0") if number.isdigit() else number
    if value not in values:
        raise ValueError(
            f"there is no {OMEN_TYPES[pile]} {_short_number(number)} in the {deck.name} deck; "
            f"values are {', '.join(values)}"
        )
    return pile * deck.num_values + values.index(value)


def _short_number(number: str) -> str:
    """A typed number as a message shows it: whole if short, else its first digits and its length."""
    digits = number.lstrip("+-")
    if len(digits) <= SHOWN_DIGITS:
        return number
    return f"{number[: len(number) - len(digits) + SHOWN_DIGITS]}... ({len(digits)} digits)"


def _friday_moves() -> str:
    return ", ".join(f"'f13 {name}'" for name in OMEN_TYPES)


def moves_text(state: GameState) -> str:
    """The legal moves of the player to move, as they can be typed."""
    return ", ".join(state.rules.deck.action_name(action) for action in engine.legal_actions(state))


class Game:
    """One terminal game from ``state`` on: a human seat, agents in the other seats, a transcript to ``output``.

    ``rng`` deals the later rounds. Starting from any ``state`` (not only a fresh deal) lets tests
    and puzzles set up a position.
    """

    def __init__(
        self,
        human: int,
        opponents: dict[int, Agent],
        rng: np.random.Generator,
        output: TextIO,
        state: GameState,
    ) -> None:
        self.rules = state.rules
        self.human = human
        self.opponents = opponents
        self.rng = rng
        self.output = output
        self.state = state

    def say(self, text: str = "") -> None:
        self.output.write(text + "\n")

    def play(self, read_line: Callable[[], str]) -> None:
        """Play to the end of the game; ``read_line()`` supplies the human's input lines."""
        state = self.state
        self._announce_round()
        while True:
            self._play(self._ask_move(read_line) if state.current == self.human else self._opponent_move())
            if not state.round_over:
                continue
            self._report_round()
            if state.game_over:
                self._report_game()
                return
            engine.next_round(state, self.rng)
            self._announce_round()

    def _opponent_move(self) -> int:
        """The move of the agent to play, or ``AgentFailed`` saying which agent did what (never a traceback from
        deep in the engine, and never a move played for it)."""
        state = self.state
        agent = self.opponents[state.current]
        who = f"player_{state.current} ({agent.name})"
        try:
            action = agent.act(mover_observation(state))
        except (Exception, SystemExit) as error:  # an agent's sys.exit() too: not a game that ends with status 0
            raise AgentFailed(f"{who} raised {error_text(error)}") from error
        if not engine.is_legal(state, action):
            raise AgentFailed(f"{who} played {shown(action)}, not a legal move; legal moves: {moves_text(state)}")
        return int(action)

    def _ask_move(self, read_line: Callable[[], str]) -> int:
        """The human's next legal move, read line by line; each line that is not one is answered. A pipe or file
        that plays no move in ``MAX_REFUSED`` lines in a row is ``InputUnusable``."""
        self.say(render_state(self.state, show_hand_of=self.human))
        prompt = f"Your move (player_{self.human})> "
        refused = 0
        while True:
            if isinstance(read_line, TerminalInput):
                self.output.flush()
                action = self._answer(read_line(prompt))
            else:
                self.output.write(prompt)
                self.output.flush()
                try:
                    action = self._answer(read_line())
                except LineTooLong:
                    self.say(f"Sorry, line too long: a move is at most {MAX_LINE} characters. {TYPE_HELP}")
                    action = None
                refused += action is None
                if refused == MAX_REFUSED:
                    raise InputUnusable(f"{MAX_REFUSED} lines in a row played no move")
            if action is not None:
                return action

    def _answer(self, line: str) -> int | None:
        """The legal move a line names, or ``None`` once it is answered (help, the board, a mistake)."""
        state, deck = self.state, self.rules.deck
        if not line:
            raise InputClosed
        text = line.strip().lower()
        if text in QUIT_WORDS:
            raise QuitGame
        if text in HELP_WORDS:
            self.say(f"Legal moves: {moves_text(state)}\n{INSTRUCTIONS}")
            return None
        if text in BOARD_WORDS:
            self.say(render_state(state, show_hand_of=self.human))
            return None
        try:
            action = parse_move(text, deck)
        except ValueError as error:
            self.say(f"Sorry, {error}. {TYPE_HELP}")
            return None
        if engine.action_mask(state)[action]:
            return action
        self.say(
            f"Illegal move: you hold no {deck.kind_name(deck.action_kind_and_pile(action)[0])}. "
            f"Your hand: {hand_text(state.hands[self.human], deck)}. Legal moves: {moves_text(state)}"
        )
        return None

    def _play(self, action: int) -> None:
        """Play ``action`` for the player to move and narrate it like a player would announce it."""
        state, deck = self.state, self.rules.deck
        seat = state.current
        kind, pile = deck.action_kind_and_pile(action)
        announced = state.pile_totals[pile] + deck.kind_values[kind]
        taken = engine.play(state, action)
        who, verb, take = ("You", "play", "take") if seat == self.human else (f"player_{seat}", "plays", "takes")
        text = f"{who} {verb} {deck.kind_name(kind)} on {OMEN_TYPE_NAMES[pile]} (total {announced})"
        if taken:
            text += f" and {take} {taken} card{'s' if taken > 1 else ''}"
        self.say(text + ".")

    def _announce_round(self) -> None:
        state = self.state
        self.say(
            f"\n=== Round {state.round + 1} of {self.rules.num_rounds}: player_{engine.start_player(state)} starts ==="
        )

    def _report_round(self) -> None:
        state = self.state
        points = state.last_round_points
        assert points is not None
        self.say(f"\nRound {state.round + 1} over. Bad-luck points (this round / total):")
        for seat, (gained, total) in enumerate(zip(points, state.scores, strict=True)):
            self.say(f"  {self.seat_name(seat):<24} {gained:>3} / {total:>3}")

    def _report_game(self) -> None:
        scores = self.state.scores
        best = min(scores)
        winners = [self.seat_name(seat) for seat, score in enumerate(scores) if score == best]
        self.say(f"\nGame over. Winner(s) with {best} points: {', '.join(winners)}.")
        mine = scores[self.human]
        if mine == best:
            self.say("You win!" if len(winners) == 1 else "You share the win!")
        else:
            rank = 1 + sum(score < mine for score in scores)
            self.say(f"You finish with {mine} points, rank {rank} of {len(scores)}.")

    def seat_name(self, seat: int) -> str:
        if seat == self.human:
            return f"player_{seat} (you)"
        return f"player_{seat} ({self.opponents[seat].name})"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``play``, shared by ``friday13 play`` and ``python -m friday13_env.friday13.play``."""
    parser.add_argument(
        "--players",
        type=integer_argument,
        default=4,
        choices=range(MIN_PLAYERS, MAX_PLAYERS + 1),
        help="table size (default 4)",
    )
    parser.add_argument(
        "--opponents",
        nargs="+",
        default=["random"],
        metavar="AGENT",
        help="one agent per other seat, clockwise after you, or one for all, each as agents.make takes it: "
        f"a name {agents.names()}, a name with options (search:budget=600) or a checkpoint path (default: random)",
    )
    parser.add_argument(
        "--seat",
        type=integer_argument,
        default=0,
        help="your seat, 0..players-1; player_0 starts the first round, and the start passes clockwise each round "
        "(default 0)",
    )
    parser.add_argument("--deck", default="standard", choices=sorted(DECKS), help="deck edition (default standard)")
    parser.add_argument(
        "--rounds",
        type=range_argument(1, MAX_ROUNDS),
        default=4,
        help=f"number of rounds, 1 to {MAX_ROUNDS} (default 4)",
    )
    parser.add_argument(
        "--seed", type=non_negative_argument, default=None, help="seed for the deals and the agents (default: random)"
    )


def build_parser(prog: str | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Play Friday the 13th against agents in the terminal.")
    add_arguments(parser)
    return parser


def run(args: argparse.Namespace, parser: argparse.ArgumentParser, input_stream: TextIO, output_stream: TextIO) -> int:
    """Set up the game from parsed options (bad ones exit via ``parser.error``, code 2) and play it: 0 when the game
    ends or the player leaves (``quit``, end of input), 1 when an opponent fails or the input cannot play (a line
    without end, ``MAX_REFUSED`` lines in a row that play no move), 130 after Ctrl-C."""
    rules = Rules(num_players=args.players, deck=get_deck(args.deck), num_rounds=args.rounds)
    if not 0 <= args.seat < rules.num_players:
        parser.error(f"--seat must be in 0..{rules.num_players - 1} for {rules.num_players} players, got {args.seat}")
    names = args.opponents * (rules.num_players - 1) if len(args.opponents) == 1 else args.opponents
    if len(names) != rules.num_players - 1:
        parser.error(
            f"--opponents needs one agent or {rules.num_players - 1} (one per other seat), got {len(args.opponents)}"
        )
    rng = np.random.default_rng(args.seed)
    seeds = rng.integers(2**32, size=len(names)).tolist()
    others = [(args.seat + offset) % rules.num_players for offset in range(1, rules.num_players)]
    opponents = {}
    for seat, name, agent_seed in zip(others, names, seeds, strict=True):
        try:
            opponents[seat] = make_seated(name, agent_seed, rules.deck)
        except ValueError as error:
            parser.error(f"argument --opponents: {error}")
    game = Game(args.seat, opponents, rng, output_stream, new_game(rules, rng))
    game.say(f"Friday the 13th: you are player_{args.seat} at a table of {rules.num_players}.")
    game.say("Opponents: " + ", ".join(game.seat_name(seat) for seat in others))
    game.say(INSTRUCTIONS)
    try:
        game.play(line_reader(input_stream, output_stream))
        farewell, status = "", 0
    except InputClosed:
        farewell, status = "\nInput ended before the game did; leaving the game.", 0
    except InputUnusable as error:
        farewell, status = f"\n{error}: this input cannot play. Leaving the game.", 1
    except QuitGame:
        farewell, status = "You left the game. Goodbye!", 0
    except AgentFailed as error:
        farewell, status = f"\n{error}. The game cannot go on.", 1
    except KeyboardInterrupt:
        farewell, status = "\nInterrupted; leaving the game.", 128 + signal.SIGINT
    if farewell:
        game.say(farewell)
    output_stream.flush()
    return status


def main(
    argv: Sequence[str] | None = None, input_stream: TextIO | None = None, output_stream: TextIO | None = None
) -> int:
    """``python -m friday13_env.friday13.play [options]``; streams default to stdin/stdout."""
    parser = build_parser(prog="python -m friday13_env.friday13.play")
    args = parser.parse_args(argv)
    return run(args, parser, sys.stdin if input_stream is None else input_stream, output_stream or sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
