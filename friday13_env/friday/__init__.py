"""Friday (Friedemann Friese's solo deck-builder) as an exact single-agent Gymnasium environment,
``gymnasium.make("friday13_env/FridaySolo-v0")``; a peer of :mod:`friday13_env.friday13` over
:mod:`friday13_env.core`, in the same shape.

Rules core: ``cards`` (card data), ``state`` (typed state), ``zones`` (piles and life), ``strength`` (fight
arithmetic), ``abilities`` (card abilities), ``levels`` (set-up), ``engine`` (rules state machine and scoring),
``actions`` (action table), ``scenario`` (hand-built states). Faces: ``encoding`` (observation, named views),
``env`` (:class:`FridayEnv`), ``render`` (text and image views; ``core.bitmap`` draws the image), ``policy`` (the
solo checkpoint layout). Then ``agents/`` (the registry: ``make``, ``names``, ``register``, ``load``; the
random, rule-based expert and search agents, the beliefs they sample and the win model they score with),
``evaluation/`` (win rates and scores per level) and ``zoo/`` (shipped policies with model cards).
See ``docs/friday.md``.
"""
