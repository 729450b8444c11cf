"""Both games in a browser: ``friday13 serve`` (a local page to play against the zoo) and ``friday13 replay``
(a self-contained HTML viewer of a recorded game).

The records, views and viewer need only the runtime package; the server needs the ``web`` extra
(Starlette and uvicorn), imported by :mod:`friday13_env.web.app` alone.
"""
