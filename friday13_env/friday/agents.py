"""Agents for Friday: uniform random, a rule-based heuristic, and trained policy checkpoints.

Protocol: ``agent.act(obs, mask) -> int`` with the environment's observation and int8/bool action
mask, plus ``agent.reset(seed)`` at the start of a game. Agents see only what the environment
exposes (the observation, decoded by :func:`friday13_env.friday.encoding.decode`, and the mask) and
the printed card data of :mod:`friday13_env.friday.cards`; never the engine state.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from friday13_env.friday import actions as A
from friday13_env.friday.cards import (
    AGING_TYPES,
    CARD_TYPES,
    KNOWLEDGE_TYPES,
    NUM_ABILITIES,
    Ability,
)
from friday13_env.friday.encoding import CARD_FEATURES, MAX_HAZARD_VALUE, decode
from friday13_env.friday.state import Phase
from friday13_env.policy import FRIDAY_ENV_VERSION, CheckpointError, MLPPolicy, read_policy


class Agent(Protocol):
    """What evaluation needs from an agent."""

    name: str

    def reset(self, seed: int | None = None) -> None:
        """Prepare for a new game (re-seed any randomness)."""

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Choose a legal action."""


class RandomAgent:
    """Uniform over the legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed (only when a seed is given, so a run of games stays reproducible)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """A uniformly random legal action."""
        return int(self.rng.choice(np.flatnonzero(mask)))


ABILITY_WORTH: dict[Ability, float] = {
    Ability.NONE: 0.0,
    Ability.LIFE_1: 2.0,
    Ability.LIFE_2: 4.0,
    Ability.CARD_1: 1.5,
    Ability.CARD_2: 2.0,
    Ability.DESTROY: 2.0,
    Ability.DOUBLE: 1.5,
    Ability.COPY: 1.0,
    Ability.STEP_DOWN: 0.5,
    Ability.SORT_3: 1.5,
    Ability.EXCHANGE_1: 1.0,
    Ability.EXCHANGE_2: 1.5,
    Ability.BELOW: 1.0,
}
"""Rough worth of an ability in fighting points, used to rank knowledge cards (life is scarce, so the
+life abilities weigh most)."""

_VALUES = np.array([t.value for t in CARD_TYPES], dtype=np.float64)
_COPIES = np.array([t.copies for t in CARD_TYPES], dtype=np.float64)
_AGING_VALUES = _VALUES[list(AGING_TYPES)]


@dataclass(frozen=True, slots=True)
class Card:
    """A fighting card as the observation shows it."""

    value: int
    aging: bool
    ability: Ability

    @property
    def badness(self) -> float:
        """How much removing the card from the deck helps (<= 0: keep it)."""
        if self.aging:
            return 3.0 - self.value
        if self.ability is not Ability.NONE or self.value > 0:
            return -1.0
        return 0.5 - self.value


@dataclass(frozen=True, slots=True)
class TableCard:
    """A table slot as the observation shows it."""

    slot: int
    card: Card
    paid: bool
    used: bool
    face_down: bool
    doubled: bool
    points: int


_TYPE_CARDS = tuple(Card(t.value, t.is_aging, t.ability) for t in CARD_TYPES)


def _cleanup(cards: list[Card], budget: int) -> float:
    """Worth of the bad cards that ``budget`` life points (paid for a lost fight) can destroy."""
    worth = 0.0
    for card in sorted(cards, key=lambda c: -c.badness / (2 if c.aging else 1)):
        cost = 2 if card.aging else 1
        if card.badness > 0 and cost <= budget:
            budget -= cost
            worth += card.badness
    return worth


def _scaled(x: float, scale: float) -> int:
    """Undo an observation's normalisation of an integer quantity."""
    return int(np.rint(x * scale))


def _card(features: np.ndarray) -> Card:
    """Decode the card features (present, value / 5, aging, ability one-hot)."""
    return Card(_scaled(features[1], 5), bool(features[2] > 0.5), Ability(int(np.argmax(features[3:]))))


def _table(view: dict[str, np.ndarray]) -> list[TableCard]:
    """The present table slots."""
    out = []
    for i, row in enumerate(view["slots"]):
        if row[0] < 0.5:
            break
        flags = row[CARD_FEATURES:]
        out.append(
            TableCard(
                i,
                _card(row[:CARD_FEATURES]),
                bool(flags[0] > 0.5),
                bool(flags[1] > 0.5),
                bool(flags[2] > 0.5),
                bool(flags[3] > 0.5),
                _scaled(flags[4], 10),
            )
        )
    return out


class HeuristicAgent:
    """Rule-based player: sensible hazard choice, cheap wins, deliberate losses that clean the deck.

    Main ideas: estimate the mean value of the next card from the known composition of the Robinson
    stack; pick the hazard with the best worth-minus-expected-cost; draw free cards until winning; use
    free abilities (life, cards, double, step -1, sort, exchange, destroy bad cards); when short after
    the free cards, buy only while the expected life cost is below the cost of losing (minus the worth
    of the cards that losing lets us destroy). Life costs grow as life runs low and dying is heavily
    penalised. The default weights come from a small random search on level-1 games (validated on
    other seeds).
    """

    name = "heuristic"

    def __init__(
        self,
        seed: int | None = None,
        life_margin: int = 0,
        samples: int = 24,
        worth_scale: tuple[float, ...] = (2.0, 3.5, 2.0, 0.5),
        clean_scale: tuple[float, ...] = (9.0, 3.5, 6.0, 0.3),
        scarcity: float = 1.5,
        death_cost: float = 60.0,
    ) -> None:
        self.scarcity = scarcity
        self.death_cost = death_cost
        self.life_margin = life_margin
        self.samples = samples
        self.worth_scale = worth_scale
        self.clean_scale = clean_scale
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the sampling generator (only when a seed is given)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    # ------------------------------------------------------------------ helpers on the observation

    @staticmethod
    def _draw_pool(view: dict[str, np.ndarray], needed: int) -> list[Card]:
        """The cards the next ``needed`` draws come from (stack, plus discard and an aging card when the
        stack is too short); unseen aging cards are represented by the pool they come from."""
        counts = np.rint(view["robinson_counts"] * _COPIES).astype(int)
        hidden = _scaled(view["counts"][8], 11)
        if counts.sum() + hidden < needed:
            counts = counts + np.rint(view["discard_counts"] * _COPIES).astype(int)
            hidden += 1
        pool = [_TYPE_CARDS[t] for t in range(len(counts)) for _ in range(counts[t])]
        aging = np.rint(view["aging_pool"] * _COPIES[list(AGING_TYPES)]).astype(int)
        aging_cards = [_TYPE_CARDS[t] for t, n in zip(AGING_TYPES, aging, strict=True) for _ in range(n)]
        for k in range(hidden):
            pool.append(aging_cards[k % len(aging_cards)] if aging_cards else _TYPE_CARDS[AGING_TYPES[1]])
        return pool

    @staticmethod
    def _mean_next(view: dict[str, np.ndarray]) -> float:
        """Expected fighting value of the next card drawn."""
        pool = HeuristicAgent._draw_pool(view, 3)
        return float(np.mean([c.value for c in pool])) if pool else 0.0

    def _worth(self, view: dict[str, np.ndarray], hazard_type: np.ndarray) -> float:
        """Worth, in life points, of winning the knowledge card whose type one-hot is given: printed
        value plus ability, scaled by how often it will still be drawn (less in later steps)."""
        ktype = CARD_TYPES[KNOWLEDGE_TYPES[int(np.argmax(hazard_type))]]
        return (ktype.value + ABILITY_WORTH[ktype.ability]) * self.worth_scale[self._step(view)]

    @staticmethod
    def _step(view: dict[str, np.ndarray]) -> int:
        """0-2 hazard steps, 3 pirates."""
        return int(np.argmax(view["step"]))

    def _cleanup(self, view: dict[str, np.ndarray], cards: list[Card], budget: int) -> float:
        """Worth of destroying bad cards with a lost fight's payment, scaled by the step."""
        return _cleanup(cards, budget) * self.clean_scale[self._step(view)]

    def _life_cost(self, life: float, paid: float) -> float:
        """Cost of paying ``paid`` life points from ``life``: dearer when life runs low, fatal below 0."""
        if paid > life:
            return self.death_cost
        return paid * (1.0 + self.scarcity / (life - paid + 1.0))

    def _fight_value(self, view: dict[str, np.ndarray], free: int, value: int, worth: float) -> float:
        """Monte-Carlo value of fighting a hazard: knowledge worth if won, else the cheaper of buying
        the missing points or losing (paying the difference, destroying bad drawn cards with it)."""
        pool = self._draw_pool(view, free)
        life = float(view["life"][0] * 22)
        if not pool:
            return worth if value <= 0 else -self._life_cost(life, value)
        mean = max(float(np.mean([c.value for c in pool])), 0.0)
        total = 0.0
        for _ in range(self.samples):
            picks = self.rng.choice(len(pool), size=min(free, len(pool)), replace=False)
            cards = [pool[i] for i in picks]
            points = sum(c.value for c in cards)
            if points >= value:
                total += worth
                continue
            deficit = value - points
            outcome = self._cleanup(view, cards, deficit) - self._life_cost(life, deficit)
            if mean > 0.3:
                bought = math.ceil(deficit / mean)
                outcome = max(outcome, worth - self._life_cost(life, bought))
            total += outcome
        return total / self.samples

    def _option_value(self, view: dict[str, np.ndarray], row: np.ndarray) -> float:
        """Value of fighting an offered hazard (see :meth:`_fight_value`)."""
        worth = self._worth(view, row[1 : 1 + len(KNOWLEDGE_TYPES)])
        return self._fight_value(view, _scaled(row[-2], 5), _scaled(row[-1], 14), worth)

    # ------------------------------------------------------------------ the policy

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """Choose a legal action by the rules of thumb above."""
        view = decode(np.asarray(obs))
        legal = {int(a) for a in np.flatnonzero(mask)}
        phase = Phase(int(np.argmax(view["phase"])))
        choice = self._decide(view, legal, phase)
        return choice if choice in legal else min(legal)

    def _decide(self, view: dict[str, np.ndarray], legal: set[int], phase: Phase) -> int:
        """Dispatch on the phase."""
        if phase is Phase.CHOOSE_HAZARD:
            a, b = (self._option_value(view, row) for row in view["options"])
            return A.HAZARD_A if a >= b else A.HAZARD_B
        if phase is Phase.LAST_HAZARD:
            return A.FIGHT_LAST if self._option_value(view, view["options"][0]) > -1.0 else A.SKIP_LAST
        if phase is Phase.CHOOSE_PIRATE:
            return self._choose_pirate(view, self._mean_next(view))
        table = _table(view)
        if phase is Phase.FIGHT:
            return self._fight(view, legal, table, self._mean_next(view))
        if phase is Phase.TARGET:
            return self._target(view, legal, table, self._mean_next(view))
        if phase is Phase.EXTRA_DRAW:
            return A.DONE if self._winning(view) else A.CONTINUE
        if phase is Phase.SORT_LOOK:
            return self._sort_look(view, legal)
        if phase is Phase.SORT_ORDER:
            return self._sort_order(view, legal)
        return self._loss_destroy(legal, table)

    @staticmethod
    def _winning(view: dict[str, np.ndarray]) -> bool:
        """The fight block's »winning« flag."""
        return bool(view["fight"][-3] > 0.5)

    @staticmethod
    def _deficit(view: dict[str, np.ndarray]) -> int:
        """Points still missing to win the fight."""
        return _scaled(view["fight"][-2], MAX_HAZARD_VALUE)

    @staticmethod
    def _choose_pirate(view: dict[str, np.ndarray], mean: float) -> int:
        """Fight the pirate that looks easier first (more life left for the harder one is no help:
        life is shared, but an early easy win keeps the deck cycling on good cards)."""
        costs = [row[-1] * MAX_HAZARD_VALUE - row[-2] * 70 * max(mean, 0.0) for row in view["pirates"]]
        return A.PIRATE_A if costs[0] <= costs[1] else A.PIRATE_B

    def _fight(self, view: dict[str, np.ndarray], legal: set[int], table: list[TableCard], mean: float) -> int:
        """Main fight decisions, in order of priority."""
        life = view["life"][0] * 22
        winning = self._winning(view)
        usable = {t.card.ability: A.ACTIVATE + t.slot for t in table if A.ACTIVATE + t.slot in legal}
        bad = [t for t in table if not t.face_down and t.card.badness > 0]
        for ability in (Ability.LIFE_1, Ability.LIFE_2):
            if ability in usable and life < 22:
                return usable[ability]
        if Ability.DESTROY in usable and bad:
            return usable[Ability.DESTROY]
        if winning:
            return A.END_FIGHT
        if Ability.STEP_DOWN in usable:
            return usable[Ability.STEP_DOWN]
        if Ability.DOUBLE in usable and any(t.points >= 1 and not t.doubled for t in table):
            return usable[Ability.DOUBLE]
        worst = min((t.points for t in table if not t.face_down), default=0)
        for ability in (Ability.EXCHANGE_2, Ability.EXCHANGE_1, Ability.BELOW):
            if ability in usable and worst < mean - 0.5:
                return usable[ability]
        for ability in (Ability.CARD_2, Ability.CARD_1, Ability.COPY):
            if ability in usable:
                return usable[ability]
        if Ability.SORT_3 in usable and (A.DRAW_FREE in legal or A.BUY in legal):
            return usable[Ability.SORT_3]
        if A.DRAW_FREE in legal:
            return A.DRAW_FREE
        if A.BUY in legal and self._should_buy(view, table, mean, life):
            return A.BUY
        if A.END_FIGHT in legal:
            return A.END_FIGHT
        return A.BUY

    def _should_buy(self, view: dict[str, np.ndarray], table: list[TableCard], mean: float, life: float) -> bool:
        """Buy one more card when winning that way is expected to be cheaper than losing."""
        fight = view["fight"]
        if fight[1] > 0.5:  # pirate: losing is not an option
            return True
        deficit = self._deficit(view)
        if mean <= 0.05:
            return False
        cards_needed = math.ceil(deficit / mean)
        worth = self._worth(view, fight[2 : 2 + len(KNOWLEDGE_TYPES)])
        cleanup = self._cleanup(view, [t.card for t in table if not t.face_down], deficit)
        if life - cards_needed < self.life_margin:
            return False
        return worth - self._life_cost(life, cards_needed) > cleanup - self._life_cost(life, deficit)

    def _target(self, view: dict[str, np.ndarray], legal: set[int], table: list[TableCard], mean: float) -> int:
        """Targets of destroy, double, copy, exchange and below."""
        ability = Ability(int(np.argmax(view["pending"][:NUM_ABILITIES])))
        candidates = [t for t in table if A.TARGET + t.slot in legal]
        if ability is Ability.DOUBLE:
            return A.TARGET + max(candidates, key=lambda t: t.points).slot
        if ability is Ability.COPY:
            order = [Ability.DOUBLE, Ability.CARD_2, Ability.CARD_1, Ability.EXCHANGE_2, Ability.EXCHANGE_1]
            order += [Ability.DESTROY, Ability.SORT_3, Ability.STEP_DOWN, Ability.LIFE_2, Ability.LIFE_1]
            order += [Ability.BELOW]
            return A.TARGET + min(candidates, key=lambda t: order.index(t.card.ability)).slot
        worst = min(candidates, key=lambda t: (t.points - 3 * t.card.aging, t.paid))
        if A.DONE in legal and (self._winning(view) or worst.points >= mean - 0.5):
            return A.DONE
        return A.TARGET + worst.slot

    @staticmethod
    def _sort_look(view: dict[str, np.ndarray], legal: set[int]) -> int:
        """Look at as many cards as allowed, then discard the worst if it is bad."""
        if A.CONTINUE in legal:
            return A.CONTINUE
        looked = [_card(view["looked"][k * CARD_FEATURES : (k + 1) * CARD_FEATURES]) for k in range(3)]
        scored = [(c.value - 3 * c.aging, k) for k, c in enumerate(looked) if A.SORT_DISCARD + k in legal]
        value, k = min(scored)
        return A.SORT_DISCARD + k if value < 0 else A.DONE

    @staticmethod
    def _sort_order(view: dict[str, np.ndarray], legal: set[int]) -> int:
        """Best card first."""
        looked = [_card(view["looked"][k * CARD_FEATURES : (k + 1) * CARD_FEATURES]) for k in range(3)]
        scored = [(c.value - 3 * c.aging, k) for k, c in enumerate(looked) if A.SORT_TOP + k in legal]
        return A.SORT_TOP + max(scored)[1]

    @staticmethod
    def _loss_destroy(legal: set[int], table: list[TableCard]) -> int:
        """Destroy the worst affordable card while it is worth removing."""
        candidates = [t for t in table if A.TARGET + t.slot in legal and t.card.badness > 0]
        if not candidates:
            return A.DONE
        return A.TARGET + max(candidates, key=lambda t: t.card.badness).slot


class PolicyAgent:
    """Plays a trained Friday policy checkpoint (see :mod:`friday13_env.policy`) with numpy only.

    Greedy by default: the legal action with the highest logit; ``greedy=False`` samples from the
    softmax over the legal actions with its own seeded generator.
    """

    def __init__(self, policy: MLPPolicy, name: str = "policy", seed: int | None = None, greedy: bool = True) -> None:
        if policy.metadata.env_version != FRIDAY_ENV_VERSION:
            raise CheckpointError(
                f"policy {name!r} was trained for {policy.metadata.env_version!r}, not {FRIDAY_ENV_VERSION!r}"
            )
        self.policy = policy
        self.name = name
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        """Re-seed the sampling generator (only when a seed is given)."""
        if seed is not None:
            self.rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The policy's choice among the legal actions."""
        return self.policy.choose(obs, np.flatnonzero(mask), None if self.greedy else self.rng)


def load_policy(path: str | Path, seed: int | None = None, greedy: bool = True) -> PolicyAgent:
    """A :class:`PolicyAgent` from a ``.npz`` checkpoint; ``CheckpointError`` says what is wrong with a bad file
    (missing, corrupt, another layout, or a Friday the 13th policy)."""
    policy = read_policy(path)
    if policy.metadata.env_version != FRIDAY_ENV_VERSION:
        raise CheckpointError(
            f"{path} is a {policy.metadata.env_version!r} policy (the Friday the 13th card game), "
            f"not a {FRIDAY_ENV_VERSION!r} one: it cannot play Friday"
        )
    return PolicyAgent(policy, name=Path(path).stem, seed=seed, greedy=greedy)


def is_checkpoint_path(name: str) -> bool:
    """Whether ``make_agent`` reads ``name`` as a checkpoint path rather than a baseline name."""
    return name.endswith(".npz") or os.sep in name or "/" in name or Path(name).is_file()


def make_agent(name: str, seed: int | None = None) -> Agent:
    """Agent by name (``random`` or ``heuristic``) or by the path of a trained policy checkpoint (``.npz``)."""
    agents: dict[str, type[RandomAgent] | type[HeuristicAgent]] = {
        "random": RandomAgent,
        "heuristic": HeuristicAgent,
    }
    if name in agents:
        return agents[name](seed)
    if is_checkpoint_path(name):
        return load_policy(name, seed)
    raise ValueError(f"unknown agent {name!r}; allowed: {sorted(agents)} or the path of a .npz policy checkpoint")


__all__ = ["Agent", "HeuristicAgent", "PolicyAgent", "RandomAgent", "load_policy", "make_agent"]
