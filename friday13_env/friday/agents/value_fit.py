"""Fit the win model of :mod:`friday13_env.friday.agents.value` on games of the rule-based expert.

``python -m friday13_env.friday.agents.value_fit --games 2000 --seed 0 [--model FILE]`` plays that many games
(levels 1-4 in turn, deals disjoint from the evaluation's) with the expert (using the win model in FILE,
or the hand-set position value without one: fitting on the games of the previous fit's expert is one
round of policy iteration), records the public features of every position where a
hazard or pirate is chosen, labels each with the game's result, fits one L2-regularised logistic
regression per step by Newton's method and writes ``value_weights.json``.

Bad arguments (no games, no samples, a penalty that is negative, NaN or infinite, an output that cannot be
written) are refused before any game. A step of which the games reached no position cannot be fitted: the run
then ends with an error and writes nothing (play more games). The file is written atomically and holds no NaN.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from friday13_env.core.files import atomic_write_text, output_problem
from friday13_env.core.specs import non_negative_argument, path_argument, positive_argument, shown
from friday13_env.friday import engine
from friday13_env.friday.agents.expert import ExpertPolicy
from friday13_env.friday.agents.value import FEATURE_NAMES, NUM_FEATURES, WEIGHTS_FILE, WinModel, features
from friday13_env.friday.cards import STEP_NAMES
from friday13_env.friday.evaluation import game_seed
from friday13_env.friday.state import Phase

_CHOICES = (Phase.CHOOSE_HAZARD, Phase.LAST_HAZARD, Phase.CHOOSE_PIRATE)


def penalty_argument(text: str) -> float:
    """``--l2``: a finite number >= 0 (a NaN or infinite penalty makes every coefficient NaN)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"must be a finite number >= 0, got {shown(text.strip())}")
    return value


def collect(games: int, seed: int, samples: int, model: WinModel | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Features, step and final result (1 = won) of every choice position in ``games`` expert games."""
    rows: list[np.ndarray] = []
    steps: list[int] = []
    labels: list[float] = []
    for game in range(games):
        rng = np.random.default_rng(game_seed(seed + 7_919, game))
        state = engine.new_game(1 + game % 4, rng)
        policy = ExpertPolicy(rng, samples=samples, model=model)
        start = len(rows)
        while not state.done:
            if state.phase in _CHOICES:
                rows.append(features(state))
                steps.append(min(state.step, 3))
            engine.apply_action(state, policy.choose(state), rng)
        labels.extend([float(bool(state.won))] * (len(rows) - start))
    return np.array(rows), np.array(steps), np.array(labels)


def fit_logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iterations: int = 30) -> np.ndarray:
    """L2-regularised logistic regression (the bias is not penalised), by Newton's method."""
    w = np.zeros(x.shape[1])
    penalty = np.full(x.shape[1], l2)
    penalty[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + penalty * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(penalty) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def main(argv: list[str] | None = None) -> int:
    """Collect, fit per step, report accuracy, write the weights file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=positive_argument, default=1500)
    parser.add_argument("--seed", type=non_negative_argument, default=0)
    parser.add_argument(
        "--samples", type=positive_argument, default=4, help="the expert's Monte-Carlo plays per hazard"
    )
    parser.add_argument("--l2", type=penalty_argument, default=1.0, help="the L2 penalty (a finite number >= 0)")
    parser.add_argument(
        "--model",
        type=path_argument,
        default=None,
        help="win model the expert plays with while collecting (default: none, the hand-set position value)",
    )
    parser.add_argument("--out", type=path_argument, default=WEIGHTS_FILE)
    args = parser.parse_args(argv)
    problem = output_problem(args.out)
    if problem is not None:
        parser.error(f"argument --out: cannot write {args.out}: {problem}")
    start = time.perf_counter()
    try:
        model = None if args.model is None else WinModel.load(args.model)
    except (OSError, ValueError) as error:
        parser.error(f"argument --model: {error}")
    x, steps, y = collect(args.games, args.seed, args.samples, model)
    coefficients = np.zeros((4, NUM_FEATURES))
    report = {}
    for step in range(4):
        rows = steps == step
        if not rows.any():
            parser.error(
                f"no position of step {step} ({STEP_NAMES[step]}) in {args.games} games; play more games "
                f"(nothing was written to {args.out})"
            )
        coefficients[step] = fit_logistic(x[rows], y[rows], args.l2)
        if not np.isfinite(coefficients[step]).all():
            parser.error(
                f"the fit of step {step} ({STEP_NAMES[step]}) diverged (coefficients that are not finite); give "
                f"--l2 above {args.l2} (nothing was written to {args.out})"
            )
        p = 1.0 / (1.0 + np.exp(-(x[rows] @ coefficients[step])))
        report[step] = {
            "positions": int(rows.sum()),
            "win_share": float(y[rows].mean()),
            "log_loss": float(-np.mean(y[rows] * np.log(p + 1e-12) + (1 - y[rows]) * np.log(1 - p + 1e-12))),
        }
    data = {
        "features": list(FEATURE_NAMES),
        "coefficients": np.round(coefficients, 6).tolist(),
        "fitted_on": {
            "games": args.games,
            "seed": args.seed,
            "samples": args.samples,
            "l2": args.l2,
            "played_with": None if args.model is None else args.model.name,
        },
        "fit": report,
    }
    atomic_write_text(args.out, json.dumps(data, indent=1, allow_nan=False) + "\n")
    print(json.dumps(report, indent=1), f"{time.perf_counter() - start:.0f} s", sep="\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
