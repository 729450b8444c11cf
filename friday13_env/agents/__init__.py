"""Baseline and trained agents for Friday the 13th, by name: ``agents.make("cautious", seed=0)``."""

from friday13_env.agents.base import Agent, RandomAgent, deck_of, legal_actions
from friday13_env.agents.endgame import EndgameSearchAgent
from friday13_env.agents.heuristics import CautiousAgent, MajorityAgent
from friday13_env.agents.registry import load, make, names, options_of, register
from friday13_env.agents.search import SearchAgent

__all__ = [
    "Agent",
    "CautiousAgent",
    "EndgameSearchAgent",
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
