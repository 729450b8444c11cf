"""``friday13 play`` and the evaluation when something other than the human fails: an opponent that raises or
answers with no legal move, Ctrl-C, input that is not text, a reader that leaves the pipe. Each ends with a
message that names what happened and an exit status that says it, never a traceback."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from friday13_env.friday13 import play
from friday13_env.friday13.evaluation import command

AGENTS = '''
import numpy as np

class Answer:
    """Plays whatever ``value`` is: an action out of range, a float, None."""

    def __init__(self, value):
        self.name = f"answer-{value!r}"
        self.value = value

    def act(self, observation):
        return self.value

class Illegal:
    """Always the first action the mask refuses."""
    name = "illegal"

    def act(self, observation):
        return int(np.flatnonzero(observation["action_mask"] == 0)[0])

class Raises:
    name = "raises"

    def act(self, observation):
        raise RuntimeError("the network file went away")

class EngineGone:
    name = "engine-gone"

    def act(self, observation):
        raise BrokenPipeError(32, "Broken pipe (the external engine died)")

def big(): return Answer(99)
def floating(): return Answer(1.0)
def nothing(): return Answer(None)
'''


@pytest.fixture
def bad_agents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``bad_agents.py`` importable from the working folder, as a user's factories are."""
    (tmp_path / "bad_agents.py").write_text(AGENTS)
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


@pytest.mark.usefixtures("bad_agents")
@pytest.mark.parametrize(
    ("factory", "message"),
    [
        ("bad_agents:big", r"player_0 \(answer-99\) played 99, not a legal move; legal moves: "),
        ("bad_agents:floating", r"player_0 \(answer-1\.0\) played 1\.0, not a legal move"),
        ("bad_agents:nothing", r"player_0 \(answer-None\) played None, not a legal move"),
        ("bad_agents:Illegal", r"player_0 \(illegal\) played \d+, not a legal move"),
        ("bad_agents:Raises", r"player_0 \(raises\) raised RuntimeError: the network file went away"),
    ],
)
def test_an_opponent_that_fails_ends_the_game_with_a_message_and_status_1(factory: str, message: str) -> None:
    output = io.StringIO()
    code = play.main(["--players", "3", "--seed", "0", "--seat", "2", "--opponents", factory], io.StringIO(""), output)
    assert code == 1
    assert output.getvalue().rstrip().endswith("The game cannot go on.")
    assert re.search(message, output.getvalue())


def test_ctrl_c_leaves_with_status_130() -> None:
    def interrupted() -> str:
        raise KeyboardInterrupt

    output = io.StringIO()
    reader: Any = type("Keys", (io.StringIO,), {"readline": lambda self, size=-1: interrupted()})()
    assert play.main(["--seed", "0"], reader, output) == 130
    assert output.getvalue().endswith("Interrupted; leaving the game.\n")


def test_bytes_that_are_not_text_are_answered_as_a_bad_move() -> None:
    """Under a UTF-8 locale Python decodes stdin strictly; a stray byte must not end the game in a traceback."""
    stdin = io.TextIOWrapper(io.BytesIO(b"\xff\xfe\nquit\n"), encoding="utf-8")
    output = io.StringIO()
    assert play.main(["--seed", "0"], stdin, output) == 0
    assert "Sorry," in output.getvalue() and output.getvalue().endswith("You left the game. Goodbye!\n")


@pytest.mark.usefixtures("bad_agents")
def test_evaluate_names_the_agent_of_an_illegal_move_in_one_line() -> None:
    argv = ["--focus", "random", "--vs", "bad_agents:Illegal", "--games", "4", "--players", "3", "--no-progress"]
    with pytest.raises(SystemExit) as exited:
        command.main(argv)
    assert str(exited.value.code).startswith("friday13 evaluate: stopped: agent 'illegal' in seat player_")
    assert "holds no such card" in str(exited.value.code)


def test_a_reader_that_leaves_the_pipe_stops_the_command_quietly() -> None:
    """``friday13 play ... | head -1``: exit 141 (128 + SIGPIPE) with nothing on stderr, not a traceback."""
    read, write = os.pipe()
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from friday13_env import cli; sys.exit(cli.main(['play', '--seed', '0']))"],
        stdin=subprocess.PIPE, stdout=write, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    os.close(write)
    with os.fdopen(read) as reader:
        reader.readline()  # one line, then the reader leaves
    _, errors = child.communicate("help\n" * 5000, timeout=120)
    assert (child.returncode, errors) == (141, "")


def test_an_agents_own_broken_pipe_is_an_error_not_a_quiet_exit(bad_agents: Path) -> None:
    """Only the reader of standard output leaving stops a command quietly; an agent's broken pipe (an external
    engine that died) is reported."""
    argv = ["evaluate", "--focus", "bad_agents:EngineGone", "--vs", "random", "--games", "3", "--players", "3"]
    process = subprocess.run(
        [sys.executable, "-c", f"import sys; from friday13_env import cli; sys.exit(cli.main({argv!r}))"],
        capture_output=True, text=True, timeout=120, cwd=bad_agents,
    )  # fmt: skip
    assert process.returncode not in (0, 141) and "the external engine died" in process.stderr


class Endless(io.StringIO):
    """A stream that never ends: ``piece`` again and again (``/dev/zero``, ``yes x``). It fails the test instead of
    running for ever once ``limit`` reads have been made."""

    def __init__(self, piece: str, limit: int) -> None:
        super().__init__()
        self.piece, self.limit, self.reads = piece, limit, 0

    def readline(self, size: int | None = -1, /) -> str:
        self.reads += 1
        assert self.reads <= self.limit, "the game read on for ever"
        line = self.piece * (1 if size is None or size < 0 else max(1, size // len(self.piece)))
        if "\n" in self.piece:
            return self.piece
        return line[: size if size is not None and size > 0 else None]


def test_a_line_without_end_stops_the_game_with_status_1() -> None:
    """``friday13 play < /dev/zero`` read the one endless line for ever (in bounded memory, but it never ended)."""
    output = io.StringIO()
    stream = Endless("\0", limit=10 * play.MAX_SKIPPED // play.MAX_LINE)
    assert play.main(["--seed", "0"], stream, output) == 1
    ending = f"A line ran past {play.MAX_SKIPPED:,} characters without a newline: this input cannot play."
    assert output.getvalue().rstrip().endswith(ending + " Leaving the game.")


def test_endless_lines_that_play_no_move_stop_the_game_with_status_1() -> None:
    """``yes x | friday13 play`` answered "Sorry" for ever: a pipe or file that gives no legal move in
    ``MAX_REFUSED`` lines in a row is one that never will."""
    output = io.StringIO()
    stream = Endless("x\n", limit=play.MAX_REFUSED + 10)
    assert play.main(["--seed", "0"], stream, output) == 1
    printed = output.getvalue()
    assert printed.count("Sorry,") == play.MAX_REFUSED
    assert printed.rstrip().endswith(
        f"{play.MAX_REFUSED} lines in a row played no move: this input cannot play. Leaving the game."
    )


def test_the_count_of_lines_that_play_no_move_starts_again_at_every_move() -> None:
    """A script may ask for help, or mistype, before each move: only ``MAX_REFUSED`` in a row stop it."""
    lines = "".join(("help\n", "x\n", "board\n")[index % 3] for index in range(play.MAX_REFUSED - 1))
    stream = io.StringIO(lines + "cat 1\n" + lines + "quit\n")
    output = io.StringIO()
    assert play.main(["--seed", "0", "--players", "3", "--opponents", "random"], stream, output) == 0
    assert "cannot play" not in output.getvalue() and "You left the game" in output.getvalue()
