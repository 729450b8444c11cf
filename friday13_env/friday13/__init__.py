"""Friday the 13th (Reiner Knizia, 3-6 players): rules, encoding, environments, agents, evaluation.

Modules: ``cards`` (decks, card kinds, action numbering), ``engine`` (the rules: pure Python, no RL
imports), ``encoding`` (observation and state vectors with named views), ``rewards`` (the reward modes and
their one computation), ``options`` (the environments' shared options and checks), ``aec`` (the PettingZoo
AEC environment), ``single_agent`` (the Gymnasium view against scripted opponents), ``render`` (text),
``play`` (the terminal game), ``agents`` (baselines, search, trained policies), ``evaluation``
(duplicate-deal tournaments) and ``batched`` (thousands of games at once, in numpy). See ``docs/friday13.md``.
"""
