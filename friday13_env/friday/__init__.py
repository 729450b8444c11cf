"""Friday (Friedemann Friese's solo deck-builder) as an exact single-agent Gymnasium environment,
``gymnasium.make("friday13_env/FridaySolo-v0")``; a peer of :mod:`friday13_env.friday13` over
:mod:`friday13_env.core`.

Modules: ``cards`` (card data), ``state`` (typed state), ``zones`` (piles and life), ``strength``
(fight arithmetic), ``abilities`` (card abilities), ``levels`` (set-up), ``engine`` (rules state
machine and scoring), ``actions`` (action table), ``encoding`` (observation, named views), ``render``
(text and image views; ``bitmap`` draws the image), ``scenario`` (hand-built states), ``env``
(:class:`FridayEnv`), ``agents`` (the registry: ``make``, ``names``, ``register``, ``load``; the random
agent), ``options`` (agent option checks), ``policy`` (the solo checkpoint layout), ``zoo/`` (shipped
policies with model cards), ``belief`` (states rebuilt from observations), ``expert`` (the rule-based
expert), ``value`` / ``value_fit`` (the learned win model), ``search`` (Monte-Carlo search) and
``evaluation``. See ``docs/friday.md``.
"""
