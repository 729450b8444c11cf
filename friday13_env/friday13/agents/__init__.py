"""Baseline and trained agents for Friday the 13th, by name: ``agents.make("cautious", seed=0)``."""

from friday13_env.friday13.agents.base import Agent, RandomAgent, deck_of, legal_actions
from friday13_env.friday13.agents.endgame import EndgameSearchAgent
from friday13_env.friday13.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.friday13.agents.policy import Friday13PolicyAgent
from friday13_env.friday13.agents.registry import REGISTRY, load, make, names, options_of, register
from friday13_env.friday13.agents.search import SearchAgent

__all__ = [
    "REGISTRY",
    "Agent",
    "CautiousAgent",
    "EndgameSearchAgent",
    "Friday13PolicyAgent",
    "MajorityAgent",
    "RandomAgent",
    "SearchAgent",
    "deck_of",
    "legal_actions",
    "load",
    "make",
    "names",
    "options_of",
    "register",
]
