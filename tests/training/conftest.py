"""The training scripts import their shared ``common`` package from ``training/``: put it on ``sys.path``
before any test module here is imported, as running a script directly does."""

import tests.scripts  # noqa: F401
