"""``botkit serve`` beside a running service: ``botkit run`` (not bounded) trades on the paper
exchange every second and holds the journal; ``botkit serve`` reads it meanwhile (SQLite WAL),
and its controls reach the service — a filed cancel is run after the service's next cycle, the
kill switch stops every cycle after it is seen. Real processes, HTTP over loopback."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from botkit.journal import Journal, OrderFilter, Outcome
from tests.e2e.serving import ROOT, WAIT_S, call, service_env, serving

pytestmark = pytest.mark.slow
T = TypeVar("T")


def _until(what: str, probe: Callable[[], T | None]) -> T:
    """Poll a real process's state until ``probe`` gives something (a hang guard of
    ``WAIT_S``, not a timing assertion)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.2)
    raise AssertionError(f"never happened: {what}")


def test_controls_reach_a_running_service_and_serve_reads_while_it_trades(
    tmp_path: Path,
) -> None:
    env = service_env(tmp_path)
    with (
        (tmp_path / "run.err").open("w") as err,
        subprocess.Popen(
            [sys.executable, "-m", "botkit", "run"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=err,
        ) as service,
    ):
        try:
            _until("a journal", lambda: True if (tmp_path / "journal.sqlite").exists() else None)
            with serving(env, tmp_path, "--exchange-every", "0") as served:

                def cycle_after(n: int) -> int | None:
                    last = call(served.url("/api/health")).body.get("last_cycle")
                    return last if isinstance(last, int) and last > n else None

                _until("a first cycle read through the API", lambda: cycle_after(0))
                filed = call(
                    served.url("/api/control/cancel"), method="POST", body={"strategy": "rest"}
                )
                assert filed.status == 202
                done = _until(
                    "the cancel run by the service",
                    lambda: (
                        a
                        if (a := call(served.url(filed.body["href"])).body)["status"] != "pending"
                        else None
                    ),
                )
                assert (done["status"], done["ok"]) == ("done", True), done

                engaged = call(
                    served.url("/api/control/kill-switch"), method="POST", body={"engage": True}
                )
                assert engaged.status == 200

                def seen() -> int | None:
                    events = call(served.url("/api/events?kind=controls")).body["events"]
                    hits = [e for e in events if "engaged by api:alice" in e["text"]]
                    return hits[-1]["cycle_id"] if hits else None

                first = _until("the kill switch journaled by the service", seen)
                _until("two more cycles", lambda: cycle_after(first + 1))
        finally:
            service.send_signal(signal.SIGTERM)
            assert service.wait(WAIT_S) == 0, (tmp_path / "run.err").read_text()[-2000:]
    with Journal(tmp_path / "journal.sqlite", clock=lambda: 0) as journal:
        made = [o for o in journal.orders(OrderFilter()) if (o.cycle_id or 0) >= first]
        before = [o for o in journal.orders(OrderFilter()) if (o.cycle_id or 0) < first]
        asked = [e.text for e in journal.events_after(0, limit=100_000) if "asked by" in e.text]
    assert any(o.outcome is Outcome.ACCEPTED for o in before)  # it was trading
    assert made  # the rule kept firing every second …
    assert {o.outcome for o in made} == {Outcome.REJECTED_LOCAL}  # … and nothing new went out
    assert asked == ["cancel (strategy rest) asked by api:alice through botkit serve"]
