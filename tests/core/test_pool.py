"""The worker pool that the tournament and the benchmark share: results in order, and workers that do not fight
over the cores with their numerical libraries' threads."""

from __future__ import annotations

import os
import signal
import time

import pytest

from friday13_env.core.pool import THREAD_VARIABLES, WorkerDied, ordered_results, worker_pool


def thread_settings(_: int) -> dict[str, str | None]:
    """What a worker's environment says about its numerical libraries' threads."""
    return {name: os.environ.get(name) for name in THREAD_VARIABLES}


def process_id(_: int) -> int:
    return os.getpid()


def square(unit: int) -> int:
    return unit * unit


def test_results_come_in_the_order_of_the_units() -> None:
    assert [result for _, result in ordered_results(square, range(7), processes=2)] == [n * n for n in range(7)]


def test_each_worker_runs_its_numerical_libraries_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every worker is one process per core; a BLAS library that starts a thread per core in each of them puts
    several threads on every core, and a batched search then ran several times slower."""
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    settings = [result for _, result in ordered_results(thread_settings, range(2), processes=2)]
    assert settings == [dict.fromkeys(THREAD_VARIABLES, "1")] * 2
    assert all(name not in os.environ for name in THREAD_VARIABLES)  # this process is left as it was


@pytest.mark.parametrize("name", ["OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"])
def test_a_thread_count_the_user_set_is_kept(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """Whichever variable the user set decides: none is added beside it (OpenBLAS reads its own before OMP's)."""
    for other in THREAD_VARIABLES:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(name, "3")
    settings = [result for _, result in ordered_results(thread_settings, range(2), processes=2)]
    expected = {other: "3" if other == name else None for other in THREAD_VARIABLES}
    assert settings == [expected] * 2
    assert os.environ[name] == "3"


def die_on_three(unit: int) -> int:
    """Ends its worker process as the system ends one that runs out of memory."""
    if unit == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return unit


def test_a_worker_that_dies_ends_the_work_with_a_clear_error() -> None:
    """A pool of ``multiprocessing.Pool`` waited without end for the unit that a dead worker held."""

    def waited_too_long(signum: int, frame: object) -> None:
        raise TimeoutError("ordered_results still waits for a dead worker's unit")

    previous = signal.signal(signal.SIGALRM, waited_too_long)
    signal.alarm(120)
    try:
        with pytest.raises(WorkerDied, match="a worker process ended before finishing its work"):
            for _ in ordered_results(die_on_three, range(8), processes=2):
                pass
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert all(name not in os.environ for name in THREAD_VARIABLES)


def big_result(unit: int) -> bytes:
    """A result that takes a while to send back through the pool's pipe."""
    return bytes(100_000_000)


def test_stopping_while_a_worker_sends_a_large_result_back_ends_at_once() -> None:
    """A worker told to stop ends at once within a unit of work, but not in the middle of sending a result: the pool's
    reader would then wait for the rest of it without end, and so would the stop."""

    def waited_too_long(signum: int, frame: object) -> None:
        raise TimeoutError("the pool still waits for the rest of a result")

    previous = signal.signal(signal.SIGALRM, waited_too_long)
    signal.alarm(120)
    try:
        for attempt in range(3):
            results = ordered_results(big_result, range(8), processes=2)
            assert len(next(results)[1]) == 100_000_000
            started = time.monotonic()
            results.close()  # the other worker is sending its result now, or is about to
            assert time.monotonic() - started < 30, attempt
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_one_process_does_the_work_here() -> None:
    with worker_pool(1) as pool:
        assert pool is None
    assert [pid for _, pid in ordered_results(process_id, range(3), processes=1)] == [os.getpid()] * 3
