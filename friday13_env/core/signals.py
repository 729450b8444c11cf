"""Ctrl-C and SIGTERM as one exception, so that a long command stops with one line instead of a traceback.

A command that writes results (``friday13 evaluate``) or trains (the scripts in ``training/``) runs its work
under ``signals_interrupt()``: either signal raises ``Interrupted`` in the main thread, the work saves what it
can (a checkpoint, or nothing half-written: outputs are written atomically) and says so in ``saved``, and the
command ends with one line and exit status 128 + the signal's number, as the shells do.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Interrupted", "signals_interrupt"]

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) or SIGTERM reached the command (a ``KeyboardInterrupt``, so no ``except Exception``
    swallows it). ``saved`` is set by whoever stops the work: one line on what was kept."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.saved = ""
        super().__init__(signal.Signals(signum).name)

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    def message(self, nothing: str = "nothing was saved") -> str:
        """The command's last line: ``stopped by SIGTERM: <saved, or nothing>``."""
        return f"stopped by {self}: {self.saved or nothing}"


@contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise ``Interrupted`` while this holds, in the main thread (elsewhere signals cannot
    be handled, and nothing changes); the handlers before are put back after. A second signal while the first
    is being handled (a checkpoint being written) is ignored, so the save finishes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in STOP_SIGNALS}
    stopping: list[int] = []

    def interrupt(signum: int, frame: object) -> None:
        if stopping:
            return
        stopping.append(signum)
        raise Interrupted(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, interrupt)
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
