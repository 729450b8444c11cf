"""Rule-based Friday player that reasons with the engine's own arithmetic on a (determinised) state.

It reads only what the player may know: the table, life, piles by composition, the cards whose place on
the Robinson stack is known. The *order* of the face-down stacks and the identity of the aging cards
hidden in the Robinson stack are never used, so it plays the same on every determinisation of an
observation (see :mod:`friday13_env.friday.agents.belief`), except where it samples on purpose.

How it plays, in short:

* **Position value** (:meth:`ExpertPolicy.value`): the chance to win predicted by the learned win model
  (:mod:`friday13_env.friday.agents.value`), which the agents always use. Without a model, a hand-set value
  stands in (it only bootstraps the first fit of the model): each owned card is worth its fighting value
  plus its ability minus a reference, times how often it will still be drawn; life has a concave value
  and death is a large loss.
* **Hazard choice**: a few Monte-Carlo plays of each offered fight with this policy on copies of the
  state (unknown orders resampled), compared by the position value afterwards. The same for fighting or
  skipping a lone last hazard and for the order of the pirates (by the chance of beating both).
* **In a fight**: gain life, destroy bad cards, step down, put the worst card away (exchange / below),
  draw free cards while short, then +cards, sort, double and copy; when the free cards are spent and
  points are missing, buy a card only while winning the knowledge card is expected to beat losing on
  purpose (paying the difference and destroying the worst drawn cards with it); against pirates, buy
  until the points suffice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from friday13_env.core.agent import Observation
from friday13_env.core.options import count_option
from friday13_env.core.registry import check_seed
from friday13_env.friday import actions as A
from friday13_env.friday import engine
from friday13_env.friday.abilities import targets
from friday13_env.friday.agents.belief import observed_state, redeal
from friday13_env.friday.agents.value import WinModel, shipped_model
from friday13_env.friday.cards import CARD_TYPES, TYPE_OF, Ability, card_type
from friday13_env.friday.state import Phase, State
from friday13_env.friday.strength import aging_life_cost, fight_target, fight_total, slot_values

ABILITY_WORTH: dict[Ability, float] = {
    Ability.NONE: 0.0,
    Ability.LIFE_1: 1.5,
    Ability.LIFE_2: 2.5,
    Ability.CARD_1: 1.5,
    Ability.CARD_2: 2.5,
    Ability.DESTROY: 2.0,
    Ability.DOUBLE: 2.0,
    Ability.COPY: 1.5,
    Ability.STEP_DOWN: 1.0,
    Ability.SORT_3: 1.5,
    Ability.EXCHANGE_1: 1.0,
    Ability.EXCHANGE_2: 1.5,
    Ability.BELOW: 1.0,
    Ability.AGING_LIFE_1: -1.5,
    Ability.AGING_LIFE_2: -3.0,
    Ability.HIGHEST_ZERO: -2.0,
    Ability.STOP: -1.5,
}
"""What an ability adds to a card's worth, in fighting points (aging abilities subtract)."""

MAX_SAMPLES = 10_000
"""The most Monte-Carlo plays an option of the solo agents may ask for per choice (``samples``; ``search``'s ``budget``
and ``rollout_samples``): over a thousand times the defaults, a move of minutes; more is refused before it allocates
a sample per play."""

CARD_WORTH = np.array([t.value + ABILITY_WORTH[t.ability] for t in CARD_TYPES])
"""Worth of each card type in the deck: printed value plus ability."""


@dataclass(frozen=True, slots=True)
class Weights:
    """Constants of the hand-set position value and of the fight rules of thumb (buying, destroying)."""

    reference: float = 1.5
    """Worth of a card that is neither an asset nor a liability (an average future draw)."""
    draws_left: tuple[float, float, float, float] = (4.0, 3.0, 2.0, 1.0)
    """How many more times a card is expected to matter, by step (green, yellow, red, pirates)."""
    life: float = 1.0
    """Value of one life point when life is plentiful."""
    scarcity: float = 8.0
    """Extra value of life points below ``low_life`` (quadratic in the shortfall)."""
    low_life: float = 8.0
    death: float = 200.0


def worth(card: int) -> float:
    """Worth of a card in the deck (fighting value plus ability)."""
    return float(CARD_WORTH[TYPE_OF[card]])


def badness(card: int, reference: float) -> float:
    """How much the deck gains per future draw when ``card`` is destroyed (> 0: destroy it)."""
    return reference - worth(card)


class ExpertPolicy:
    """Chooses actions on a full ``State`` using only the player's information (see the module doc)."""

    def __init__(
        self,
        rng: np.random.Generator,
        samples: int = 8,
        weights: Weights | None = None,
        model: WinModel | None = None,
    ) -> None:
        self.rng = rng
        self.samples = samples
        self.weights = weights or Weights()
        self.model = model

    # ------------------------------------------------------------------ position value

    def life_value(self, life: int) -> float:
        """Concave value of life: every point counts, points below ``low_life`` count much more."""
        w = self.weights
        short = max(0.0, w.low_life - life)
        return w.life * life - w.scarcity * short * short / w.low_life

    def value(self, state: State) -> float:
        """Position value between fights (higher is better); a lost game is worth ``-death``."""
        w = self.weights
        if self.model is not None:
            return 100.0 * self.model.probability(state)
        if state.done and not state.won:
            return -w.death
        scale = w.draws_left[min(state.step, 3)]
        owned = engine.owned_cards(state)
        deck = sum(worth(c) - w.reference for c in owned) * scale
        beaten = 30.0 * sum(state.pirates_defeated)
        return deck + self.life_value(state.life) + beaten

    # ------------------------------------------------------------------ the draw pool

    @staticmethod
    def draw_values(state: State) -> list[int]:
        """Fighting values of the cards the next draws come from, as the player knows them.

        The known top cards come first (in order); otherwise the unknown part of the stack, with each
        hidden aging card valued as the mean of the unseen aging cards; with the stack empty, the
        discard pile (the aging card a reshuffle adds is ignored).
        """
        stack = state.robinson
        if state.known_top:
            return [card_type(stack[0]).value]
        middle = stack[: len(stack) - state.known_bottom] if state.known_bottom else stack
        if not middle:
            middle = stack or state.discard
            if not middle:
                return []
        unseen = state.aging + sorted(state.hidden)
        aging_mean = round(np.mean([card_type(c).value for c in unseen])) if unseen else -2
        return [aging_mean if c in state.hidden else card_type(c).value for c in middle]

    @classmethod
    def mean_next(cls, state: State) -> float:
        """Expected fighting value of the next card drawn."""
        values = cls.draw_values(state)
        return float(np.mean(values)) if values else 0.0

    # ------------------------------------------------------------------ decisions

    def choose(self, state: State) -> int:
        """The action to take in ``state`` (always one of ``engine.legal_actions(state)``)."""
        legal = engine.legal_actions(state)
        if len(legal) == 1:
            return legal[0]
        phase = state.phase
        if phase in (Phase.CHOOSE_HAZARD, Phase.LAST_HAZARD, Phase.CHOOSE_PIRATE):
            seeds = [int(s) for s in self.rng.integers(0, 2**63, size=self.samples)]
            score = self.pirate_wins if phase is Phase.CHOOSE_PIRATE else self.fight_value
            first, second = (score(state, a, seeds) for a in legal)
            return legal[0] if first >= second else legal[1]
        if phase is Phase.FIGHT:
            return self._fight(state, legal)
        if phase is Phase.TARGET:
            return self._target(state, legal)
        if phase is Phase.EXTRA_DRAW:
            return A.DONE if self._winning(state) else A.CONTINUE
        if phase is Phase.SORT_LOOK:
            return self._sort_look(state, legal)
        if phase is Phase.SORT_ORDER:
            return A.SORT_TOP + max(range(len(state.looked)), key=lambda k: self._draw_rank(state.looked[k]))
        return self._loss_destroy(state, legal)

    # -- Monte-Carlo over whole fights

    def rollout_fight(self, state: State, action: int, rng: np.random.Generator) -> State:
        """Play ``action`` on a redealt copy, then this policy until the fight is over."""
        sim = state.copy()
        redeal(sim, rng)
        engine.apply_action(sim, action, rng)
        while sim.fight is not None and not sim.done:
            engine.apply_action(sim, self.choose(sim), rng)
        return sim

    def fight_value(self, state: State, action: int, seeds: list[int]) -> float:
        """Mean position value after ``action`` (fight or skip a hazard) and the fight played out.

        Each seed gives one determinisation and one run of the draws; the alternatives of a choice are
        scored on the same seeds (common random numbers), so they differ only by the choice itself.
        """
        return float(np.mean([self.value(self.rollout_fight(state, action, np.random.default_rng(s))) for s in seeds]))

    def pirate_wins(self, state: State, action: int, seeds: list[int]) -> float:
        """Share of sampled plays that beat both pirates when ``action`` picks the first one."""
        wins = 0
        for seed in seeds:
            rng = np.random.default_rng(seed)
            sim = self.rollout_fight(state, action, rng)
            while not sim.done:
                engine.apply_action(sim, self.choose(sim), rng)
            wins += bool(sim.won)
        return wins / len(seeds)

    # -- fight

    @staticmethod
    def _winning(state: State) -> bool:
        """The points on the table already reach the hazard value."""
        fight = state.fight
        assert fight is not None
        return fight_total(fight) >= fight_target(state)

    def _deficit(self, state: State) -> int:
        """Points still missing."""
        fight = state.fight
        assert fight is not None
        return fight_target(state) - fight_total(fight)

    def _draw_rank(self, card: int) -> float:
        """How much we want to draw ``card`` in a fight (points now, aging cards hurt more)."""
        t = card_type(card)
        return t.value + (0.5 * ABILITY_WORTH[t.ability] if t.ability is not Ability.NONE else 0.0) - 2.0 * t.is_aging

    def _fight(self, state: State, legal: list[int]) -> int:
        """The main fight phase, rules of thumb in order of priority (see the module doc)."""
        fight = state.fight
        assert fight is not None
        usable: dict[Ability, int] = {}
        for a in legal:
            if a >= A.ACTIVATE and a < A.TARGET:
                usable.setdefault(card_type(fight.table[a - A.ACTIVATE].card).ability, a)
        vs_pirate = fight.hazard < 0
        for ability in (Ability.LIFE_2, Ability.LIFE_1):
            if ability in usable:
                return usable[ability]
        if Ability.DESTROY in usable and self._destroy_target(state, usable[Ability.DESTROY] - A.ACTIVATE) is not None:
            return usable[Ability.DESTROY]
        winning = self._winning(state)
        if winning and A.END_FIGHT in legal:
            return A.END_FIGHT
        if Ability.STEP_DOWN in usable:
            return usable[Ability.STEP_DOWN]
        mean = self.mean_next(state)
        for ability in (Ability.EXCHANGE_2, Ability.EXCHANGE_1, Ability.BELOW):
            if ability in usable:
                source = usable[ability] - A.ACTIVATE
                if self._swap_target(state, source, mean) is not None:
                    return usable[ability]
        if Ability.SORT_3 in usable and (A.DRAW_FREE in legal or A.BUY in legal) and not state.known_top:
            return usable[Ability.SORT_3]
        if A.DRAW_FREE in legal:
            return A.DRAW_FREE
        for ability in (Ability.CARD_2, Ability.CARD_1):
            if ability in usable:
                return usable[ability]
        if Ability.DOUBLE in usable:
            return usable[Ability.DOUBLE]
        if Ability.COPY in usable and self._copy_target(state, usable[Ability.COPY] - A.ACTIVATE) is not None:
            return usable[Ability.COPY]
        if A.BUY in legal and (vs_pirate or self._should_buy(state, mean)):
            return A.BUY
        if A.END_FIGHT in legal:
            return A.END_FIGHT
        return A.BUY if A.BUY in legal else legal[0]

    def life_cost(self, life: int, paid: int) -> float:
        """Value lost by paying ``paid`` life points (death when more than we have)."""
        if paid > life:
            return self.weights.death
        return self.life_value(life) - self.life_value(life - paid)

    def _cleanup_gain(self, state: State, cards: list[int], budget: int) -> float:
        """Value of destroying the worst of ``cards`` with ``budget`` life paid for a lost fight."""
        w = self.weights
        scale = w.draws_left[min(state.step, 3)]
        gain = 0.0
        for card in sorted(cards, key=lambda c: -badness(c, w.reference) / card_type(c).destroy_cost):
            cost = card_type(card).destroy_cost
            if badness(card, w.reference) > 0 and cost <= budget:
                budget -= cost
                gain += badness(card, w.reference) * scale
        return gain

    def _knowledge_gain(self, state: State) -> float:
        """Value of winning the current hazard's knowledge card."""
        fight = state.fight
        assert fight is not None
        w = self.weights
        return (worth(fight.hazard) - w.reference) * w.draws_left[min(state.step, 3)]

    def _should_buy(self, state: State, mean: float) -> bool:
        """Buy while the expected cost of winning is below the cost of losing now."""
        fight = state.fight
        assert fight is not None
        deficit = self._deficit(state)
        aging = aging_life_cost(fight)
        face_up = [s.card for s in fight.table if not s.face_down]
        lose = self._cleanup_gain(state, face_up, deficit) - self.life_cost(state.life, deficit + aging)
        if mean <= 0.2:
            return False
        cards = math.ceil(deficit / mean)
        if cards > state.life:
            return False
        win = self._knowledge_gain(state) - self.life_cost(state.life, cards + aging)
        return win > lose

    def _destroy_target(self, state: State, source: int) -> int | None:
        """The face-up table card most worth destroying, if any is a liability."""
        fight = state.fight
        assert fight is not None
        ref = self.weights.reference
        best, slot = 0.0, None
        for j, s in enumerate(fight.table):
            if j != source and not s.face_down and badness(s.card, ref) > best:
                best, slot = badness(s.card, ref), j
        return slot

    def _swap_target(self, state: State, source: int, mean: float) -> int | None:
        """The face-up table card worth exchanging / putting under the stack (well below an average draw)."""
        fight = state.fight
        assert fight is not None
        values = slot_values(fight)
        worst, slot = mean - 0.5, None
        for j, s in enumerate(fight.table):
            if j == source or s.face_down:
                continue
            t = card_type(s.card)
            v = values[j] - (3.0 if t.ability in (Ability.STOP, Ability.HIGHEST_ZERO, Ability.AGING_LIFE_1) else 0.0)
            v -= 4.0 if t.ability is Ability.AGING_LIFE_2 else 0.0
            if v < worst:
                worst, slot = v, j
        return slot

    def _copy_target(self, state: State, source: int) -> int | None:
        """The card whose ability is most useful to copy now."""
        fight = state.fight
        assert fight is not None
        order = (Ability.LIFE_2, Ability.LIFE_1, Ability.DOUBLE, Ability.CARD_2, Ability.CARD_1, Ability.STEP_DOWN)
        options = {card_type(fight.table[j].card).ability: j for j in targets(state, Ability.COPY, source)}
        for ability in order:
            if ability in options:
                return options[ability]
        if Ability.DESTROY in options and self._destroy_target(state, source) is not None:
            return options[Ability.DESTROY]
        return None

    def _target(self, state: State, legal: list[int]) -> int:
        """Targets of destroy (worst liability), double (best card), copy, exchange and below (worst card)."""
        pending = state.pending
        fight = state.fight
        assert pending is not None and fight is not None
        choices = [a - A.TARGET for a in legal if a >= A.TARGET]
        ability = pending.ability
        if ability is Ability.DESTROY:
            slot = self._destroy_target(state, pending.source)
            if slot is None:
                ref = self.weights.reference
                slot = max(choices, key=lambda j: badness(fight.table[j].card, ref))
            return A.TARGET + slot
        if ability is Ability.DOUBLE:
            values = slot_values(fight)
            return A.TARGET + max(choices, key=lambda j: values[j])
        if ability is Ability.COPY:
            slot = self._copy_target(state, pending.source)
            return A.TARGET + (slot if slot is not None else choices[0])
        slot = self._swap_target(state, pending.source, self.mean_next(state))
        if slot is None or (A.DONE in legal and self._winning(state)):
            return A.DONE if A.DONE in legal else A.TARGET + min(choices, key=lambda j: slot_values(fight)[j])
        return A.TARGET + slot

    def _sort_look(self, state: State, legal: list[int]) -> int:
        """Look at all three cards, then discard the worst one if it hurts."""
        if A.CONTINUE in legal:
            return A.CONTINUE
        ranks = [self._draw_rank(c) for c in state.looked]
        worst = min(range(len(ranks)), key=lambda k: ranks[k])
        return A.SORT_DISCARD + worst if ranks[worst] < 0 else A.DONE

    def _loss_destroy(self, state: State, legal: list[int]) -> int:
        """After a lost fight: destroy liabilities, the most harmful per life point first; then stop."""
        fight = state.fight
        assert fight is not None
        ref = self.weights.reference
        choices = [a - A.TARGET for a in legal if a >= A.TARGET]
        choices = [j for j in choices if badness(fight.table[j].card, ref) > 0]
        if not choices:
            return A.DONE
        best = max(
            choices, key=lambda j: badness(fight.table[j].card, ref) / card_type(fight.table[j].card).destroy_cost
        )
        return A.TARGET + best


class HeuristicAgent:
    """The rule-based expert as an agent: rebuilds a state from the observation, then asks the policy.

    ``samples``: Monte-Carlo plays per offered hazard (fewer = faster, weaker); ``model``: the win model
    that judges positions (default: the shipped one). ``act`` takes the environment's observation dict
    ``{"observation": vector, "action_mask": mask}``. An action the mask forbids would be a bug and
    raises instead of being replaced.
    """

    name = "heuristic"

    def __init__(self, seed: int | None = None, samples: int = 8, model: WinModel | None = None) -> None:
        self.samples = count_option("samples", samples, maximum=MAX_SAMPLES, owner=self.name)
        if model is not None and not isinstance(model, WinModel):
            raise ValueError(f"model must be a WinModel or None (the shipped model), got {model!r}")
        self.model = model or shipped_model()
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        """Optional hook: re-seed for a new game (a new generator from ``seed``; None draws fresh entropy
        only at construction). Building a new agent with ``make("heuristic", seed=...)`` is the same."""
        check_seed(seed)
        if seed is not None or not hasattr(self, "rng"):
            self.rng = np.random.default_rng(seed)
            self.policy = ExpertPolicy(self.rng, self.samples, model=self.model)

    def act(self, observation: Observation) -> int:
        """The expert's move in a determinisation of the observation."""
        state, legal = observed_state(observation, self.rng, self.name)  # a mask not the observation's: ValueError
        action = self.policy.choose(state)
        if action not in legal:  # the position's own legal actions are the mask's: this would be a bug of the policy
            raise RuntimeError(f"heuristic chose illegal action {action}; legal: {legal.tolist()}")
        return action
