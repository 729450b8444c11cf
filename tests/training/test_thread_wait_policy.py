"""``train_ppo.py`` (and ``best_response.py``, which imports it first) set libgomp's ``OMP_WAIT_POLICY`` to
``PASSIVE`` before torch loads its OpenMP runtime, so that torch's waiting threads sleep instead of spinning on a
core another process needs; a value the user set stands. The variable is read once, when the runtime loads, so each
case runs in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.scripts import TRAINING

pytest.importorskip("torch")


WHEN_TORCH_LOADS = """
import os, sys

seen = []


class WatchTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and not seen:
            seen.append(os.environ.get("OMP_WAIT_POLICY"))
        return None


sys.meta_path.insert(0, WatchTorch())
sys.path.insert(0, sys.argv[1])
__import__(sys.argv[2])
print(seen[0])
"""
"""Imports a script and prints ``OMP_WAIT_POLICY`` as it was when ``import torch`` first ran."""


def wait_policy_seen_by_torch(script: str, environment: dict[str, str]) -> str:
    """``OMP_WAIT_POLICY`` at the moment ``script`` (imported as a module) first imports torch."""
    result = subprocess.run(
        [sys.executable, "-c", WHEN_TORCH_LOADS, str(TRAINING), script],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("script", ["train_ppo", "best_response"])
def test_the_training_scripts_make_waiting_threads_sleep_unless_told_otherwise(script: str) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "OMP_WAIT_POLICY"}
    assert wait_policy_seen_by_torch(script, environment) == "PASSIVE"
    assert wait_policy_seen_by_torch(script, {**environment, "OMP_WAIT_POLICY": "ACTIVE"}) == "ACTIVE"
