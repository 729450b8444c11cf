"""Load a training script (``training/<name>.py``, not a package) as a module, for the tests to call."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TRAINING = Path(__file__).resolve().parents[1] / "training"
if str(TRAINING) not in sys.path:
    sys.path.insert(0, str(TRAINING))  # the scripts import their shared `common` package, as when run directly


def load_training_script(name: str) -> ModuleType:
    """Registered in ``sys.modules`` so that worker processes can unpickle the script's job objects."""
    spec = importlib.util.spec_from_file_location(name, TRAINING / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
