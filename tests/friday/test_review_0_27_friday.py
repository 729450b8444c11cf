"""A review of 0.27.0's solo game (``/tmp/review-friday.md``): a DAgger teacher's illegal, non-integer or failing move
stops ``train_friday.py`` with one line and nothing saved; no output of ``evaluate_friday.py`` or ``train_friday.py``
may overwrite the package's model zoo; ``evaluate`` refuses a bad agent name or ``progress`` before any game; labels
from file names never drive the terminal nor split a Markdown row; a masked array is no action; ``--search-budget``
must reach an agent; the quick start stops on a truncated episode; the level-4 life bar starts with no lost token;
``build_state`` refuses a position no game can hold."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from friday13_training import friday_dagger
from friday13_training.friday_dagger import GameTask, play_labelled_game

import friday13_env.core.zoo as zoo_module
from friday13_env.core.agent import AgentRaisedError, IllegalMoveError, Observation
from friday13_env.core.checks import as_action
from friday13_env.core.specs import markdown_cell
from friday13_env.friday import engine
from friday13_env.friday.actions import NUM_ACTIONS
from friday13_env.friday.agents import REGISTRY
from friday13_env.friday.cards import HAZARD_IDS, STARTING_IDS
from friday13_env.friday.encoding import OBS_SIZE, encode
from friday13_env.friday.env import FridayEnv
from friday13_env.friday.evaluation import LevelResult, evaluate, format_markdown, format_table
from friday13_env.friday.render import DIM, LIFE, RESERVE, render_rgb
from friday13_env.friday.scenario import build_state, find_card
from friday13_env.friday.state import Phase
from friday13_env.friday13.agents import REGISTRY as CARD_GAME_REGISTRY
from tests.scripts import REPOSITORY, load_training_script

# -- 1: DAgger's teacher (and student) are checked at every move -----------------------------------


class ScriptedTeacher:
    """Plays its first legal move, except at its third decision, where ``odd_move`` says what it does."""

    name = "scripted"

    def __init__(self, seed: int | None = None) -> None:
        self.decisions = 0

    def act(self, observation: Observation) -> int:
        self.decisions += 1
        legal = np.flatnonzero(observation["action_mask"])
        return self.odd_move(legal) if self.decisions == 3 else int(legal[0])

    def odd_move(self, legal: np.ndarray) -> Any:
        raise NotImplementedError


class IllegalTeacher(ScriptedTeacher):
    name = "illegal"

    def odd_move(self, legal: np.ndarray) -> Any:
        return next(action for action in range(NUM_ACTIONS) if action not in legal)


class FloatTeacher(ScriptedTeacher):
    name = "float"

    def odd_move(self, legal: np.ndarray) -> Any:
        return float(legal[0])


class RaisingTeacher(ScriptedTeacher):
    name = "raising"

    def odd_move(self, legal: np.ndarray) -> Any:
        raise KeyError("no such card")


def teacher_task(factory: str, student: str = "", beta: float = 1.0) -> GameTask:
    return GameTask(level=1, seed=50_000_000, teacher=f"{__name__}:{factory}", student=student, beta=beta)


@pytest.mark.parametrize(
    ("factory", "error", "message"),
    [
        ("IllegalTeacher", IllegalMoveError, r"played an illegal move \d+ .*\(legal actions: \[[0-9, ]+\]\)"),
        ("FloatTeacher", IllegalMoveError, r"played \d+\.0 \(float\), not an integer action"),
        ("RaisingTeacher", AgentRaisedError, r"agent 'raising' raised KeyError: 'no such card'"),
    ],
)
def test_a_teachers_bad_move_is_an_error_naming_it_and_the_decision(
    factory: str, error: type[Exception], message: str
) -> None:
    task = teacher_task(factory)
    with pytest.raises(error, match=message) as raised:
        play_labelled_game(task)
    assert f"--teacher {task.teacher}" in str(raised.value)
    assert "of the level-1 game of seed 50000000" in str(raised.value)


def test_a_students_illegal_move_is_an_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(friday_dagger, "load", lambda path: IllegalTeacher())
    with pytest.raises(IllegalMoveError, match=r"the student student\.npz played an illegal move"):
        play_labelled_game(GameTask(level=1, seed=5, teacher="heuristic:samples=2", student="student.npz", beta=0.0))


@pytest.mark.parametrize("factory", ["IllegalTeacher", "FloatTeacher", "RaisingTeacher"])
def test_train_friday_stops_with_one_line_and_saves_no_games(
    factory: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("torch", reason="the training extra is not installed")
    script = load_training_script("train_friday")
    run_dir = tmp_path / "run"
    argv = ["--run-dir", str(run_dir), "--teacher", f"{__name__}:{factory}", "--distill-iterations", "1",
            "--distill-games", "1", "--workers", "1", "--eval-every", "0", "--no-progress", "--distill-epochs", "1",
            "--distill-final-epochs", "0", "--hidden-sizes", "8", "--levels", "1"]  # fmt: skip
    with pytest.raises(SystemExit) as stopped:
        script.main(argv)
    message = str(stopped.value.code)
    assert message.startswith("error: stage 1 stopped: ") and "\n" not in message
    assert f"--teacher {__name__}:{factory}" in message
    assert not (run_dir / "distill" / "games_00.npz").exists()
    assert not (run_dir / "progress.json").exists() and not (run_dir / "policy.npz").exists()
    assert "[distill 1/1]" not in capsys.readouterr().out


# -- 3: no output overwrites the package's model zoo --------------------------------------------------


def test_zoo_output_problem_names_the_flag_and_every_zoo_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from friday13_env.core.zoo import zoo_output_problem

    zoo_files = [*REGISTRY.zoo().values(), *CARD_GAME_REGISTRY.zoo().values()]
    assert len(zoo_files) >= 2
    for path in zoo_files:
        for given in (path, path.with_suffix(".md")):
            problem = zoo_output_problem("--json", given)
            assert problem is not None and problem.startswith(f"--json {given}: ") and "model zoo" in problem
    # resolved: a relative path with '..' and a link both reach the file
    friday_policy = REGISTRY.zoo()["dagger-v1"]
    monkeypatch.chdir(friday_policy.parent.parent)
    assert zoo_output_problem("--export", Path("zoo") / ".." / "zoo" / "dagger-v1.npz") is not None
    link = tmp_path / "link.npz"
    link.symlink_to(friday_policy)
    assert zoo_output_problem("--export", link) is not None
    (tmp_path / "zoo_link").symlink_to(friday_policy.parent, target_is_directory=True)
    assert zoo_output_problem("--markdown", tmp_path / "zoo_link" / "new-v9.md") is not None, "a new file in a zoo"
    assert zoo_output_problem("--json", tmp_path / "out.json") is None
    assert zoo_output_problem("--export", tmp_path / "dagger-v1.npz") is None


@pytest.fixture
def copied_zoo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the solo zoo that the zoo check treats as the package's (nothing is written to the real one)."""
    zoo = tmp_path / "zoo"
    zoo.mkdir()
    for path in REGISTRY.zoo().values():
        shutil.copy(path, zoo / path.name)
    monkeypatch.setattr(zoo_module, "zoo_folders", lambda: [zoo])
    return zoo


@pytest.mark.parametrize("flag", ["--json", "--markdown"])
def test_evaluate_friday_refuses_an_output_in_the_zoo(
    flag: str, copied_zoo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_training_script("evaluate_friday")
    monkeypatch.setattr(script, "play_level", lambda *_: pytest.fail("a game was played"))
    target = copied_zoo / "dagger-v1.npz"
    before = target.read_bytes()
    with pytest.raises(SystemExit) as stopped:
        script.main(["--agents", "random", "--levels", "1", "--games", "1", flag, str(target)])
    assert stopped.value.code == 2
    assert f"{flag} {target}: " in capsys.readouterr().err
    assert target.read_bytes() == before


def test_train_friday_refuses_an_export_into_the_zoo(copied_zoo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch", reason="the training extra is not installed")
    script = load_training_script("train_friday")
    target = copied_zoo / "dagger-ppo-v1.npz"
    with pytest.raises(SystemExit) as stopped:
        script.parse_args(["--run-dir", str(copied_zoo.parent / "run"), "--teacher", "random", "--export", str(target)])
    assert stopped.value.code == 2
    assert f"--export {target}: " in capsys.readouterr().err


# -- 4: evaluate refuses a bad agent name or progress before any game ------------------------------------


class Unnamed:
    def __init__(self, name: Any) -> None:
        self.name = name
        self.moves = 0

    def act(self, observation: Observation) -> int:
        self.moves += 1
        return int(np.flatnonzero(observation["action_mask"])[0])


@pytest.mark.parametrize("name", [None, 7, "", b"bytes"])
def test_evaluate_refuses_an_agent_whose_name_is_not_a_non_empty_str(name: object) -> None:
    agent = Unnamed(name)
    with pytest.raises(ValueError, match=r"agent\.name must be a non-empty str .*, got "):
        evaluate(agent, 1, 2, seed=0)
    assert agent.moves == 0


def test_evaluate_refuses_a_progress_that_cannot_be_called() -> None:
    agent = Unnamed("first-legal")
    with pytest.raises(ValueError, match=r"progress must be None or a callable .*, got 5"):
        evaluate(agent, 1, 3, seed=0, progress=5)  # type: ignore[arg-type]
    assert agent.moves == 0
    with pytest.raises(ValueError, match=r"progress must be None or a callable"):
        evaluate("random", 1, 3, seed=0, progress="bar")  # type: ignore[arg-type]


# -- 5: labels from file names never drive the terminal nor split a Markdown row -----------------------


def test_markdown_cell_escapes_line_breaks_and_control_characters() -> None:
    for text in ("pol\nnewline", "pol\r\nx", "pol\x1b[31mRED", "a\u202eb", "x\x85y", "a\u2028b"):
        cell = markdown_cell(text)
        assert len(cell.splitlines()) == 1 and cell.isprintable(), cell
    assert markdown_cell("pol\x1b[31mRED|x") == "'pol\\x1b[31mRED\\|x'"
    assert markdown_cell("a|b c") == "a\\|b c", "plain labels are as before"


def result_of(label: str) -> LevelResult:
    return evaluate(Unnamed(label), 1, 1, seed=0)


def test_the_tables_show_control_characters_escaped() -> None:
    result = result_of("pol\x1b[31mRED\nrow")
    text = format_table([result])
    assert "\x1b" not in text and len(text.splitlines()) == 3
    assert repr("pol\x1b[31mRED\nrow") in text
    rows = format_markdown([result], 0).splitlines()
    assert len(rows) == 5 and "\x1b" not in rows[4] and rows[4].startswith("| 'pol\\x1b[31mRED\\nrow' | 1 | 1 |")


def test_evaluate_friday_prints_a_checkpoint_path_escaped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pol\x1b[31mRED\nx.npz"
    shutil.copy(REGISTRY.zoo()["dagger-v1"], path)
    table = tmp_path / "out.md"
    script = load_training_script("evaluate_friday")
    assert script.main(["--agents", str(path), "--levels", "1", "--games", "1", "--markdown", str(table)]) == 0
    captured = capsys.readouterr()
    for text in (captured.out, captured.err, table.read_text()):
        assert "\x1b" not in text
    assert repr(str(path)) in captured.out and repr(str(path)) in captured.err
    rows = table.read_text().splitlines()
    assert len(rows) == 5 and rows[4].startswith(f"| {str(path)!r} | 1 | 1 |")


# -- 6: a masked array is no action ---------------------------------------------------------------------


@pytest.mark.parametrize("masked", [True, False])
def test_a_masked_array_is_refused_as_an_action(masked: bool) -> None:
    action = np.ma.masked_array(1, mask=masked)
    with pytest.raises(ValueError, match=r"^bad action masked_array"):
        as_action(action, 10, "bad action {action!r}")
    env = FridayEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"(?s)action must be an integer .*got masked_array.*legal actions: 0"):
        env.step(action)
    env.step(0)  # nothing was played: the environment goes on
    state = engine.new_game(1, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"(?s)action must be an integer .*got masked_array"):
        engine.apply_action(state, action, np.random.default_rng(0))


# -- 8: --search-budget must reach an agent ---------------------------------------------------------------


@pytest.mark.parametrize("agents", [["random"], ["random", "search:budget=3"]])
def test_search_budget_with_no_plain_search_agent_is_a_usage_error(
    agents: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_training_script("evaluate_friday")
    with pytest.raises(SystemExit) as stopped:
        script.parse_args(["--agents", *agents, "--search-budget", "5", "--games", "1", "--levels", "1"])
    assert stopped.value.code == 2
    assert re.search(r"argument --search-budget: 5: no plain 'search' agent in --agents", capsys.readouterr().err)
    args = script.parse_args(["--agents", "random", "search", "--search-budget", "5"])
    assert [spec.label for spec in args.specs] == ["random", "search:budget=5"]


# -- 9: the quick start stops on a truncated episode -----------------------------------------------------


def test_the_quick_start_loop_stops_on_a_truncated_episode(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import friday13_env.friday.env as env_module

    page = (REPOSITORY / "docs" / "friday.md").read_text()
    assert len(page.splitlines()) <= 300
    block = re.findall(r"```python\n(.*?)```", page, re.DOTALL)[0]
    assert "env.step(action)" in block
    monkeypatch.setattr(env_module, "MAX_DECISIONS", 3)  # every episode is truncated after 3 decisions
    exec(compile(block, "docs/friday.md", "exec"), {})
    assert capsys.readouterr().out.split() == ["None", "None"]


# -- 10: the level-4 life bar ---------------------------------------------------------------------------------


def life_bar_columns(image: np.ndarray) -> dict[str, int]:
    row = image[20:40]  # character row 1: the life bar (cells are 20 pixels high)
    return {
        name: int(np.all(row == np.array(color, np.uint8), axis=-1).any(axis=0).sum())
        for name, color in (("life", LIFE), ("reserve", RESERVE), ("lost", DIM))
    }


def test_the_level_4_life_bar_starts_with_no_lost_token() -> None:
    level_1, level_4 = (FridayEnv(level=level, render_mode="rgb_array") for level in (1, 4))
    columns = []
    for env in (level_1, level_4):
        env.reset(seed=0)
        image = env.render()
        assert isinstance(image, np.ndarray)
        columns.append(life_bar_columns(image))
    box = columns[0]["life"] // 20
    assert columns[0] == {"life": 20 * box, "reserve": 2 * box, "lost": 0}
    assert columns[1] == {"life": 18 * box, "reserve": 2 * box, "lost": 0}, "a level-4 game starts with 20 tokens"
    hurt = build_state(level=4, life=15)
    hurt.reserve = 2  # 3 of the level's 20 tokens lost
    assert life_bar_columns(render_rgb(hurt)) == {"life": 15 * box, "reserve": 2 * box, "lost": 3 * box}


# -- 7: build_state refuses what no game holds, and leaves no phase whose actions fail ---------------------


def test_build_state_refuses_a_card_in_the_aging_zone_that_is_not_an_aging_card() -> None:
    genius = find_card("genius")
    with pytest.raises(ValueError, match=rf"aging holds {genius} \(genius\), not an aging card"):
        build_state(level=1, hazard=HAZARD_IDS[0], aging=[genius], table=[find_card("weak")])


def test_build_state_without_a_fight_at_the_pirates() -> None:
    state = build_state(step=3, robinson=list(STARTING_IDS))
    assert state.phase is Phase.CHOOSE_PIRATE and not state.done
    engine.apply_action(state, engine.legal_actions(state)[0], np.random.default_rng(0))
    assert state.fight is not None and state.fight.pirate == 0
    one_left = build_state(step=3, pirates_defeated=(True, False), robinson=list(STARTING_IDS))
    assert one_left.phase is Phase.FIGHT and one_left.fight is not None and one_left.fight.pirate == 1
    won = build_state(step=3, pirates_defeated=(True, True), robinson=list(STARTING_IDS))
    assert won.done and won.won and engine.legal_actions(won) == []


def test_build_state_without_a_fight_before_the_pirates() -> None:
    first, second, third = HAZARD_IDS[:3]
    rng = np.random.default_rng(0)
    two = build_state(robinson=list(STARTING_IDS), hazard_options=[first, second])
    assert two.phase is Phase.CHOOSE_HAZARD and two.hazard_options == [first, second]
    assert first not in two.boxed and second not in two.boxed and encode(two).shape == (OBS_SIZE,)
    engine.apply_action(two, 1, rng)
    assert two.fight is not None and two.fight.hazard == second and two.hazard_discard == [first]
    one = build_state(robinson=list(STARTING_IDS), hazard_options=[first])
    assert one.phase is Phase.LAST_HAZARD and engine.legal_actions(one) == [engine.actions.FIGHT_LAST,
                                                                             engine.actions.SKIP_LAST]  # fmt: skip
    engine.apply_action(one, engine.actions.FIGHT_LAST, rng)
    assert one.fight is not None and one.fight.hazard == first
    bare = build_state(robinson=list(STARTING_IDS))  # no hazard drawn: nothing can be played until the caller sets one
    assert engine.legal_actions(bare) == [] and not engine.action_mask(bare).any()
    with pytest.raises(ValueError, match=r"illegal action 0 in phase CHOOSE_HAZARD; legal actions: none"):
        engine.apply_action(bare, 0, rng)
    for options, message in (
        ([first, first], r"card \d+ \(\w+\) is in hazard_options and again in hazard_options"),
        ([find_card("genius")], r"hazard_options holds \d+ \(genius\), not a hazard card"),
        ([first, second, third], r"hazard_options must hold 1 or 2 hazard cards"),
    ):
        with pytest.raises(ValueError, match=message):
            build_state(robinson=list(STARTING_IDS), hazard_options=options)
    with pytest.raises(ValueError, match=r"hazard_options .* no fight"):
        build_state(hazard=second, hazard_options=[first])
    with pytest.raises(ValueError, match=r"hazard_options .* step 3"):
        build_state(step=3, hazard_options=[first])
