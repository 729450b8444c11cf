"""``friday13 benchmark``: list the suites, or play one for an agent and write its result file.

Every check runs before the first game (the suite, the agent built once and its answers at the fingerprint
positions, the frozen deals and anchors, the output path, a partial file of another run); a run stopped by Ctrl-C
keeps its finished units in ``OUT.partial``, says so, and the same command continues it. ``friday13 ratings`` and
``friday13 leaderboard`` are here too: neither writes over an agent's checkpoint or (without ``--overwrite``) an
existing ratings file, the leaderboard's page is never inside its ``--results`` folder (it would replace a result
file), and ``leaderboard --check`` reads its page capped, a regular file only. An output whose name (``OUT.partial``'s
included) is too long for the file system is refused before any work.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from friday13_env.benchmark.leaderboard import (
    GENERATED_MARK,
    LEADERBOARD,
    RATINGS_FILE,
    RESULTS_FOLDER,
    format_interval,
    generate,
)
from friday13_env.benchmark.play import against_itself
from friday13_env.benchmark.ratings import (
    MAX_TABLES,
    RATINGS_FORMAT,
    check_ratings,
    check_tables,
    processes_for,
    run_ratings,
)
from friday13_env.benchmark.results import split_result_name
from friday13_env.benchmark.runner import (
    MAX_RESULT_BYTES,
    PARTIAL_SUFFIX,
    Plan,
    canonical_label,
    execute,
    partial_path,
    prepare,
    read_json,
    registry_of,
)
from friday13_env.benchmark.suite import SPLITS, Suite, is_suite_folder, suites
from friday13_env.core.agent import AgentRaisedError, IllegalMoveError
from friday13_env.core.checks import counted
from friday13_env.core.files import (
    atomic_write_text,
    clashing_outputs,
    name_problem,
    output_in_folder,
    output_inside,
    read_capped,
    run_writing,
)
from friday13_env.core.pool import WorkerDied
from friday13_env.core.signals import Interrupted
from friday13_env.core.specs import entrant_label, non_negative_argument, path_argument, positive_argument
from friday13_env.friday13.evaluation.command import STDOUT, add_replay_arguments, checked_replays, overwritten_agent
from friday13_env.friday13.evaluation.report import check_output_path

DESCRIPTION = "Play a frozen benchmark suite with an agent; print its scores and write a result file."
EXAMPLES = """\
Examples:
  friday13 benchmark --list
  friday13 benchmark --agent ppo-v4 --suite card-4p-quick
  friday13 benchmark --agent my_agents:MyAgent --suite card-4p      # a factory of your own
  friday13 benchmark --agent search --suite friday-levels            # the solo game's agents
  friday13 benchmark --agent search --suite friday-levels --replays results/replays
Results go to results/benchmark/SUITE-vN/AGENT.json unless --out says otherwise (see docs/benchmark.md).
--replays DIR also saves games as replay files, one per game: every seat rotation of the first --replay-deals
deals of each card-game cell played in this run (DIR/01-4p-AGENT-cautious-deal0-shift2.json: cell index, players,
agents, deal, seat shift), the first --replay-deals games of each solo level (DIR/AGENT-level2-game0.json); with --split
dev the names start with dev-. A cell where the agent meets copies of itself is not played, and units continued
from OUT.partial were played before: neither saves a file. The command says how many files it saved.
`friday13 replay FILE --html OUT.html` renders one as a page.
"""


DEFAULT_SPLIT = "test"
RUN_OPTIONS = ("split", "workers", "out", "overwrite", "replays", "replay_deals")
"""The options of a run besides ``--agent`` and ``--suite``, which ``--list`` refuses rather than ignores."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--list", action="store_true", help="list the suites and exit")
    parser.add_argument("--agent", metavar="SPEC", help="an agent spec as agents.make takes it, or module:factory")
    parser.add_argument("--suite", metavar="NAME", help="the suite to play (see --list)")
    parser.add_argument(
        "--split", choices=SPLITS, help=f"{DEFAULT_SPLIT} (reported figures; the default) or dev (tuning)"
    )
    parser.add_argument("--workers", type=positive_argument, help="processes (default: every usable CPU)")
    parser.add_argument(
        "--out", type=path_argument, metavar="PATH", help="result file (default under results/benchmark/)"
    )
    parser.add_argument("--overwrite", action="store_true", help="replace a complete result file at --out")
    add_replay_arguments(parser, "card-game cell played in this run (or games of each solo level)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def default_out(suite: Suite, spec: str, split: str) -> Path:
    """Where a run of ``spec`` writes its result without ``--out``: the file name the leaderboard expects, made from
    the spec as the result records it, its canonical form (``Registry.canonical``: ``majority: open_min=4``,
    ``majority:keep_min=2,open_min=4`` and ``majority:open_min=4`` are one agent, one file, as ``keep_min=2`` is its
    default); a bad spec is the registry's ``ValueError``."""
    return RESULTS_FOLDER / suite.id / split_result_name(recorded_label(suite, spec), split)


def recorded_label(suite: Suite, spec: str) -> str:
    """The label a run of ``spec`` records: its canonical form (``Registry.canonical``); a bad spec is the registry's
    ``ValueError``."""
    return entrant_label(registry_of(suite.game).checked_canonical(spec))


def same_agent_file(suite: Suite, agent: str, split: str, path: Path) -> tuple[Path, str] | None:
    """Another result file in ``path``'s folder (a suite's, where the leaderboard reads) of ``agent`` (the canonical
    label a run would record and file at ``path``) on ``split``: one an earlier release named after the spec as typed
    (``majority_keep_min_2.json``, ``majority``'s). The run would write a second file of that agent, and the
    leaderboard then refuse both; so it is refused before any game. Only the header fields that say so are read (the
    suite's id and split, the agent's spec); a file that does not give them (damaged, another kind) is passed over
    here and left to the leaderboard's own error. A partial run (``OUT.partial``) of that agent under another name is
    found too: the run would start afresh beside it. The file, with the spec it records."""
    own = {path.name, partial_path(path).name}  # the files --overwrite replaces and the run continues
    for other in sorted([*path.parent.glob("*.json"), *path.parent.glob(f"*.json{PARTIAL_SUFFIX}")]):
        if other.name in own:
            continue
        try:
            data = read_json(other, "benchmark result")
        except (OSError, ValueError):
            continue
        header, spec = data.get("suite"), recorded_agent(data)
        if not isinstance(header, dict) or header.get("id") != suite.id or header.get("split") != split:
            continue
        if spec is not None and canonical_label(suite.game, spec) == agent:
            return other, spec
    return None


def recorded_agent(data: dict[str, Any]) -> str | None:
    """The agent spec a result (or partial) file's ``data`` records, or None where it records none readable (a file of
    another kind, or a damaged one, which the caller refuses or leaves to the reader's own error)."""
    identity = data.get("agent")
    spec = identity.get("spec") if isinstance(identity, dict) else None
    return spec if isinstance(spec, str) and spec.strip() else None


def format_suites() -> str:
    lines = []
    for suite in suites().values():
        games = suite.games_per_cell("test")
        lines.append(f"{suite.name} (v{suite.version}, {suite.game}): {suite.title}")
        lines.append(
            f"    {len(suite.cells)} cells, {sum(games)} test games: " + ", ".join(c.name for c in suite.cells)
        )
    return "\n".join(lines)


def format_result(result: dict[str, Any]) -> str:
    """The result as a text table: each cell, then the aggregate and the cost."""
    lines = [f"{result['agent']['spec']} on {result['suite']['id']} ({result['suite']['split']} split)"]
    second = "score" if "score" in result["cells"][0] else "margin"
    lines.append(f"{'cell':<38} {'games':>6} {'win share':>22} {second:>24} {'normalised':>24}")
    for cell in result["cells"]:
        normalised = "-" if cell["normalised"] is None else format_interval(cell["normalised"], 2)
        lines.append(
            f"{cell['name']:<38} {cell['games']:>6} {format_interval(cell['win_share'], 3):>22} "
            f"{format_interval(cell[second], 2):>24} {normalised:>24}"
        )
    if result["normalised"] is not None:
        for name in ("iqm", "mean"):
            lines.append(
                f"normalised score, {name.upper()} over cells: {format_interval(result['normalised'][name], 3)}"
            )
    cost = result["cost"]["ms_per_move"]
    lines.append(f"cost: {'-' if cost is None else f'{cost:.3f}'} ms per move; {result['provenance']['elapsed_s']} s")
    return "\n".join(lines)


def run(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    if args.list:
        given = [
            f"--{name.replace('_', '-')}"
            for name in ("agent", "suite", *RUN_OPTIONS)
            if getattr(args, name) not in (None, False)
        ]
        if given:
            options = ", ".join(f"--{name.replace('_', '-')}" for name in RUN_OPTIONS)
            parser.error(f"--list takes no --agent or --suite, nor an option of a run ({options}); got {given[0]}")
        print(format_suites(), file=out)
        return 0
    if not args.agent or not args.suite:
        parser.error("give --agent SPEC and --suite NAME (or --list)")
    return run_writing(lambda written: _run(args, parser, out, written))


def check_out(path: Path, parser: argparse.ArgumentParser, suffix: str = "") -> None:
    """``--out`` can be written (its folders created, its name with ``suffix``, the longest the command adds, fits
    the file system), or argparse's error (exit 2) saying why, before any work."""
    problem = check_output_path(path, suffix=suffix)
    if problem is not None:
        parser.error(f"argument --out: {problem}")


def note_capped_workers(asked: int | None, used: int) -> None:
    """On stderr, as ``friday13 evaluate`` does: ``--workers`` asked for more processes than the ``used`` ones."""
    if asked is not None and used < asked:
        print(f"--workers {asked}: capped at {used}, the CPUs this process may use", file=sys.stderr)


def _run(args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, written: list[str]) -> None:
    """The checked run (``_play``); stopped by Ctrl-C or SIGTERM once ``OUT.partial`` exists, its last line says
    that the file was kept and that the same command continues it."""
    partial: list[Path] = []  # OUT.partial, once the output path is known
    try:
        _play(args, parser, out, written, partial)
    except Interrupted as stop:
        if partial and partial[0].exists():
            raise _PartialKept(stop, partial[0]) from None
        raise


def _play(
    args: argparse.Namespace, parser: argparse.ArgumentParser, out: TextIO, written: list[str], partial: list[Path]
) -> None:
    split = DEFAULT_SPLIT if args.split is None else args.split
    try:
        suite = suites().get(args.suite)
        if suite is None:
            parser.error(f"argument --suite: unknown suite {args.suite!r}; suites: {sorted(suites())}")
        if args.out == STDOUT:
            parser.error("argument --out: a benchmark writes a file (and OUT.partial as it plays), not stdout (-)")
        path = args.out if args.out is not None else default_out(suite, args.agent, split)
        agent = recorded_label(suite, args.agent)
        if args.out is None or path.parent.name == suite.id:  # the leaderboard's folder: one file of an agent there
            found = same_agent_file(suite, agent, split, path)
            if found is not None and found[0].name.endswith(PARTIAL_SUFFIX):
                other, spec = found
                parser.error(
                    f"argument --agent: {other} is a partial run of agent {agent!r} on the {split} split (recorded as "
                    f"{spec!r}; an earlier release named the file after the spec as typed), and this run would start "
                    f"another at {partial_path(path)}: rename {other} to {partial_path(path)} to continue it, or "
                    "delete it"
                )
            if found is not None:
                other, spec = found
                parser.error(
                    f"argument --agent: {other} holds a result of agent {agent!r} on the {split} split (recorded as "
                    f"{spec!r}; an earlier release named the file after the spec as typed), and this run would write "
                    f"another to {path}: the leaderboard refuses two result files of one agent. Delete one: {other} "
                    "to run the agent again, or keep it and run no more (--out elsewhere writes a result the "
                    "leaderboard does not read)"
                )
        check_out(path, parser, PARTIAL_SUFFIX)  # OUT.partial is written beside it as the run goes
        partial.append(partial_path(path))
        overwritten = overwritten_agent([args.agent], [path, partial_path(path)])
        if overwritten is not None:
            parser.error(overwritten)
        if path.exists():
            try:  # --overwrite replaces a result, never a file of another kind (the ratings, a page, a checkpoint)
                existing = read_json(path, "the file at --out")
            except ValueError as error:
                parser.error(f"argument --out: {path} is not a benchmark result, so it is not replaced ({error})")
            if not args.overwrite:
                parser.error(f"argument --out: {path} holds a complete result; --overwrite replaces it")
            recorded = recorded_agent(existing)
            if recorded is not None and canonical_label(suite.game, recorded) != agent:
                parser.error(
                    f"argument --out: {path} holds a result of agent {recorded!r}, not of {agent!r}: --overwrite "
                    "replaces a result of the agent it runs, never another's (their file names are the same once "
                    "every character but letters, digits, '.', '_' and '-' is '_'); choose another --out"
                )
        replays = checked_replays(
            args,
            parser,
            {"command": "friday13 benchmark", "suite": suite.id, "split": split},
            prefix="" if split == DEFAULT_SPLIT else f"{split}-",
        )
        clash = clashing_outputs({"--out": path}, {} if replays is None else {"--replays": replays.folder})
        if clash is None and replays is not None:
            clash = output_in_folder({"--out": path}, "--replays", replays.folder)
        if clash is not None:
            parser.error(clash)
        plan = prepare(args.agent, suite, split=split, workers=args.workers, out=path, replays=replays)
    except (ValueError, ModuleNotFoundError) as error:
        parser.error(str(error))
    note_capped_workers(args.workers, plan.processes)
    resuming = partial_path(path).exists()
    if resuming:
        print(f"continuing the partial run in {partial_path(path)}", file=out)
    if replays is not None:
        replays.folder.mkdir(parents=True, exist_ok=True)
        written.append(f"replays in {replays.folder}")  # saved as the units are played
    before = {} if replays is None else _replay_files(replays.folder, replays.prefix)
    try:
        with _progress_bar(not args.no_progress) as update:
            result = execute(plan, update)
    except (IllegalMoveError, AgentRaisedError, WorkerDied) as error:  # what the fingerprint positions did not meet
        kept = f"; the finished units are kept in {partial_path(path)}" if partial_path(path).exists() else ""
        if isinstance(error, WorkerDied):
            raise SystemExit(f"friday13 benchmark: stopped: {error}{kept}") from error
        parser.error(f"{error}{kept}")
    written.append(str(path))
    print(format_result(result), file=out)
    print(f"wrote {path}", file=out)
    if replays is not None:
        after = _replay_files(replays.folder, replays.prefix)
        saved = sum(1 for name, stamp in after.items() if before.get(name) != stamp)
        print(replays_note(plan, saved, result["provenance"]["resumed_units"]), file=out)


class _PartialKept(Interrupted):
    """Ctrl-C or SIGTERM during a run that keeps ``OUT.partial``: its last line names the file and says that the
    same command continues it (``run_writing`` prints ``message``)."""

    def __init__(self, stop: Interrupted, partial: Path) -> None:
        super().__init__(stop.signum)
        self.partial = partial

    def message(self, nothing: str = "nothing was saved") -> str:
        also = f"; {self.saved.replace('wrote only', 'also wrote', 1)}" if self.saved else ""
        return f"stopped by {self}: kept the finished units in {self.partial}; the same command continues it{also}"


def _replay_files(folder: Path, prefix: str) -> dict[str, tuple[int, int]]:
    """The replay files in ``folder`` (their names start with ``prefix``), each with its inode and modification
    time: a file saved by the run is new or has both changed (a save writes a new file and renames it)."""
    found = {}
    for entry in folder.iterdir():
        if entry.name.startswith(prefix) and entry.name.endswith(".json"):
            try:
                info = entry.stat()
            except OSError:
                continue
            found[entry.name] = (info.st_ino, info.st_mtime_ns)
    return found


def replays_note(plan: Plan, saved: int, resumed_units: int) -> str:
    """What ``--replays`` saved: the count of files, which games they are, and the games it did not save (a cell
    where the agent meets copies of itself is not played; units continued from ``OUT.partial`` were played before)."""
    assert plan.replays is not None
    deals = min(plan.replays.deals, plan.suite.split(plan.split).deals)  # not more than the split has
    if plan.suite.game == "friday":
        which = f"every game of the first {counted(deals, 'game')} of each level played in this run"
    else:
        which = f"every game of the first {counted(deals, 'deal')} of each cell played in this run"
    notes = []
    skipped = [cell.name for cell in plan.suite.cells if against_itself(cell, plan.entrant)]
    if skipped:
        notes.append(f"none for {', '.join(skipped)} (the agent against copies of itself: not played)")
    if resumed_units:
        notes.append(
            f"none for the {counted(resumed_units, 'unit')} continued from {plan.partial_path} "
            "(played in an earlier run)"
        )
    return f"saved {counted(saved, 'replay file')} in {plan.replays.folder}: {which}" + "".join(
        f"; {note}" for note in notes
    )


class _progress_bar:
    """A tqdm bar of games when tqdm is installed and wanted, else nothing."""

    def __init__(self, enabled: bool) -> None:
        self.bar: Any = None
        self.enabled = enabled

    def __enter__(self) -> Any:
        def update(done: int, total: int) -> None:
            if self.bar is None and self.enabled:
                try:
                    from tqdm import tqdm
                except ImportError:
                    self.enabled = False
                    return
                self.bar = tqdm(total=total, initial=done, unit="game", dynamic_ncols=True)
            elif self.bar is not None:
                self.bar.update(done - self.bar.n)

        return update

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.close()


RATINGS_DESCRIPTION = "Rate agents from free-for-all games at mixed 3-6 player tables (openskill Plackett-Luce)."
LEADERBOARD_DESCRIPTION = "Write docs/leaderboard.md from the result files, or --check that it matches them."
MAX_PAGE_BYTES = MAX_RESULT_BYTES
"""The most bytes of the page ``leaderboard --check`` reads (the generated page is tens of KB): more is refused."""


def add_ratings_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--agents", nargs="+", metavar="SPEC", help="the pool (default: every card-game agent and zoo policy)"
    )
    parser.add_argument(
        "--tables", type=positive_argument, default=400, help=f"tables to play (default 400, at most {MAX_TABLES:,})"
    )
    parser.add_argument("--seed", type=non_negative_argument, default=0, help="seed of the tables (default 0)")
    parser.add_argument("--workers", type=positive_argument, help="processes (default: every usable CPU)")
    parser.add_argument(
        "--out",
        type=path_argument,
        default=RESULTS_FOLDER / RATINGS_FILE,
        help="result file, - for stdout (default %(default)s); never an agent's checkpoint",
    )
    parser.add_argument("--overwrite", action="store_true", help="replace an existing file at --out")


def run_ratings_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    from friday13_env.friday13.agents import names

    to_stdout = args.out == STDOUT
    if to_stdout and args.overwrite:
        parser.error("--overwrite replaces a file at --out; --out - writes to stdout, which it cannot apply to")
    if not to_stdout:
        check_out(args.out, parser)
        overwritten = overwritten_agent(args.agents or names(), [args.out])
        if overwritten is not None:
            parser.error(overwritten)
        if is_suite_folder(args.out.parent.name):
            parser.error(
                f"argument --out: {args.out} is in a suite's results folder, where the leaderboard reads every file as "
                "a benchmark result; write the ratings elsewhere"
            )
        if args.out.exists():
            try:  # --overwrite replaces ratings, never a file of another kind (a result, a page, a checkpoint)
                read_json(args.out, "the file at --out", RATINGS_FORMAT)
            except ValueError as error:
                parser.error(f"argument --out: {args.out} is not a ratings file, so it is not replaced ({error})")
            if not args.overwrite:
                parser.error(f"argument --out: {args.out} exists; --overwrite replaces it")
    notes = sys.stderr if to_stdout else out  # stdout holds the result file alone, as `evaluate --json -` does

    def body(written: list[str]) -> None:
        try:
            check_tables(args.tables)
            plan = check_ratings(args.agents or names(), args.workers)
        except (ValueError, ModuleNotFoundError) as error:
            parser.error(str(error))
        note_capped_workers(args.workers, processes_for(args.workers))
        try:
            result = run_ratings(plan, args.tables, args.seed, args.workers)
        except (IllegalMoveError, AgentRaisedError) as error:  # what the fingerprint positions did not meet
            parser.error(str(error))
        except WorkerDied as error:
            raise SystemExit(f"friday13 ratings: stopped: {error}") from error
        text = json.dumps(result, indent=1) + "\n"
        if to_stdout:
            out.write(text)
            out.flush()
            written.append("stdout")
        else:
            atomic_write_text(args.out, text)
            written.append(str(args.out))
        for agent, rating in sorted(result["ratings"].items(), key=lambda item: -item[1]["ordinal"]):
            print(f"{agent:<20} mu {rating['mu']:6.2f}  sigma {rating['sigma']:5.2f}", file=notes)
        if not to_stdout:
            print(f"wrote {args.out}", file=out)

    return run_writing(body)


def add_leaderboard_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--results", type=path_argument, default=RESULTS_FOLDER, help="result folder (default %(default)s)"
    )
    parser.add_argument("--out", type=path_argument, default=LEADERBOARD, help="the page (default %(default)s)")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs from what the files give")


def _head(path: Path, size: int = 4096) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (empty where it cannot be read)."""
    try:
        with path.open("rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def page_among_results(page: Path, results: Path) -> str | None:
    """Why the leaderboard's ``page`` would take the place of one of the files it is made from, or None: a ``.json``
    file inside ``results`` (``SUITE/AGENT.json``, ``ratings.json``, ``exploitability.json``, or a name such a file
    could take; the case of the name aside, as some file systems ignore it). Writing the page there replaced a result
    with Markdown, which the next run could not read. A page of another name inside the folder is never read."""
    if page.suffix.lower() != ".json" or output_inside({"--out": page}, {"--results": results}) is None:
        return None
    return (
        f"--out {page} is inside {results}, the folder --results reads the result files from, and a .json file "
        "there is a result file or could be read as one; give the page a name of its own (such as leaderboard.md) "
        "or write it outside that folder"
    )


def run_leaderboard_command(
    args: argparse.Namespace,
    parser: argparse.ArgumentParser,
    _input: TextIO | None = None,
    output: TextIO | None = None,
) -> int:
    out = sys.stdout if output is None else output
    clash = page_among_results(args.out, args.results)
    if clash is not None:
        parser.error(clash)
    current = ""
    if args.check:  # the page is only read: it must be a file, if it is there
        too_long = name_problem(args.out)  # a name the system cannot look up would make is_dir() raise
        if too_long is not None:
            parser.error(f"argument --out: cannot read {args.out}: {too_long.strerror}")
        if args.out.is_dir():
            parser.error(f"argument --out: {args.out} is a folder; give a file name")
        try:  # capped, a regular file only: a pipe would hang the check, /dev/zero fill the memory
            raw = read_capped(args.out, MAX_PAGE_BYTES, "leaderboard page") if args.out.exists() else b""
        except ValueError as error:
            parser.error(f"argument --out: {error}")
        try:
            current = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            parser.error(f"argument --out: leaderboard page {args.out} is not UTF-8 text: {error}")
    else:
        check_out(args.out, parser)
        if args.out.is_file() and GENERATED_MARK.encode() not in _head(args.out):
            parser.error(
                f"argument --out: {args.out} is not a leaderboard page (it has no {GENERATED_MARK!r} line), so it is "
                "not replaced; give the page a file of its own"
            )
    try:
        page = generate(args.results, args.out)
    except (ValueError, ModuleNotFoundError) as error:
        parser.error(str(error))
    if args.check:
        if current != page:
            print(f"{args.out} differs from what {args.results} gives; run `friday13 leaderboard`", file=out)
            return 1
        print(f"{args.out} matches {args.results}", file=out)
        return 0
    atomic_write_text(args.out, page)
    print(f"wrote {args.out}", file=out)
    return 0
