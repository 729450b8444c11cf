"""Every shipped agent makes the decisions it made when ``tests/data/decision_hashes.json`` was recorded.

The hashes were made with ``python -m tests.decision_hashes`` on release 0.6.0's code after ``ppo-v4``
(commit bc8ff11), and ``netsearch``'s on release 0.22.0's: a refactor that changes any agent's move on any of the
fixed positions fails here.
A change meant to alter an agent's play records the file anew and says so in the CHANGELOG.

Each section is computed in a child process with OpenBLAS's AVX2 kernels (``PINNED_BLAS``), whatever the CPU: float32
matrix products round differently with its AVX-512 kernels, which flips the batched networks' near-tied choices
(``ppo-v3`` and ``ppo-v4`` on an AVX-512 Xeon, where the record, made on an AVX2 EPYC, holds with the pinned kernels).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests import decision_hashes
from tests.scripts import REPOSITORY

RECORDED = json.loads((REPOSITORY / "tests" / "data" / "decision_hashes.json").read_text())


@pytest.mark.slow
@pytest.mark.parametrize("section", sorted(decision_hashes.SECTIONS))
def test_every_agent_decides_as_recorded(section: str) -> None:
    code = "import json, sys; from tests import decision_hashes; "
    code += f"json.dump(decision_hashes.SECTIONS[{section!r}](), sys.stdout)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPOSITORY,
        env={**os.environ, **decision_hashes.PINNED_BLAS},
        capture_output=True,
        text=True,
        check=False,
        timeout=1200,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == RECORDED[section]


def test_the_record_covers_every_shipped_agent() -> None:
    from friday13_env import agents
    from friday13_env.friday import agents as solo_agents

    assert sorted(RECORDED["card"]) == sorted(agents.names())
    assert set(agents.REGISTRY.zoo()) <= set(RECORDED["batched"])
    assert sorted(RECORDED["solo"]) == sorted(solo_agents.names())
