"""Command lines built from dataclasses, shared by the training and distillation scripts.

A script declares its hyperparameters once, as a dataclass whose fields carry their help text and
their bounds (``option(default, help, minimum=1)``); ``dataclass_parser`` turns that into an argparse
parser, so defaults, flags, bounds and ``--help`` can never drift apart (the CleanRL convention,
without extra dependencies). A value out of bounds is refused by argparse itself, naming the flag,
before the script does anything.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from friday13_env.core.checkpoint import MAX_LAYERS, MAX_PARAMETERS, parameter_count
from friday13_env.core.files import atomic_write_bytes as atomic_write_bytes  # re-exported for the scripts
from friday13_env.core.files import atomic_write_text as atomic_write_text
from friday13_env.core.files import output_problem
from friday13_env.core.options import MAX_GAMES
from friday13_env.friday13.agents.policy import observation_scale
from friday13_env.friday13.cards import get_deck

REPOSITORY = Path(__file__).resolve().parents[2]
"""The checkout the training scripts run from: where the shipped teacher checkpoints live."""
MAX_LEARNING_RATE = 1.0
"""The largest learning rate a training script takes: Adam moves every weight by about the rate at each step, so a
rate above 1 throws the networks away at the first update (every recipe here is at most 2.5e-3); one past float32's
range (``1e300``) crashed torch's optimizer after the run folder was made."""
MAX_LOSS_WEIGHT = 100.0
"""The largest weight of a loss term (``--ent-coef``, ``--vf-coef``): far above every recipe here (an entropy bonus
of at most 0.03, a value weight of 0.5), where the term drowns the policy's loss; one past float32's range
(``1e300``) made the loss infinite, and the run stopped with NaN weights after its folder was made."""
MAX_CLIP = 10.0
"""The largest PPO clip range (``--clip-coef``, ``--clip-range``): a range of 1 already leaves no lower clip, and every
recipe here is at most 0.2; one past float32's range (``1e39``) crashed torch after the run folder was made."""
MAX_GRAD_NORM = 1e6
"""The largest gradient norm clip (``--max-grad-norm`` of ``train_ppo.py`` and ``train_rllib.py``): far above every
recipe here (0.5), where it clips nothing; the clip is applied in float32, so one past float32's range (``1e300``)
crashed RLlib's learner after Ray had started."""
MAX_EPOCHS = 1_000
"""The most passes over each rollout or batch (``train_ppo.py``'s ``--update-epochs``, ``train_rllib.py``'s
``--num-epochs``): every recipe here makes at most 10, and each pass is a whole update's work, so a billion would
never end its first update."""
MAX_EVAL_GAMES = MAX_GAMES
"""The most games an evaluation plays per opponent or level (``--eval-games``, ``--final-games``), as the card
game's tournament (``MAX_GAMES``): its deals are those of its seed, which repeat another seed's past a million games,
and the evaluation refuses more, which the scripts said only after training."""
MAX_ROLLOUT_BYTES = 16 << 30
"""The most memory a rollout's arrays may take (with the copies the update makes of its samples), checked before
anything is built: the rollout's sizes are bounded by it, not by the machine's memory running out."""
MAX_TORCH_THREADS = 1024
"""The most CPU threads ``--torch-threads`` gives torch: more than any machine the scripts run on has cores (more
threads than cores only wait on each other), and far inside the C int torch takes (``99999999999`` crashed it after
the run folder was made)."""


def option(
    default: Any,
    help: str,
    *,
    allow_empty: bool = False,
    minimum: float | None = None,
    above: float | None = None,
    maximum: float | None = None,
    below: float | None = None,
    choices: Sequence[str] | None = None,
    unique: bool = False,
) -> Any:
    """A dataclass field that carries its ``--help`` text and bounds (lists get a fresh copy per instance).

    A list flag needs at least one value unless ``allow_empty`` (then the bare flag means ``[]``), and with
    ``unique`` may not repeat one (a list of table sizes the environments draw from uniformly).
    ``minimum`` / ``maximum`` are inclusive bounds, ``above`` / ``below`` exclusive ones; they apply to each
    value of a list flag, and float values must also be finite. ``choices`` lists the allowed texts.
    """
    bounds = {"minimum": minimum, "above": above, "maximum": maximum, "below": below}
    metadata = {"help": help, "allow_empty": allow_empty, "bounds": bounds, "choices": choices, "unique": unique}
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def bounds_text(bounds: dict[str, float | None]) -> str:
    """``{"minimum": 1, ...}`` -> ``"at least 1"``, the words of the help text and of the error."""
    words = {"minimum": "at least", "above": "above", "maximum": "at most", "below": "below"}
    return " and ".join(f"{words[key]} {number_text(value)}" for key, value in bounds.items() if value is not None)


def number_text(value: float) -> str:
    """An int in full, with thousands separators (a bound such as 4,294,967,295 is not rounded to 4.29497e+09), a
    float as ``:g`` writes it."""
    return f"{value:,}" if isinstance(value, int) else f"{value:g}"


def bound_error(value: float, bounds: dict[str, float | None]) -> str | None:
    """Why ``value`` is out of ``bounds`` (or not a finite number), or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"must be a finite number, got {value}"
    limits = {key: limit for key, limit in bounds.items() if limit is not None}
    ok = (
        value >= limits.get("minimum", -math.inf)
        and value > limits.get("above", -math.inf)
        and value <= limits.get("maximum", math.inf)
        and value < limits.get("below", math.inf)
    )
    return None if ok else f"must be {bounds_text(bounds)}, got {number_text(value)}"


def bounded(convert: Callable[[str], Any], bounds: dict[str, float | None]) -> Callable[[str], Any]:
    """An argparse ``type`` that converts a value and refuses one out of ``bounds`` (or a NaN / infinity)."""

    def parse(text: str) -> Any:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {convert.__name__}, got {text!r}") from None
        error = bound_error(value, bounds)
        if error:
            raise argparse.ArgumentTypeError(error)
        return value

    parse.__name__ = convert.__name__  # argparse names the type in its own messages
    return parse


def field_errors(cls: type, values: dict[str, Any]) -> list[str]:
    """What the parser would refuse in ``values`` (e.g. arguments read back from a run's record): one line per
    field of ``cls`` that is missing, of the wrong type, out of bounds or not one of its choices."""
    hints = typing.get_type_hints(cls)
    errors = []
    for spec in dataclasses.fields(cls):
        flag = flag_name(spec.name)
        if spec.name not in values:
            errors.append(f"{flag}: missing")
            continue
        value = values[spec.name]
        hint = hints[spec.name]
        is_list = typing.get_origin(hint) is list
        item_type = typing.get_args(hint)[0] if is_list else hint
        items = value if is_list and isinstance(value, list) else [value]
        if is_list and not isinstance(value, list):
            errors.append(f"{flag}: expected a list, got {value!r}")
            continue
        if is_list and not value and not spec.metadata.get("allow_empty"):
            errors.append(f"{flag}: expected at least one value")
        if is_list and spec.metadata.get("unique") and len(set(map(repr, value))) < len(value):
            errors.append(f"{flag}: {' '.join(map(str, value))} repeats a value; list each one once")
        for item in items:
            if not _is_instance(item, item_type):
                errors.append(f"{flag}: expected {item_type.__name__}, got {item!r}")
            elif spec.metadata.get("choices") and item not in spec.metadata["choices"]:
                errors.append(f"{flag}: {item!r} is not one of {list(spec.metadata['choices'])}")
            elif item_type in (int, float) and (error := bound_error(item, spec.metadata.get("bounds") or {})):
                errors.append(f"{flag}: {error}")
    return errors


def _is_instance(value: object, kind: type) -> bool:
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def dataclass_parser(cls: type, description: str | None, *, suppress_defaults: bool = False) -> argparse.ArgumentParser:
    """One ``--flag`` per field of ``cls``: booleans get ``--x/--no-x``, lists take several values.

    With ``suppress_defaults`` a flag that is not given is absent from the result (``given_flags``).
    """
    parser = argparse.ArgumentParser(description=description, formatter_class=argparse.RawDescriptionHelpFormatter)
    hints = typing.get_type_hints(cls)
    for spec in dataclasses.fields(cls):
        default = spec.default_factory() if spec.default_factory is not dataclasses.MISSING else spec.default
        flag = "--" + spec.name.replace("_", "-")
        shown = " ".join(map(str, default)) if isinstance(default, list) else repr(default)
        bounds = spec.metadata.get("bounds") or {}
        limits = bounds_text(bounds)
        help_text = f"{spec.metadata['help']} (default: {shown}{'; ' + limits if limits else ''})"
        keywords: dict[str, Any] = {"default": argparse.SUPPRESS if suppress_defaults else default, "help": help_text}
        if isinstance(default, bool):
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **keywords)
            continue
        if isinstance(default, list):
            (item_type,) = typing.get_args(hints[spec.name])  # from the annotation: a default may be empty
            keywords["nargs"] = "*" if spec.metadata.get("allow_empty") else "+"
        else:
            item_type = type(default)
        keywords["type"] = bounded(item_type, bounds) if limits else item_type
        if spec.metadata.get("choices"):
            keywords["choices"] = list(spec.metadata["choices"])
        parser.add_argument(flag, **keywords)
    return parser


def network_errors(hidden_sizes: Sequence[int], inputs: int, outputs: int) -> list[str]:
    """Why the policy loader would refuse the MLP that ``--hidden-sizes`` makes between ``inputs`` and ``outputs``
    (its caps on hidden layers and on parameters), so that a run refuses it before building or training anything."""
    widths = " ".join(map(str, hidden_sizes))
    problems = []
    if len(hidden_sizes) > MAX_LAYERS - 1:
        problems.append(
            f"--hidden-sizes: {len(hidden_sizes)} hidden layers; the policy loader reads at most {MAX_LAYERS - 1} "
            "hidden layers"
        )
    parameters = parameter_count([inputs, *hidden_sizes, outputs])
    if parameters > MAX_PARAMETERS:
        problems.append(
            f"--hidden-sizes {widths}: the policy would have {parameters:,} parameters ({inputs} inputs, "
            f"{outputs} actions); allowed: at most {MAX_PARAMETERS:,} (the policy loader's cap)"
        )
    return problems


def rollout_error(sizes: str, rollout_bytes: int, fewer: str) -> str | None:
    """Why a rollout of ``rollout_bytes`` is refused (over ``MAX_ROLLOUT_BYTES``), or None: ``sizes`` names the flags
    that make it (``--num-tables 8 x --num-steps 64``), ``fewer`` what to reduce."""
    if rollout_bytes <= MAX_ROLLOUT_BYTES:
        return None
    return (
        f"{sizes}: {rollout_bytes / (1 << 30):,.1f} GiB of rollout arrays; allowed: at most "
        f"{MAX_ROLLOUT_BYTES >> 30} GiB (use fewer {fewer})"
    )


def sb3_rollout_bytes(deck: str, n_steps: int, num_envs: int) -> int:
    """Bytes of SB3's rollout buffer (``MaskableRolloutBuffer``) for ``n_steps`` steps of ``num_envs`` environments of
    the card game's ``deck``: per sample the observation, the action, the legal mask and six numbers, all float32,
    twice (its arrays are copied as they are shaped for the update). ``finetune_ppo.py`` and ``sb3_vector_env.py``
    check it with ``rollout_error``."""
    per_sample = 4 * (observation_scale(deck).size + 1 + get_deck(deck).num_actions + 6)
    return 2 * n_steps * num_envs * per_sample


def given_flags(cls: type, argv: Sequence[str] | None) -> set[str]:
    """The fields of ``cls`` that ``argv`` sets explicitly (as opposed to leaving them at their default)."""
    parser = dataclass_parser(cls, None, suppress_defaults=True)
    known, _ = parser.parse_known_args(argv)
    return set(vars(known))


def flag_name(field: str) -> str:
    return "--" + field.replace("_", "-")


def output_error(path: str | Path, *, directory: bool = False) -> str | None:
    """Why ``path`` cannot be written (a file, or with ``directory`` a folder), or None: checked before a long
    run, so that it does not end by losing its results. Nothing is created: the nearest existing folder on
    the way must be one that takes a new file."""
    problem = output_problem(path, directory=directory)
    if isinstance(problem, IsADirectoryError):
        return f"{path} is a directory"
    if isinstance(problem, NotADirectoryError):
        return f"{problem.filename} is a file, not a directory"
    if problem is not None:
        return f"cannot write in {problem.filename}: {problem.strerror or problem}"
    return None


def output_errors(outputs: Sequence[tuple[str, str | Path, bool]]) -> list[str]:
    """``"FLAG: problem"`` for each ``(flag, path, is_directory)`` output that cannot be written (``output_error``);
    an empty path asks for nothing."""
    problems = []
    for flag, path, directory in outputs:
        problem = output_error(path, directory=directory) if str(path) else None
        if problem:
            problems.append(f"{flag}: {problem}")
    return problems


def repository_path(name: str, repository: Path = REPOSITORY) -> Path:
    """``name`` as given if it exists there (or is absolute), else the same path under ``repository`` if that
    exists: so that a script's default pointing at a shipped checkpoint works from any directory."""
    path = Path(name)
    if not path.is_absolute() and not path.exists() and (repository / path).exists():
        return repository / path
    return path
