"""Units of work played in order on several processes: what the tournament and the benchmark share.

``ordered_results(function, units, processes)`` yields ``(unit, function(unit))`` in the order of ``units``,
computed in this process (``processes`` 1) or in a ``spawn`` pool that holds at most ``ahead * processes``
units at a time, so a generator of units is never read far ahead and the memory does not depend on how
many there are. Workers ignore Ctrl-C: a terminal sends it to the whole process group, and this process
stops them when the interrupt reaches it. Each worker runs its numerical libraries (numpy's BLAS) on one thread:
the pool already puts a process on every core, and a library thread per core in each process made a batched
search several times slower (``THREAD_VARIABLES``).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.pool
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Unit = TypeVar("Unit")
Result = TypeVar("Result")

DEFAULT_AHEAD = 2
"""Units sent to the pool per process before the oldest one's result is awaited."""
THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "BLIS_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
"""The thread counts of the numerical libraries, read once as a worker imports them: all 1 in the workers, unless the
user has set any of them (``OPENBLAS_NUM_THREADS=1`` would override a user's ``OMP_NUM_THREADS=2``)."""
_SPAWNING = threading.Lock()
"""Held while workers are spawned with ``THREAD_VARIABLES`` set: two pools started at once would each take the other's
setting for the user's, and the first to finish would unset it under the second."""


def ordered_results(
    function: Callable[[Unit], Result], units: Iterable[Unit], processes: int, ahead: int = DEFAULT_AHEAD
) -> Iterator[tuple[Unit, Result]]:
    """Each unit with ``function(unit)``, in the order of ``units``; ``function`` must be picklable by name
    (a module-level function) when ``processes`` > 1."""
    if processes == 1:
        for unit in units:
            yield unit, function(unit)
        return
    with start_pool(processes) as pool:
        pending: deque[tuple[Unit, multiprocessing.pool.AsyncResult[Result]]] = deque()
        for unit in units:
            pending.append((unit, pool.apply_async(function, (unit,))))
            if len(pending) >= ahead * processes:
                oldest, result = pending.popleft()
                yield oldest, result.get()
        while pending:
            oldest, result = pending.popleft()
            yield oldest, result.get()


def start_pool(processes: int) -> multiprocessing.pool.Pool:
    """A ``spawn`` pool whose workers ignore Ctrl-C: a terminal sends it to them too, and this process stops them.

    SIGINT is blocked while they start, so one that arrives before their handler is set is dropped by
    them (no traceback) and kept for this process, which raises ``KeyboardInterrupt`` once it is unblocked.
    """
    blocked = hasattr(signal, "pthread_sigmask")
    if blocked:
        previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        with _one_thread_each():
            return multiprocessing.get_context("spawn").Pool(processes, initializer=_ignore_ctrl_c)
    finally:
        if blocked:
            signal.pthread_sigmask(signal.SIG_SETMASK, previous)


@contextlib.contextmanager
def _one_thread_each() -> Iterator[None]:
    """``THREAD_VARIABLES`` are 1 while the workers are spawned (they inherit this environment) and unset again
    afterwards, unless the user has set any of them."""
    with _SPAWNING:
        added = [] if any(name in os.environ for name in THREAD_VARIABLES) else list(THREAD_VARIABLES)
        os.environ.update(dict.fromkeys(added, "1"))
        try:
            yield
        finally:
            for name in added:
                os.environ.pop(name, None)


def _ignore_ctrl_c() -> None:
    """A worker's initializer: SIGINT is ignored (then unblocked; one pending from the start is discarded)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
