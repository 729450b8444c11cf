"""Baseline and trained agents for Friday the 13th, by name: ``agents.make("cautious", seed=0)``."""

from friday13_env.agents.base import Agent, RandomAgent, deck_of, legal_actions
from friday13_env.agents.registry import load, make, names, register

__all__ = ["Agent", "RandomAgent", "deck_of", "legal_actions", "load", "make", "names", "register"]
