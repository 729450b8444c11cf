"""A review of the evaluation commands (0.17): no output overwrites a checkpoint that an agent's option names, no
output lands in the replays folder, a list of agents or levels names each once, a Markdown cell keeps its ``|``, an
empty results folder gives no leaderboard, and ``make`` and ``load`` take any ``os.PathLike`` as the docs say."""

from __future__ import annotations

import io
import shutil
from pathlib import Path
from typing import Any

import pytest

from friday13_env import agents
from friday13_env.benchmark import leaderboard
from friday13_env.cli import main as friday13_main
from friday13_env.core.checkpoint import CheckpointError
from friday13_env.core.mlp import PolicyAgent
from friday13_env.core.registry import UnknownOptionError
from friday13_env.core.stats import Interval
from friday13_env.friday import agents as solo_agents
from friday13_env.friday.evaluation import format_markdown as solo_markdown
from friday13_env.friday.evaluation.games import LevelResult
from friday13_env.friday13.agents.heuristics import CautiousAgent
from friday13_env.friday13.evaluation import evaluate as play_matchups
from friday13_env.friday13.evaluation import focus_matchups, matrix_matchups
from friday13_env.friday13.evaluation.command import overwritten_agent
from friday13_env.friday13.evaluation.report import format_markdown
from tests.friday13.test_cli_evaluate import error_of, no_games  # noqa: F401  (no_games: a fixture)
from tests.scripts import load_training_script

CARD_POLICY = agents.REGISTRY.policy_path("ppo-v1")
SOLO_POLICY = solo_agents.REGISTRY.policy_path("dagger-v1")


def friday13(argv: list[str]) -> int:
    """``friday13 ARGV`` in this process: its exit code."""
    try:
        return friday13_main(argv, output_stream=io.StringIO())
    except SystemExit as stop:
        return int(stop.code or 0)


@pytest.fixture
def solo_script() -> Any:
    return load_training_script("evaluate_friday")


def solo_error(script: Any, argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``evaluate_friday.py ARGV``'s checks: they must exit 2; what they printed on stderr."""
    with pytest.raises(SystemExit) as exited:
        script.parse_args(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


# -- 1. an output on the checkpoint an agent's option names -------------------------------------------


@pytest.mark.usefixtures("no_games")
def test_evaluate_refuses_a_json_on_the_checkpoint_an_option_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(CARD_POLICY, "mine2.npz")
    before = Path("mine2.npz").read_bytes()
    spec = "endgame:policy=mine2.npz,budget=50"
    error = error_of(
        ["--focus", spec, "--vs", "random", "--games", "4", "--no-progress", "--json", "mine2.npz"], capsys
    )
    assert f"{spec} is an agent evaluated here and an output it would overwrite (its option policy names" in error
    assert Path("mine2.npz").read_bytes() == before


def test_an_option_naming_a_zoo_policy_protects_the_shipped_file() -> None:
    zoo_file = agents.REGISTRY.policy_path("ensemble-v1")
    assert overwritten_agent(["endgame:policy=ensemble-v1,budget=50"], [zoo_file]) is not None
    assert overwritten_agent(["endgame:policy=ensemble-v1,budget=50"], [Path("elsewhere.json")]) is None
    assert overwritten_agent(["search:objective=relative"], [Path("relative")]) is None  # no file of that name


def test_ratings_refuses_an_out_on_the_checkpoint_an_option_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("openskill")
    monkeypatch.chdir(tmp_path)
    shutil.copy(CARD_POLICY, "mine3.npz")
    before = Path("mine3.npz").read_bytes()
    argv = ["ratings", "--agents", "endgame:policy=mine3.npz,budget=50", "random", "cautious", "--tables", "1"]
    assert friday13([*argv, "--workers", "1", "--out", "mine3.npz", "--overwrite"]) == 2
    assert "is an agent evaluated here and an output it would overwrite" in capsys.readouterr().err
    assert Path("mine3.npz").read_bytes() == before


# -- 2. the solo evaluation's outputs on an agent's checkpoint ----------------------------------------


def test_the_solo_evaluation_refuses_an_output_on_an_agents_checkpoint(
    solo_script: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    solo = tmp_path / "solo.npz"
    shutil.copy(SOLO_POLICY, solo)
    for flag in ("--json", "--markdown"):
        argv = ["--agents", str(solo), "--levels", "1", "--games", "1", flag, str(solo)]
        assert f"{solo} is an agent evaluated here and an output it would overwrite" in solo_error(
            solo_script, argv, capsys
        )
    error = solo_error(solo_script, ["--agents", "dagger-v1", "--levels", "1", "--json", str(SOLO_POLICY)], capsys)
    assert "dagger-v1 is an agent evaluated here and an output it would overwrite" in error
    assert solo.read_bytes() == SOLO_POLICY.read_bytes()


# -- 3. the solo evaluation lists each agent and level once -------------------------------------------


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "random", "random"], "argument --agents: 'random' and 'random' are one agent (random): it is "
         "listed twice"),
        (["--agents", "search", "search:budget=8", "--search-budget", "8"],
         "argument --agents: 'search:budget=8' and 'search' are one agent (search:budget=8): it is listed twice"),
        (["--agents", "random", "--levels", "1", "1"], "argument --levels: 1 is listed twice"),
    ],
)  # fmt: skip
def test_the_solo_evaluation_refuses_an_agent_or_level_listed_twice(
    solo_script: Any, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert message in solo_error(solo_script, argv, capsys)


# -- 4. a matrix lists each agent once ------------------------------------------------------------------


@pytest.mark.usefixtures("no_games")
def test_a_matrix_refuses_an_agent_listed_twice(capsys: pytest.CaptureFixture[str]) -> None:
    error = error_of(["--matrix", "--agents", "cautious", "cautious", "random", "--games", "4"], capsys)
    assert "argument --agents: 'cautious' and 'cautious' are one agent (cautious): it is listed twice" in error
    error = error_of(["--matrix", "--agents", "search:budget=016", "random", "search:budget=16"], capsys)
    assert "'search:budget=16' and 'search:budget=016' are one agent (search:budget=16): it is listed twice" in error
    assert len(matrix_matchups(["cautious", "random"])) == 2  # one of each: no error
    with pytest.raises(ValueError, match=r"agent 'cautious' is listed twice, in \['cautious', 'cautious', 'random'\]"):
        matrix_matchups(["cautious", "cautious", "random"])
    with pytest.raises(ValueError, match="at least two different agents"):
        matrix_matchups(["random", "random"])


# -- 5. a | in a Markdown cell ------------------------------------------------------------------------


def cells(line: str) -> int:
    """The cells of a Markdown table row: its ``|`` that no backslash escapes, less one."""
    return line.replace("\\|", "").count("|") - 1


def test_a_pipe_in_an_agent_name_is_escaped_in_the_markdown_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(CARD_POLICY, "a|b.npz")
    markdown = format_markdown(play_matchups(focus_matchups("a|b.npz", ["random"]), 4, [4], num_rounds=1))
    tables = [block.splitlines() for block in markdown.split("\n\n") if block.startswith("|")]
    assert len(tables) == 2 and all("a\\|b.npz" in table[-1] for table in tables), markdown
    for header, *rows in tables:
        assert {cells(row) for row in rows} == {cells(header)}, markdown
    solo = LevelResult("x|y", 1, 1, 0, Interval(0.0, 0.0, 1.0), Interval(1.0, 1.0, 1.0), 3.0, 0.5)
    rows = [line for line in solo_markdown([solo], 0).splitlines() if line.startswith("|")]
    assert "| x\\|y |" in rows[2] and cells(rows[2]) == cells(rows[0]) == 6


# -- 6. an output inside the replays folder -----------------------------------------------------------


@pytest.mark.usefixtures("no_games")
@pytest.mark.parametrize("name", ["00-4p-cautious-random-deal0-shift0.json", "summary.md", "sub/summary.json"])
def test_an_output_inside_the_replays_folder_is_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    flag = "--markdown" if name.endswith(".md") else "--json"
    argv = ["--agents", "cautious", "random", "--games", "4", "--no-progress", "--replays", "rp2", flag, f"rp2/{name}"]
    error = error_of(argv, capsys)
    assert f"{flag} rp2/{name} is inside rp2, the folder --replays saves its files in" in error
    assert list(tmp_path.iterdir()) == []


# -- 7. a results folder with no result files ---------------------------------------------------------


def test_a_results_folder_without_result_files_gives_no_leaderboard(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "docs"
    (folder / "sub").mkdir(parents=True)
    (folder / "readme.md").write_text("# not a result\n")
    with pytest.raises(ValueError, match=r"no test-split result files in .*docs"):
        leaderboard.load_results(folder)
    page = tmp_path / "x.md"
    assert friday13(["leaderboard", "--results", str(folder), "--out", str(page)]) == 2
    assert "no test-split result files in" in capsys.readouterr().err and not page.exists()


# -- 8. os.PathLike in make and load --------------------------------------------------------------------


class Where:
    """An ``os.PathLike`` that is not a ``pathlib.Path``."""

    def __init__(self, path: Path | str) -> None:
        self.path = str(path)

    def __fspath__(self) -> str:
        return self.path


class BytesWhere:
    """An ``os.PathLike`` of bytes, which no loader reads."""

    def __fspath__(self) -> bytes:
        return b"x.npz"


def test_load_takes_any_path_like(tmp_path: Path) -> None:
    assert isinstance(agents.load(Where(CARD_POLICY)), PolicyAgent)
    assert isinstance(solo_agents.load(Where(SOLO_POLICY)), PolicyAgent)
    with pytest.raises(ValueError, match="a checkpoint path must be a str or a Path, got"):
        agents.load(BytesWhere())  # type: ignore[arg-type]


def test_make_takes_a_path_as_a_file_whatever_it_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    shutil.copy(CARD_POLICY, "cautious")
    shutil.copy(CARD_POLICY, "ensemble-v1")
    assert isinstance(agents.make("cautious"), CautiousAgent)  # a registered name wins over a file of that name
    assert isinstance(agents.make("./cautious"), PolicyAgent)  # ./ names the file
    for named in (Path("cautious"), Where("cautious"), Path("ensemble-v1"), Path(CARD_POLICY)):
        agent = agents.make(named, seed=0, greedy=False)
        assert isinstance(agent, PolicyAgent) and not agent.greedy, named
    assert isinstance(solo_agents.make(Path(SOLO_POLICY)), PolicyAgent)
    with pytest.raises(UnknownOptionError, match=r"has no option\(s\) \['budget'\]; its options: \['greedy'\]"):
        agents.make(Path("cautious"), budget=3)
    with pytest.raises(CheckpointError, match="no policy checkpoint"):
        agents.make(Path("missing.npz"))
    with pytest.raises(ValueError, match="seed must be None or a non-negative int"):
        agents.make(Path("cautious"), seed=-1)


def test_a_table_seats_a_path_as_a_file_whatever_it_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``make_seated`` (the environments' and evaluations' way to build an agent) and the batched tables take a
    ``Path`` as ``agents.make`` does: always a checkpoint file, even one named like a registered agent."""
    from friday13_env.friday13.agents.seating import make_seated
    from friday13_env.friday13.batched import make_batched
    from friday13_env.friday13.batched.agents import BatchedPolicy
    from friday13_env.friday13.cards import STANDARD_DECK

    monkeypatch.chdir(tmp_path)
    shutil.copy(CARD_POLICY, "cautious")
    assert isinstance(make_seated(Path("cautious"), 0, "standard"), PolicyAgent)
    assert isinstance(make_seated("cautious", 0, "standard"), CautiousAgent)
    seated = make_batched(Path("cautious"), STANDARD_DECK)
    assert isinstance(seated, BatchedPolicy) and seated.name == "cautious"
    assert not isinstance(make_batched("cautious", STANDARD_DECK), BatchedPolicy)
