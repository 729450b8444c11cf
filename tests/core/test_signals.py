"""Ctrl-C and SIGTERM as one ``Interrupted`` exception in the main thread, the handlers put back after."""

from __future__ import annotations

import os
import signal
import threading

import pytest

from friday13_env.core.signals import Interrupted, signals_interrupt


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_raises_interrupted_and_the_handlers_come_back(signum: int) -> None:
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(Interrupted) as caught, signals_interrupt():
        os.kill(os.getpid(), signum)
    assert caught.value.signum == signum
    assert str(caught.value) == signal.Signals(signum).name
    assert {s: signal.getsignal(s) for s in before} == before


def test_a_second_signal_does_not_interrupt_the_checkpoint_write() -> None:
    written = []
    with pytest.raises(Interrupted), signals_interrupt():
        try:
            os.kill(os.getpid(), signal.SIGTERM)
        except Interrupted:
            os.kill(os.getpid(), signal.SIGINT)  # arrives while the loop saves
            written.append("checkpoint")
            raise
    assert written == ["checkpoint"]


def test_outside_the_main_thread_nothing_changes() -> None:
    seen = []

    def worker() -> None:
        with signals_interrupt():
            seen.append(signal.getsignal(signal.SIGTERM))

    before = signal.getsignal(signal.SIGTERM)
    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert seen == [before]
