"""Speed of random legal play: the engine alone, ``raw_env``, ``env()`` and PettingZoo's classics.

Every environment is driven by the same AEC harness (``last()``, sample a legal action from the
mask with one seeded Generator, ``step()``), so the ratios compare environments, not harnesses.
The engine alone is driven directly (``legal_actions`` + ``play``), with its random numbers drawn
in batches, because that is how search agents use it.

Run: ``python -m benchmarks.bench_env`` (needs the ``bench`` extra for tictactoe/connect four).
Figures are machine-dependent: quote the ratios, measured side by side in one run.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.arguments import COUNT, DECK_NAMES, PLAYER_COUNTS, POSITIVE, SEED
from friday13_env import friday13_v0
from friday13_env.friday13.cards import get_deck
from friday13_env.friday13.engine import Rules, legal_actions, new_game, next_round, play


def aec_steps(make_env: Callable[[], Any], seconds: float, seed: int) -> tuple[int, float]:
    """Random legal play through an AEC env for about ``seconds``: (card plays, elapsed)."""
    env = make_env()
    rng = np.random.default_rng(seed)
    steps = 0
    game = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        env.reset(seed=seed + game)
        game += 1
        for _agent in env.agent_iter():
            observation, _, terminated, truncated, _ = env.last()
            if terminated or truncated:
                action = None
            else:
                legal = np.flatnonzero(observation["action_mask"])
                action = int(legal[rng.integers(legal.size)])
                steps += 1
            env.step(action)
    return steps, time.perf_counter() - start


def engine_steps(num_players: int, deck: str, seconds: float, seed: int) -> tuple[int, float]:
    """Random legal play through the bare engine: (card plays, elapsed)."""
    rules = Rules(num_players=num_players, deck=get_deck(deck))
    rng = np.random.default_rng(seed)
    steps = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        state = new_game(rules, rng)
        uniforms = rng.random(rules.cards_per_round * rules.num_rounds).tolist()
        while True:
            legal = legal_actions(state)
            play(state, legal[int(uniforms[steps % len(uniforms)] * len(legal))])
            steps += 1
            if state.round_over:
                if state.game_over:
                    break
                next_round(state, rng)
    return steps, time.perf_counter() - start


def ratio(rate: float, reference: float, digits: int) -> str:
    """``rate`` as a multiple of ``reference`` (``"1.25x"``), or ``"n/a"`` where the reference measured nothing (a
    slice too short for one step): a table row, never a division by zero after the measuring."""
    return f"{rate / reference:.{digits}f}x" if reference else "n/a"


Rate = Callable[[float], tuple[int, float]]
"""A candidate of a side-by-side measurement: run for about so many seconds, return (count, seconds taken)."""


def interleaved(candidates: dict[str, Rate], seconds: float, repeats: int) -> dict[str, float]:
    """Median rate of each candidate over ``repeats`` interleaved slices, so load bursts hit all alike."""
    rates: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, run in candidates.items():
            count, elapsed = run(seconds / repeats)
            rates[name].append(count / elapsed if elapsed > 0 else 0.0)  # a slice too short for the clock: none
    return {name: float(np.median(values)) for name, values in rates.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=POSITIVE, default=5.0, help="time per environment in all (default 5)")
    parser.add_argument("--repeats", type=COUNT, default=5, help="interleaved slices per environment (default 5)")
    parser.add_argument(
        "--players", type=int, choices=PLAYER_COUNTS, default=4, help="Friday the 13th player count (default 4)"
    )
    parser.add_argument(
        "--deck", choices=DECK_NAMES, default="standard", help="the card game's deck (default standard)"
    )
    parser.add_argument("--seed", type=SEED, default=0)
    args = parser.parse_args()

    options = {"num_players": args.players, "deck": args.deck}
    candidates: dict[str, Callable[[float], tuple[int, float]]] = {
        "engine (friday13)": lambda t: engine_steps(args.players, args.deck, t, args.seed),
        "raw_env (friday13_v0)": lambda t: aec_steps(lambda: friday13_v0.raw_env(**options), t, args.seed),
        "env() (friday13_v0)": lambda t: aec_steps(lambda: friday13_v0.env(**options), t, args.seed),
    }
    try:
        from pettingzoo.classic import connect_four_v3, tictactoe_v3
    except ImportError as error:  # pygame is only needed for the reference environments
        print(f"skipping PettingZoo classics ({error}); install the 'bench' extra")
    else:
        candidates["tictactoe_v3.env()"] = lambda t: aec_steps(tictactoe_v3.env, t, args.seed)
        candidates["connect_four_v3.env()"] = lambda t: aec_steps(connect_four_v3.env, t, args.seed)
    results = interleaved(candidates, args.seconds, args.repeats)
    reference = results.get("tictactoe_v3.env()")
    print(f"Random legal play, {args.players} players, {args.deck} deck, median of {args.repeats} interleaved slices")
    print(f"| {'environment':<24} | {'steps/s':>10} | {'vs tictactoe_v3':>15} |")
    print(f"|{'-' * 26}|{'-' * 12}|{'-' * 17}|")
    for name, rate in results.items():
        print(f"| {name:<24} | {rate:>10,.0f} | {ratio(rate, reference or 0.0, 2):>15} |")


if __name__ == "__main__":
    main()
