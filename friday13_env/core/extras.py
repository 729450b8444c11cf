"""The optional extras' packages, and the one-line error for code that needs an extra that is not installed."""

from __future__ import annotations

RLLIB_EXTRA = ("Ray RLlib", "rllib", frozenset({"ray", "torch"}))
"""What the ``rllib`` extra is called, its name in ``pip install "friday13-env[rllib]"``, and the packages it brings."""


def missing_extra(missing: ModuleNotFoundError, needed_by: str, extra: tuple[str, str, frozenset[str]]) -> bool:
    """Whether ``missing`` is one of ``extra``'s packages; if so, its message becomes one line naming the extra."""
    title, name, packages = extra
    if (missing.name or "").partition(".")[0] not in packages:
        return False
    missing.msg = f'{needed_by} needs {title} (the {name} extra): pip install "friday13-env[{name}]"'
    missing.args = (missing.msg,)
    return True


BENCHMARK_EXTRA = ("scipy and openskill", "benchmark", frozenset({"scipy", "openskill"}))
"""The ``benchmark`` extra: scipy for the aggregate scores' bootstrap, openskill for the ratings."""

WEB_EXTRA = ("Starlette and uvicorn", "web", frozenset({"starlette", "uvicorn", "anyio", "httpx"}))
"""The ``web`` extra: the ASGI framework and server of ``friday13 serve``."""
