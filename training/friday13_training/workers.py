"""Worker processes that never outlive the training script that started them (numpy only: they run games).

``worker_pool`` is the one way the scripts start processes for their games (``train_friday.py``'s DAgger rounds,
``distill.py``'s teachers): spawned workers that ignore Ctrl-C (a terminal sends it to them too; the script stops
them itself) and watch their script. When the script stops with an exception (``Interrupted`` by Ctrl-C or SIGTERM
included) the pending work is dropped and the workers end at once; a worker whose script was killed outright
(SIGKILL: no handler ran) ends on its own within ``PARENT_POLL_S``. A plain ``ProcessPoolExecutor`` left its
workers playing after a SIGTERM, holding the script's output pipes open.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from multiprocessing.synchronize import Event

PARENT_POLL_S = 0.5
"""How often a worker checks that the script that started it still runs."""


def start_worker(parent: int, stop: Event) -> None:
    """Each worker process's first call: Ctrl-C is left to the script (it stops the workers itself), and a
    watcher thread ends the worker when the script sets ``stop`` or is gone (killed by SIGKILL, no handler ran:
    the worker would otherwise wait forever on its task queue, whose writing end it holds too)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(parent, stop), daemon=True, name="watch-parent").start()


def _watch_parent(parent: int, stop: Event) -> None:
    while not stop.wait(PARENT_POLL_S) and os.getppid() == parent:
        pass
    os._exit(0)  # at once, even mid-game: the script has given up on this worker's results


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor | None]:
    """``workers`` spawned processes that play the games (None for one: they are played here), which never outlive
    the script: when it stops with an exception (``Interrupted`` by Ctrl-C or SIGTERM included) the pending games
    are dropped and the workers end at once, and a worker whose script was killed ends on its own
    (``start_worker``)."""
    if workers <= 1:
        yield None
        return
    context = multiprocessing.get_context("spawn")
    stop = context.Event()
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=start_worker, initargs=(os.getpid(), stop))
    try:
        yield pool
    except BaseException:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
