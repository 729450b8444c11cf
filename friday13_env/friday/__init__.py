"""Friday (Friedemann Friese's solo deck-builder) as an exact single-agent Gymnasium environment.

Modules: ``cards`` (card data), ``state`` (typed state), ``zones`` (piles and life), ``strength``
(fight arithmetic), ``abilities`` (card abilities), ``levels`` (set-up), ``engine`` (rules state
machine and scoring), ``actions`` (action table), ``encoding`` (observation), ``render`` (text),
``scenario`` (hand-built states), ``env`` (:class:`FridayEnv`), ``agents`` (agent protocol, random and
policy agents, ``make_agent``), ``belief`` (states rebuilt from observations), ``expert`` (the
rule-based expert), ``value`` / ``value_fit`` (the learned win model), ``search`` (Monte-Carlo search)
and ``evaluation``. See ``docs/friday.md``.
"""
