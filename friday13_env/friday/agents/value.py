"""A learned estimate of the chance to win a Friday game from a position between fights.

Hand-set weights for »how good is this deck, how much is this life point worth« proved hard to balance
(destroying cards, winning knowledge and keeping life all compete). Instead, one logistic regression
per step (green, yellow, red, pirates) predicts the final win from simple, public features of the
position, fitted on games of the rule-based expert (:mod:`friday13_env.friday.agents.value_fit` regenerates
the coefficients in ``value_weights.json``). The expert then picks the hazard (and the fight moves
searched over) that lead to the positions with the best predicted chance: one step of policy
improvement over its own play.

The features use only what the player knows: hidden aging cards count by number and by the mean of the
aging cards not seen yet, never by identity.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import numpy as np

from friday13_env.core.files import read_capped
from friday13_env.core.specs import shown
from friday13_env.friday import engine
from friday13_env.friday.cards import PIRATES, Ability, card_type
from friday13_env.friday.state import State

WEIGHTS_FILE = Path(__file__).with_name("value_weights.json")
MAX_MODEL_BYTES = 1 << 20
"""The largest win model file ``WinModel.load`` reads (the shipped one is under 3 kB): a guard against reading a
device such as /dev/zero, or a huge file, into memory."""

_ABILITY_GROUPS: tuple[tuple[Ability, ...], ...] = (
    (Ability.LIFE_1, Ability.LIFE_2),
    (Ability.CARD_1,),
    (Ability.CARD_2,),
    (Ability.DESTROY,),
    (Ability.DOUBLE,),
    (Ability.COPY,),
    (Ability.STEP_DOWN,),
    (Ability.SORT_3,),
    (Ability.EXCHANGE_1, Ability.EXCHANGE_2, Ability.BELOW),
    (Ability.HIGHEST_ZERO, Ability.STOP, Ability.AGING_LIFE_1, Ability.AGING_LIFE_2),
)
FEATURE_NAMES: tuple[str, ...] = (
    "bias",
    "life",
    "sqrt_life",
    "cards",
    "value_sum",
    "value_mean",
    "negatives",
    "zeros",
    "fours",
    *(f"ability_{g[0].name.lower()}" for g in _ABILITY_GROUPS),
    "aging_owned",
    "aging_stack",
    "hazards_left",
    "hazard_discard",
    "pirate_value",
    "pirate_free",
    "pirates_beaten",
)
NUM_FEATURES = len(FEATURE_NAMES)


def features(state: State) -> np.ndarray:
    """Public features of a position (see ``FEATURE_NAMES``), scaled to roughly unit size."""
    owned = engine.owned_cards(state)
    unseen = state.aging + sorted(state.hidden)
    hidden_value = float(np.mean([card_type(c).value for c in unseen])) if unseen else -2.0
    values = [hidden_value if c in state.hidden else card_type(c).value for c in owned]
    abilities = [card_type(c).ability for c in owned if c not in state.hidden]
    cards = max(len(owned), 1)
    pirate_value = pirate_free = 0
    for index, pirate_id in enumerate(state.pirates):
        if not state.pirates_defeated[index]:
            free, value = engine.pirate_terms(state, PIRATES[pirate_id])
            if state.fight is not None and state.fight.pirate == index:
                free, value = state.fight.free_total, state.fight.pirate_value
            pirate_value += value
            pirate_free += free
    return np.array(
        [
            1.0,
            state.life / 10.0,
            np.sqrt(max(state.life, 0)) / 3.0,
            len(owned) / 20.0,
            sum(values) / 20.0,
            sum(values) / cards,
            sum(1 for v in values if v < 0) / 5.0,
            sum(1 for v in values if v == 0) / 5.0,
            sum(1 for v in values if v >= 3) / 2.0,
            *(sum(1 for a in abilities if a in group) / 2.0 for group in _ABILITY_GROUPS),
            sum(1 for c in owned if card_type(c).is_aging) / 5.0,
            len(state.aging) / 10.0,
            (len(state.hazard_stack) + len(state.hazard_options)) / 10.0,
            len(state.hazard_discard) / 10.0,
            pirate_value / 50.0,
            pirate_free / 15.0,
            float(sum(state.pirates_defeated)),
        ]
    )


class WinModel:
    """Per-step logistic regressions: ``probability(state)`` is the predicted chance to win."""

    def __init__(self, coefficients: np.ndarray) -> None:
        """``coefficients``: one row of ``NUM_FEATURES`` finite numbers per step; a NaN or an infinity would turn
        every prediction of its step into NaN, so they are refused here."""
        if coefficients.shape != (4, NUM_FEATURES):
            raise ValueError(f"coefficients must have shape (4, {NUM_FEATURES}), got {coefficients.shape}")
        if not np.isfinite(coefficients).all():
            raise ValueError("coefficients must be finite numbers; these hold NaN or infinity")
        self.coefficients = coefficients

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> WinModel:
        """A model file written by ``value_fit`` (by default the shipped ``value_weights.json``).

        Anything but a JSON object with the ``features`` this version computes and 4 rows of ``NUM_FEATURES``
        finite ``coefficients`` (JSON numbers: a string such as ``"1.5"`` or a boolean is refused, not converted) is a
        ``ValueError`` naming the file and the problem. Only a regular file of at most
        ``MAX_MODEL_BYTES`` is read (``read_capped``), and JSON nested too deeply to parse is refused, not a
        ``RecursionError``."""
        raw = read_capped(path, MAX_MODEL_BYTES, "win model")
        try:
            data = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as error:  # ValueError: a JSONDecodeError or a UnicodeDecodeError
            reason = "nested too deeply" if isinstance(error, RecursionError) else error
            raise ValueError(f"{path}: not a JSON file: {reason}") from None
        if not isinstance(data, dict):
            raise ValueError(
                f"{path}: expected a JSON object with 'features' and 'coefficients', got {type(data).__name__}"
            )
        missing = [key for key in ("features", "coefficients") if key not in data]
        if missing:
            raise ValueError(f"{path}: the win model has no {' and no '.join(map(repr, missing))}")
        if data["features"] != list(FEATURE_NAMES):
            raise ValueError(f"{path}: fitted for features {data['features']}, not {list(FEATURE_NAMES)}")
        rows = data["coefficients"]
        if not isinstance(rows, list) or not all(isinstance(row, list) for row in rows):
            raise ValueError(
                f"{path}: coefficients must be 4 lists of {NUM_FEATURES} numbers (one per step), got {shown(rows)}"
            )
        for step, row in enumerate(rows):
            for index, value in enumerate(row):  # numpy would read "1.5" and true as numbers
                if isinstance(value, bool) or not isinstance(value, int | float):
                    raise ValueError(
                        f"{path}: coefficients must be numbers (ints or floats): coefficients[{step}][{index}] is "
                        f"{shown(value)}"
                    )
        try:
            coefficients = np.asarray(rows, dtype=np.float64)
        except (ValueError, OverflowError):  # ragged rows, or an int past float64's range
            raise ValueError(
                f"{path}: coefficients must be 4 lists of {NUM_FEATURES} numbers (one per step), got {shown(rows)}"
            ) from None
        try:
            return cls(coefficients)
        except ValueError as error:
            raise ValueError(f"{path}: {error}") from None

    def probability(self, state: State) -> float:
        """Predicted chance to win from ``state`` (1 or 0 once the game is over)."""
        if state.done:
            return float(bool(state.won))
        z = float(self.coefficients[min(state.step, 3)] @ features(state))
        return 1.0 / (1.0 + np.exp(-np.clip(z, -30.0, 30.0)))


@cache
def shipped_model() -> WinModel:
    """The model fitted by ``value_fit`` and shipped with the package (loaded once)."""
    return WinModel.load()
