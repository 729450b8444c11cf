"""Friday the 13th (Reiner Knizia, 3-6 players): rules, encoding, environments, agents, evaluation.

Modules: ``cards`` (decks, card kinds, action numbering), ``engine`` (the rules: pure Python, no RL
imports), ``scenario`` (hand-made positions), ``encoding`` (observation and state vectors with named
views), ``aec`` (the PettingZoo AEC environment), ``single_agent`` (the Gymnasium view against scripted
opponents), ``render`` (text), ``play`` (the terminal game), ``agents`` (baselines, search, trained
policies) and ``evaluation`` (duplicate-deal tournaments). See ``docs/friday13.md``.
"""
