"""Friday the 13th (Reiner Knizia, 3-6 players): rules, encoding, environments, agents, evaluation.

Modules: ``cards`` (decks, card kinds, action numbering), ``engine`` (the rules: pure Python, no RL
imports), ``scenario`` (hand-made positions), ``encoding`` (observation and state vectors with named
views), ``rewards`` (the reward modes and their one computation), ``options`` (the environments' shared
options and checks), ``aec`` (the PettingZoo AEC environment), ``single_agent`` (the Gymnasium view
against scripted opponents), ``render`` (text), ``play`` (the terminal game), ``agents`` (baselines,
search, trained policies), ``evaluation`` (duplicate-deal tournaments), ``batched`` (thousands of games
at once, in numpy) and ``game`` (its declaration as a ``core.game.Game``). See ``docs/friday13.md``.
"""
