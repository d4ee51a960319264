"""The service's signals (SIGTERM / SIGINT stop, SIGHUP reloads) never hang the process: they
are acted on by a relay thread, so a signal landing while the main thread holds the lock of the
event it waits on (as it does entering and leaving each wait) is acted on once it lets go. Each
case runs in a child process, so a hang is a timeout and not a stuck test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

TIMEOUT_S = 60  # a bound for a loaded machine; a hang would never end

LOOP = """
import os, signal, threading
from botkit.runner.loop import Loop, install_signal_handlers

loop = Loop(None, None)  # the handlers touch only its events and stop_signal
undo = install_signal_handlers(loop)
for sig, event in ((signal.SIGHUP, loop.reload_requested), (signal.SIGTERM, loop.stop)):
    with event._cond:  # as inside event.wait(): the main thread holds the event's lock
        os.kill(os.getpid(), sig)
        for _ in range(100_000):  # bytecodes run: a Python-level handler would run here
            pass
    assert event.wait(TIMEOUT), sig
assert loop.wake.is_set() and loop.stop_signal == "SIGTERM", loop.stop_signal
undo()
assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL
print("ok")
"""

RELAY = """
import os, signal, threading
from botkit.signals import relay_signals

got = []
done = threading.Event()
def seen(sig):
    got.append(sig.name)
    if len(got) == 3:
        done.set()
undo = relay_signals({signal.SIGUSR1: seen, signal.SIGUSR2: seen})
for sig in (signal.SIGUSR1, signal.SIGUSR2, signal.SIGUSR1):
    with done._cond:
        os.kill(os.getpid(), sig)
        for _ in range(10_000):
            pass
assert done.wait(TIMEOUT)
undo()
assert got == ["SIGUSR1", "SIGUSR2", "SIGUSR1"], got
assert signal.set_wakeup_fd(-1) == -1  # the undo put back the descriptor it found (none)
print("ok")
"""


FAILING = """
import os, signal, threading
from botkit.signals import relay_signals

first, done = threading.Event(), threading.Event()
calls = []
def first_fails(sig):
    calls.append(sig.name)
    if len(calls) == 1:
        first.set()
        raise RuntimeError("a reload that failed")
    done.set()
undo = relay_signals({signal.SIGHUP: first_fails})
os.kill(os.getpid(), signal.SIGHUP)
assert first.wait(TIMEOUT)
os.kill(os.getpid(), signal.SIGHUP)
assert done.wait(TIMEOUT), calls  # the relay outlived the failing callback
undo()
print("ok")
"""


@pytest.mark.parametrize(
    "script", [LOOP, RELAY, FAILING], ids=["service-loop", "relay", "after-a-failure"]
)
def test_a_signal_while_the_main_thread_holds_the_events_lock_is_acted_on(script: str) -> None:
    code = f"TIMEOUT = {TIMEOUT_S}\n" + textwrap.dedent(script)
    try:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the process hung on the signal")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "ok\n"
