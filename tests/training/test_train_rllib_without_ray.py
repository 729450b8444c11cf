"""training/train_rllib.py where the ``rllib`` extra is missing (as in the default environment): one line naming the
extra to install, not a ``ModuleNotFoundError`` traceback. Runs without Ray (Ray is blocked in the child process)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.scripts import REPOSITORY, TRAINING

_RUN_WITHOUT_RAY = """
import runpy, sys
sys.modules["ray"] = None  # `import ray` now raises ModuleNotFoundError, whether Ray is installed or not
sys.path.insert(0, sys.argv[1])
sys.argv = ["train_rllib.py", *sys.argv[2:]]
runpy.run_path(sys.path[0] + "/train_rllib.py", run_name="__main__")
"""


@pytest.mark.parametrize("flags", [["--help"], ["--iterations", "1"]])
def test_without_ray_the_script_says_which_extra_to_install_in_one_line(flags: list[str]) -> None:
    command = [sys.executable, "-c", _RUN_WITHOUT_RAY, str(TRAINING), *flags]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPOSITORY, timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        'error: training/train_rllib.py needs Ray RLlib (the rllib extra): pip install "friday13-env[rllib]"'
    ]


def test_imported_without_ray_the_error_names_the_extra_too() -> None:
    code = f"import sys; sys.modules['ray'] = None; sys.path.insert(0, {str(TRAINING)!r}); import train_rllib"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPOSITORY, timeout=120)
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == (
        "ModuleNotFoundError: training/train_rllib.py needs Ray RLlib (the rllib extra): pip install"
        ' "friday13-env[rllib]"'
    )
