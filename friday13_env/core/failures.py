"""Objects that an exception can leave half-updated refuse to go on until they are reset.

An environment that calls user code (opponents) or can be interrupted (Ctrl-C, SIGTERM in a training script)
while it changes its state may be left mid-turn: some tables played, others not, masks stale. Going on would
play the learner's actions for whoever is now to move. The rule every such object follows:

- Checks that run before any state changes stay outside ``guard``: a refused call changes nothing and the
  object stays usable.
- An exception inside ``guard`` (state began to change) locks the object; ``check`` then raises a
  ``RuntimeError`` naming the original failure and saying to call ``reset()``.
- ``reset`` (the one that restarts everything) calls ``clear`` once its own checks have passed, then does its
  work inside ``guard`` too.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


class FailureLatch:
    """Remembers the exception that left an object half-updated, and refuses use until it is cleared.

    Args:
        remedy: what the refusal says after naming the failure, ending with the call that unlocks
            (``"the table may be left mid-turn, so the episode cannot go on: call reset()"``).
    """

    def __init__(self, remedy: str) -> None:
        self.remedy = remedy
        self.failure: str | None = None
        """``"an earlier step() raised ValueError: ..."`` once an exception escaped ``guard``, else ``None``."""

    @contextmanager
    def guard(self, where: str, refusals: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
        """Any exception inside locks the latch and propagates, except ``refusals``: exception types that the
        guarded code raises only before it changes anything (``GameBatch.step``'s ``ValueError``)."""
        try:
            yield
        except refusals:
            raise
        except BaseException as error:
            self.failure = f"an earlier {where} raised {type(error).__name__}: {error}"
            raise

    def check(self) -> None:
        """A ``RuntimeError`` naming the failure and the remedy if the latch is locked."""
        if self.failure is not None:
            raise RuntimeError(f"{self.failure}; {self.remedy}")

    def clear(self) -> None:
        """Unlock (the object was restarted)."""
        self.failure = None
