"""What a plain ``pip install friday13-env`` user gets: every module imports without the training
extras, the solo game does not pull in PettingZoo, and nothing reads files from a checkout."""

from __future__ import annotations

import importlib.util
import pkgutil
import subprocess
import sys
import textwrap

import pytest

import friday13_env

TRAINING_ONLY = ("torch", "stable_baselines3", "sb3_contrib", "tqdm", "tensorboard", "matplotlib")
RLLIB_ADAPTER = "friday13_env.friday13.batched.rllib"
"""A module that needs an extra to import (Ray RLlib's classes are its base classes); nothing imports it."""
HAS_RAY = importlib.util.find_spec("ray") is not None
WEB_APP = "friday13_env.web.app"
"""The other: the web server's application (Starlette, the web extra), imported by ``friday13 serve`` alone."""
HAS_STARLETTE = importlib.util.find_spec("starlette") is not None
NEEDS_AN_EXTRA = (RLLIB_ADAPTER, WEB_APP)


def _run(*parts: str) -> subprocess.CompletedProcess[str]:
    code = "\n".join(textwrap.dedent(part) for part in parts)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)


def _blocker(names: tuple[str, ...]) -> str:
    return f"""
        import importlib.abc, sys
        class Block(importlib.abc.MetaPathFinder):
            def find_spec(self, name, path, target=None):
                if name.split(".")[0] in {names!r}:
                    raise ImportError(f"blocked: {{name}}")
        sys.meta_path.insert(0, Block())
    """


def all_modules() -> list[str]:
    return sorted(
        info.name
        for info in pkgutil.walk_packages(friday13_env.__path__, prefix="friday13_env.")
        if not info.name.endswith("__main__")
    )


def importable_modules() -> list[str]:
    """Every module this environment can import: the RLlib adapter only where Ray is installed."""
    return [
        module
        for module in all_modules()
        if (HAS_RAY or module != RLLIB_ADAPTER) and (HAS_STARLETTE or module != WEB_APP)
    ]


def test_every_module_imports_without_the_training_extras() -> None:
    """Every module but the two that need an extra (the RLlib adapter, the web server's application): the tests
    below check that each imports with its extra and names the extra without it."""
    modules = [module for module in all_modules() if module not in NEEDS_AN_EXTRA]
    assert "friday13_env.core.checkpoint" in modules and "friday13_env.friday13.aec" in modules
    result = _run(_blocker(TRAINING_ONLY), f"import importlib\nfor m in {modules!r}: importlib.import_module(m)")
    assert result.returncode == 0, result.stderr


def test_the_rllib_adapter_without_ray_names_the_extra() -> None:
    result = _run("import sys\nsys.modules['ray'] = None", f"import {RLLIB_ADAPTER}")  # Ray missing, or hidden
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f'ModuleNotFoundError: {RLLIB_ADAPTER} needs Ray RLlib (the rllib extra): pip install "friday13-env[rllib]"'
    )


@pytest.mark.skipif(not HAS_RAY, reason="the rllib extra (Ray) is not installed")
def test_the_rllib_adapter_imports_with_the_rllib_extra() -> None:
    result = _run(f"import {RLLIB_ADAPTER}")
    assert result.returncode == 0, result.stderr


def test_the_web_app_without_starlette_names_the_extra() -> None:
    result = _run("import sys\nsys.modules['starlette'] = None", f"import {WEB_APP}")  # Starlette missing, or hidden
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f'ModuleNotFoundError: {WEB_APP} needs Starlette and uvicorn (the web extra): pip install "friday13-env[web]"'
    )


@pytest.mark.skipif(not HAS_STARLETTE, reason="the web extra (Starlette) is not installed")
def test_the_web_app_imports_with_the_web_extra() -> None:
    result = _run(f"import {WEB_APP}")
    assert result.returncode == 0, result.stderr


def test_the_blocker_would_catch_a_training_import() -> None:
    """The check above can fail: importing torch under the blocker is refused."""
    result = _run(_blocker(TRAINING_ONLY), "import torch")
    assert result.returncode != 0 and "blocked: torch" in result.stderr


def test_the_solo_game_does_not_import_pettingzoo() -> None:
    result = _run(
        """
        import sys, gymnasium as gym, friday13_env
        env = gym.make("friday13_env/FridaySolo-v0")
        env.reset(seed=0)
        from friday13_env.friday import agents
        agents.make("heuristic", seed=0)
        assert "pettingzoo" not in sys.modules, "the solo game imported pettingzoo"
        """
    )
    assert result.returncode == 0, result.stderr


def test_the_public_paths_stay() -> None:
    from friday13_env import agents, env, friday13_v0, raw_env

    assert friday13_v0.env is env and friday13_v0.raw_env is raw_env
    assert "ensemble-v1" in agents.names() and "endgame" in agents.names()
    import gymnasium as gym

    for env_id in ("friday13_env/Friday13-v0", "friday13_env/FridaySolo-v0", "friday13_env/Friday-v0"):
        assert env_id in gym.registry


def test_zoo_policies_ship_with_a_model_card() -> None:
    from friday13_env import agents
    from friday13_env.core.zoo import model_card

    for name in agents.REGISTRY.zoo():
        card = model_card("friday13_env.friday13", name)
        assert card.startswith(f"# `{name}`") and "python training/" in card


def test_the_runtime_package_never_imports_the_training_helpers() -> None:
    result = _run(
        _blocker(("friday13_training",)),
        f"import importlib\nfor m in {importable_modules()!r}: importlib.import_module(m)",
    )
    assert result.returncode == 0, result.stderr
