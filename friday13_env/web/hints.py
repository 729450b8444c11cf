"""Hints: what the strongest agent would play in a position, and how sure it is.

The adviser of each table is the strongest agent that can sit there (``docs/leaderboard.md``): ``ppo-v4`` for the
standard deck (the highest ``card-sizes`` score, over every table size), ``search`` for the German deck (no network
is trained on it) and ``dagger-ppo-v1`` for the solo game (the highest win rate at every level).

How sure it is, in the adviser's own terms:

* a policy network gives a probability to every legal move: the hint is its most likely move, and the
  probabilities are shown;
* a search agent gives one move per search, which depends on the futures it sampled: the hint runs
  ``SEARCHES`` independent searches (seeds fixed by the position's number, so a hint is reproducible) and
  reports how often each move was chosen.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from friday13_env.core.agent import Agent, Observation
from friday13_env.core.mlp import PolicyAgent

CARD_ADVISERS = {"standard": "ppo-v4", "german": "search"}
"""The card game's adviser for each deck."""
SOLO_ADVISER = "dagger-ppo-v1"
SEARCHES = 8
"""Independent searches behind a search agent's hint."""


@dataclass(frozen=True)
class Hint:
    agent: str
    action: int
    share: float
    """The network's probability of the move, or the share of the searches that chose it."""
    basis: str
    """``"probability"`` or ``"searches"``: what ``share`` is."""
    options: list[tuple[int, float]]
    """Every move the adviser considered, with its share, most likely first."""

    def to_dict(self, label: Callable[[int], str]) -> dict[str, Any]:
        if self.basis == "probability":
            sure = f"{self.agent} gives it {self.share:.0%} probability"
        else:
            sure = f"{round(self.share * SEARCHES)} of {SEARCHES} {self.agent} runs chose it"
        return {
            "agent": self.agent,
            "action": self.action,
            "label": label(self.action),
            "share": self.share,
            "basis": self.basis,
            "runs": SEARCHES if self.basis == "searches" else None,
            "text": f"{self.agent} would play {label(self.action)}: {sure}.",
            "options": [{"action": action, "label": label(action), "share": share} for action, share in self.options],
        }


def advise(make: Callable[..., Agent], name: str, observation: Observation, seed: int) -> Hint:
    """The hint of the agent ``make(name, seed=...)`` for ``observation`` (see the module doc)."""
    adviser = make(name, seed=seed)
    if isinstance(adviser, PolicyAgent):
        legal, logits = adviser.legal_logits(observation)
        probabilities = np.exp(logits - logits.max())
        probabilities /= probabilities.sum()
        order = np.argsort(-probabilities, kind="stable")
        options = [(int(legal[i]), float(probabilities[i])) for i in order]
        return Hint(name, options[0][0], options[0][1], "probability", options)
    picks = Counter([adviser.act(observation)])
    for run in range(1, SEARCHES):
        picks[make(name, seed=seed + run).act(observation)] += 1
    options = [(int(action), count / SEARCHES) for action, count in picks.most_common()]
    return Hint(name, options[0][0], options[0][1], "searches", options)
