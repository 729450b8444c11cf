"""Each PPO zoo card's command, parsed with today's defaults, is the run its policy records.

A card prints the flags its run gave; the rest came from ``train_ppo.py``'s defaults of the day. When a default
changes, a card that leaned on it no longer rebuilds its policy: this test names the card and the argument.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest

from friday13_env.friday13.agents.policy import read_friday13_policy
from tests.scripts import REPOSITORY, load_training_script

pytest.importorskip("torch", reason="train_ppo.py needs the train extra")

ZOO = REPOSITORY / "friday13_env" / "friday13" / "zoo"
CARDS = sorted(path for path in ZOO.glob("ppo-v*.md"))
COMMAND = re.compile(r"^python training/train_ppo\.py (?!.*--resume)(.*)$", re.MULTILINE)


def card_command(card: Path) -> list[str]:
    """The first ``train_ppo.py`` line of the card that starts a run (not a ``--resume``)."""
    found = COMMAND.search(card.read_text())
    assert found, f"{card.name} prints no train_ppo.py command"
    return shlex.split(found.group(1))


def test_every_ppo_card_is_checked() -> None:
    assert [card.stem for card in CARDS] == ["ppo-v1", "ppo-v2", "ppo-v3", "ppo-v4"]


@pytest.mark.parametrize("card", CARDS, ids=[card.stem for card in CARDS])
def test_the_cards_command_gives_the_recorded_hyperparameters(card: Path) -> None:
    train_ppo = load_training_script("train_ppo")
    parsed = vars(train_ppo.parse_args(card_command(card)))
    recorded: dict[str, Any] = {
        **train_ppo.ADDED_LATER,
        **read_friday13_policy(ZOO / f"{card.stem}.npz").metadata.training["args"],
    }
    differing = {
        name: (parsed[name], recorded[name])
        for name in parsed
        if name not in train_ppo.RUN_SETTINGS and parsed[name] != recorded[name]
    }
    assert not differing, f"{card.name}: (the command's, the run's) {differing}"
