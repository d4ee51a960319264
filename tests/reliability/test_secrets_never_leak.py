"""A configured key, secret and passphrase never appear in anything botkit writes — stdout,
stderr (JSON or text, ``--debug`` included), the journal database and its WAL — on the happy
path and on the crash paths: garbled and failing answers, a wrong secret, an unreachable
exchange, an unusable journal. Each ``botkit run`` is a real subprocess (pf signing, so the
passphrase travels in a header), stopped by SIGTERM when it would otherwise keep retrying.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from tests.reliability.harness import PLACE
from tests.reliability.procs import KEY, PASSPHRASE, SECRET, Service, make_service

pytestmark = pytest.mark.slow


def _forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1], secret.encode().hex()}


def _leaks(folder: Path, texts: list[str]) -> list[str]:
    found: list[str] = []
    blobs = texts + [
        p.read_bytes().decode("latin-1")
        for p in folder.rglob("*")
        if p.is_file() and p.suffix in {".sqlite", ".sqlite-wal", ".out", ".err", ""}
    ]
    for secret in (KEY, SECRET, PASSPHRASE):
        for form in _forms(secret):
            found += [f"{form!r}" for blob in blobs if form in blob]
    return found


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = make_service(tmp_path, extra_env={"BOTKIT_SIGNING": "pf"})
    yield svc
    svc.server.stop()


def _run_then_stop(
    service: Service, *args: str, log: str, placed: bool = False, seen: str = ""
) -> str:
    """Run until orders were placed (``placed``) or the output shows ``seen`` (at most 60 s),
    then SIGTERM: the test waits on what the process did, never on a fixed time."""
    proc = service.start(*args, log=log)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if placed and service.placed() > 0:
                break
            if seen and seen in service.output(log):
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    return service.output(log)


def test_debug_run_through_failing_and_garbled_answers_leaks_nothing(service: Service) -> None:
    faults = service.sim.faults
    faults.add("http_503", method="GET", path="/v3/account/balance", times=2)
    faults.add("truncated", method="POST", path=PLACE, probability=0.3)
    faults.add("html", method="GET", path="/v3/trade/order/opens", times=1)
    faults.add("drop_after", method="POST", path=PLACE, probability=0.2)
    output = _run_then_stop(service, "--debug", log="debug", placed=True)
    assert '"level": {"icon"' in output  # JSON lines were written ...
    assert "DEBUG" in output or "INFO" in output  # ... at debug level
    assert "Traceback" not in output
    assert _leaks(service.folder, [output]) == []
    assert service.placed() > 0


def test_text_logs_leak_nothing_either(service: Service) -> None:
    service.env["BOTKIT_LOG_FORMAT"] = "text"
    service.sim.faults.add("http_500", method="GET", path="/v3/account/balance", times=4)
    output = _run_then_stop(service, "--debug", log="text", seen="cycle 1:")
    assert _leaks(service.folder, [output]) == []


def test_a_wrong_secret_is_reported_without_the_secrets(service: Service) -> None:
    service.env["BOTKIT_API_SECRET"] = SECRET + "-wrong"
    output = _run_then_stop(service, "--debug", log="wrong", seen="exchange error 401")
    assert "exchange error 401: Unauthorized" in output
    assert _leaks(service.folder, [output]) == []


def test_an_unreachable_exchange_leaks_nothing(service: Service) -> None:
    service.env["BOTKIT_BASE_URL"] = "http://127.0.0.1:9"  # discard port: nothing listens
    output = _run_then_stop(service, "--debug", log="unreachable", seen="could not connect")
    assert "could not connect" in output
    assert _leaks(service.folder, [output]) == []


@pytest.mark.parametrize("journal", ["/proc/nope/journal.sqlite", "/dev/null/journal.sqlite"])
def test_an_unusable_journal_is_one_line_without_secrets(service: Service, journal: str) -> None:
    service.env["BOTKIT_JOURNAL"] = journal
    proc = service.start("--once", "--debug", log="journal")
    proc.wait(timeout=60)
    output = service.output("journal")
    assert proc.returncode == 1
    assert "Traceback" not in output
    assert _leaks(service.folder, [output]) == []


def test_settings_errors_never_echo_a_secret(service: Service) -> None:
    service.env["BOTKIT_API_KEY"] = ""  # missing: the error names the variable, not values
    result = subprocess.run(
        [*_botkit(), "run", "--once"],
        env=service.env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2
    assert "BOTKIT_API_KEY" in result.stderr
    assert _leaks(service.folder, [result.stdout, result.stderr]) == []


def _botkit() -> list[str]:
    import sys

    return [sys.executable, "-m", "botkit"]
