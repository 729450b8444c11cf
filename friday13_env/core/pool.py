"""Worker processes for games, and units of work played in order on them: what the tournament, the benchmark and the
training scripts share.

``worker_pool(processes)`` is the one way the package and its scripts start processes: spawned workers that
- run their numerical libraries (numpy's BLAS) on one thread each (``THREAD_VARIABLES``): the pool already puts a
  process on every core, and a library thread per core in each process made a batched search several times slower;
- ignore Ctrl-C (a terminal sends it to the whole process group; the parent stops them itself);
- never outlive the parent: when it stops with an exception (``KeyboardInterrupt`` or a training script's
  ``Interrupted`` included) the pending work is dropped and the workers end at once, and a worker whose parent was
  killed outright (SIGKILL: no handler ran) ends on its own within ``PARENT_POLL_S``.

``ordered_results(function, units, processes)`` yields ``(unit, function(unit))`` in the order of ``units``,
computed in this process (``processes`` 1) or on such a pool holding at most ``ahead * processes`` units at a time,
so a generator of units is never read far ahead and the memory does not depend on how many there are. A worker that
dies (killed for memory, say) ends it with ``WorkerDied`` instead of a wait without end.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing.context
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import ParamSpec, TypeVar

Unit = TypeVar("Unit")
Result = TypeVar("Result")
Parameters = ParamSpec("Parameters")

DEFAULT_AHEAD = 2
"""Units sent to the pool per process before the oldest one's result is awaited."""
PARENT_POLL_S = 0.5
"""How often a worker checks that the process that started it still runs."""
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
"""Held while a worker is spawned with ``THREAD_VARIABLES`` set: two pools starting workers at once would each take
the other's setting for the user's, and the first to finish would unset it under the second."""


class WorkerDied(RuntimeError):
    """A worker process ended without finishing its unit of work (killed by the system for memory, say) or without
    sending its result back (one that cannot be pickled)."""


def ordered_results(
    function: Callable[[Unit], Result], units: Iterable[Unit], processes: int, ahead: int = DEFAULT_AHEAD
) -> Iterator[tuple[Unit, Result]]:
    """Each unit with ``function(unit)``, in the order of ``units``; ``function`` must be picklable by name
    (a module-level function) when ``processes`` > 1."""
    with worker_pool(processes) as pool:
        if pool is None:
            for unit in units:
                yield unit, function(unit)
            return
        pending: deque[tuple[Unit, Future[Result]]] = deque()
        try:
            for unit in units:
                pending.append((unit, pool.submit(function, unit)))
                if len(pending) >= ahead * processes:
                    oldest, result = pending.popleft()
                    yield oldest, result.result()
            while pending:
                oldest, result = pending.popleft()
                yield oldest, result.result()
        except BrokenProcessPool as error:
            raise WorkerDied(
                f"a worker process ended before finishing its work: killed by the system (for memory, say: run "
                f"again with fewer processes than {processes}), or it could not start or send back its result (one "
                f"process, the same run here, shows the error)"
            ) from error


@contextlib.contextmanager
def worker_pool(processes: int) -> Iterator[ProcessPoolExecutor | None]:
    """``processes`` spawned workers (None for one: the work is done in this process) that never outlive this process
    and run their numerical libraries on one thread each; see the module docstring."""
    if processes <= 1:
        yield None
        return
    context = _OneThreadContext()
    stop = context.RawValue(ctypes.c_bool, False)  # not an Event: setting one waits for its sleepers, a dead one too
    pool = _StoppablePool(processes, mp_context=context, initializer=_start_worker, initargs=(os.getpid(), stop))
    try:
        yield pool
    except BaseException:
        stop.value = True
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)


class _StoppablePool(ProcessPoolExecutor):
    """Runs every call inside ``_unit``, so that a worker told to stop ends at once within a unit of work and never
    while it sends a result back: the pool's reader would wait for the rest of that result without end."""

    def submit(
        self, fn: Callable[Parameters, Result], /, *args: Parameters.args, **kwargs: Parameters.kwargs
    ) -> Future[Result]:
        return super().submit(_unit, fn, *args, **kwargs)


class _OneThreadProcess(multiprocessing.context.SpawnProcess):
    """A spawned worker that starts with ``THREAD_VARIABLES`` at 1 (unless the user set any) and with SIGINT blocked
    until its initializer ignores it: the pool spawns workers as work arrives, not all at the start."""

    def start(self) -> None:
        with _one_thread_each(), _ctrl_c_held():
            super().start()


class _OneThreadContext(multiprocessing.context.SpawnContext):
    Process = _OneThreadProcess


@contextlib.contextmanager
def _one_thread_each() -> Iterator[None]:
    """``THREAD_VARIABLES`` are 1 while a worker is spawned (it inherits this environment) and unset again
    afterwards, unless the user has set any of them."""
    with _SPAWNING:
        added = [] if any(name in os.environ for name in THREAD_VARIABLES) else list(THREAD_VARIABLES)
        try:
            os.environ.update(dict.fromkeys(added, "1"))
            yield
        finally:
            for name in added:
                os.environ.pop(name, None)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """SIGINT is blocked in this thread while a worker starts, so the worker inherits the block: one that arrives
    before the worker's handler is set is dropped by it (no traceback) and kept for this process, which raises
    ``KeyboardInterrupt`` once it is unblocked."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


_UNIT_LOCK = threading.Lock()
"""In a worker: held to enter or leave a unit of work, and by the watcher to end the worker within one."""
_in_unit = False
_stopping = False


def _unit(fn: Callable[Parameters, Result], /, *args: Parameters.args, **kwargs: Parameters.kwargs) -> Result:
    """In a worker: ``fn(*args, **kwargs)``, marked as a unit of work; or the worker's end, once told to stop."""
    global _in_unit
    with _UNIT_LOCK:
        if _stopping:
            os._exit(0)
        _in_unit = True
    try:
        return fn(*args, **kwargs)
    finally:
        with _UNIT_LOCK:
            _in_unit = False


def _start_worker(parent: int, stop: ctypes.c_bool) -> None:
    """Each worker's first call: Ctrl-C is ignored (then unblocked; one pending from the start is discarded), and a
    watcher thread ends the worker when the parent sets ``stop`` (at once within a unit of work; otherwise it may be
    sending a result, and it ends at its next unit or when the pool shuts down) or is gone (killed by SIGKILL, no
    handler ran: the worker would otherwise finish its work for no one)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    threading.Thread(target=_watch_parent, args=(parent, stop), daemon=True, name="watch-parent").start()


def _watch_parent(parent: int, stop: ctypes.c_bool) -> None:
    global _stopping
    while os.getppid() == parent:
        if stop.value and not _stopping:
            with _UNIT_LOCK:
                if _in_unit:
                    os._exit(0)  # at once, even mid-game: the parent has given up on this worker's results
                _stopping = True
        time.sleep(PARENT_POLL_S)
    os._exit(0)  # the parent is gone: no one reads a result, even one half sent
