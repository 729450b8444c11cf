"""Determinised Monte-Carlo search for Friday, on top of the rule-based expert.

At each real decision (which hazard or pirate, skip the last hazard, draw / buy / end in a fight, stop
destroying after a lost fight) the search compares a few candidate actions: the expert's own choice and
the strategic alternatives. Each candidate is played on ``budget`` determinisations of the state (the
unknown orders resampled, :func:`friday13_env.friday.agents.belief.redeal`), continued by the expert until
``horizon`` fights are over (1: the current or chosen fight; or the game ends), and scored by the
expert's position value (the win model's chance to win). All candidates see the same determinisations
and random draws (common random numbers), and an alternative replaces the expert's move only when its
paired gain is clearly positive (see :meth:`SearchPolicy.choose`).
"""

from __future__ import annotations

import numpy as np

from friday13_env.core.agent import Observation
from friday13_env.core.options import count_option, number_option
from friday13_env.core.registry import check_seed
from friday13_env.friday import actions as A
from friday13_env.friday import engine
from friday13_env.friday.agents.belief import observed_state, redeal
from friday13_env.friday.agents.expert import MAX_SAMPLES, ExpertPolicy
from friday13_env.friday.agents.value import WinModel, shipped_model
from friday13_env.friday.state import Phase, State
from friday13_env.friday.strength import fight_target, fight_total

_CHOICE_PHASES = (Phase.CHOOSE_HAZARD, Phase.LAST_HAZARD, Phase.CHOOSE_PIRATE)
_FIGHT_ALTERNATIVES = (A.DRAW_FREE, A.BUY, A.END_FIGHT)


class SearchPolicy:
    """Chooses by comparing candidate actions over sampled futures (see the module doc)."""

    def __init__(
        self,
        rng: np.random.Generator,
        budget: int = 8,
        horizon: int = 1,
        rollout_samples: int = 2,
        model: WinModel | None = None,
        margin: float = 1.0,
    ) -> None:
        if budget < 1 or horizon < 1 or rollout_samples < 1:
            raise ValueError(
                f"budget, horizon and rollout_samples must be at least 1, got {budget}, {horizon}, {rollout_samples}"
            )
        self.rng = rng
        self.budget = budget
        self.horizon = horizon
        self.margin = margin
        self.rollout_samples = rollout_samples
        self.model = model or shipped_model()
        self.expert = ExpertPolicy(rng, samples=rollout_samples, model=self.model)

    def candidates(self, state: State, legal: list[int], default: int) -> list[int]:
        """The actions worth comparing: both options of a choice, the strategic fight moves, stop or not."""
        if state.phase in _CHOICE_PHASES:
            return legal
        if state.phase is Phase.FIGHT:
            fight = state.fight
            assert fight is not None
            if fight_total(fight) >= fight_target(state):  # drawing more cannot help a won fight
                return [default]
            return [default] + [a for a in _FIGHT_ALTERNATIVES if a in legal and a != default]
        if state.phase is Phase.LOSS_DESTROY and default != A.DONE:
            return [default, A.DONE]
        return [default]

    def rollout(self, state: State, action: int, seed: int) -> float:
        """Value after ``action`` and the expert's play until ``horizon`` fights are over."""
        rng = np.random.default_rng(seed)
        expert = ExpertPolicy(rng, samples=self.rollout_samples, model=self.model)
        sim = state.copy()
        redeal(sim, rng)
        engine.apply_action(sim, action, rng)
        fights = 0
        while not sim.done:
            if sim.fight is None and sim.phase in _CHOICE_PHASES:
                fights += 1
                if fights >= self.horizon:
                    break
            engine.apply_action(sim, expert.choose(sim), rng)
        return expert.value(sim)

    def choose(self, state: State) -> int:
        """The expert's move, unless an alternative is clearly better over the same sampled futures.

        »Clearly«: its mean gain over the expert's move, paired future by future, exceeds both
        ``margin`` (in win-chance percentage points) and two standard errors. Taking the best of a few
        noisy means would otherwise favour whichever alternative got lucky draws.
        """
        legal = engine.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        default = self.expert.choose(state)
        options = self.candidates(state, legal, default)
        if len(options) == 1:
            return default
        seeds = [int(s) for s in self.rng.integers(0, 2**63, size=self.budget)]
        values = np.array([[self.rollout(state, a, s) for s in seeds] for a in options])
        gains = values[1:] - values[0]
        means = gains.mean(axis=1)
        errors = gains.std(axis=1, ddof=1) / np.sqrt(len(seeds)) if len(seeds) > 1 else np.zeros(len(means))
        best = int(np.argmax(means))
        if means[best] > max(self.margin, 2.0 * errors[best]):
            return options[best + 1]
        return default


class SearchAgent:
    """:class:`SearchPolicy` as an agent (observation dict in, action out).

    ``budget``: sampled futures per candidate action; ``horizon``: fights each future is played for;
    ``rollout_samples``: the expert's own Monte-Carlo plays per hazard inside the futures; ``margin``: the
    gain in win-chance points an alternative needs over the expert's move; ``model``: the win model
    (default: the shipped one).
    """

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        budget: int = 8,
        horizon: int = 1,
        rollout_samples: int = 2,
        model: WinModel | None = None,
        margin: float = 1.0,
    ) -> None:
        if model is not None and not isinstance(model, WinModel):
            raise ValueError(f"model must be a WinModel or None (the shipped model), got {model!r}")
        self.options = {
            "budget": count_option("budget", budget, maximum=MAX_SAMPLES, owner=self.name),
            "horizon": count_option("horizon", horizon, owner=self.name),  # past the game's end it plays to the end
            "rollout_samples": count_option("rollout_samples", rollout_samples, maximum=MAX_SAMPLES, owner=self.name),
            "model": model,
            "margin": number_option("margin", margin),
        }
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Optional hook: re-seed for a new game (only when a seed is given, or at construction).
        Building a new agent with ``make("search", seed=...)`` is the same."""
        check_seed(seed)
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            self.policy = SearchPolicy(self.rng, **self.options)  # type: ignore[arg-type]

    def act(self, observation: Observation) -> int:
        """The searched move in a determinisation of the observation."""
        state, legal = observed_state(observation, self.rng, self.name)  # a mask not the observation's: ValueError
        action = self.policy.choose(state)
        if action not in legal:  # the position's own legal actions are the mask's: this would be a bug of the policy
            raise RuntimeError(f"search chose illegal action {action}; legal: {legal.tolist()}")
        return action
