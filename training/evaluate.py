"""Play agents against each other on duplicate deals and report win rates with 95% intervals.

The same command as ``friday13 evaluate`` (:mod:`friday13_env.friday13.evaluation.command`): agents are
specs exactly as ``friday13_env.agents.make`` takes them, and every argument (agents, counts, seed,
output paths) is checked before the first game. ``python training/evaluate.py --help`` lists the
options and examples.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from friday13_env.core.specs import working_folder_importable
from friday13_env.friday13.evaluation import command


def main(argv: Sequence[str] | None = None) -> int:
    working_folder_importable()  # an agent spec may name a module:factory of the working folder
    return command.main(argv, prog="evaluate.py")


if __name__ == "__main__":
    sys.exit(main())
