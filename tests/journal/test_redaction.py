"""Credentials an exchange echoes back never reach the journal (nor the logs): the journal stores
every text through the log sink's redactor. A real ``botkit run`` against a loopback simulator
whose answers quote the API key, secret and passphrase in their messages; then the journal's
bytes (database and WAL) and the process output are scanned for every form of each.
"""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from botkit.journal import Journal
from botkit.redaction import Redactor
from botkit.sim.codes import SimError
from tests.reliability.harness import PLACE
from tests.reliability.procs import KEY, PASSPHRASE, SECRET, Service, make_service

pytestmark = pytest.mark.slow

ECHO = f"invalid request for apiKey={KEY} sign={SECRET} passphrase={PASSPHRASE}"


class EchoingExchange:
    """The simulator's wire API, but the order endpoint and the open-orders read quote the
    credentials: a whole-request refusal, then per-order refusals, and a failing read."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self.places = 0
        self.balances = 0

    def is_public(self, method: str, path: str) -> bool:
        result: bool = self._api.is_public(method, path)
        return result

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        if method == "GET" and path == "/v3/trade/order/opens":
            self.balances += 1
            if self.balances == 2:
                raise SimError(50001, ECHO, http_status=200)
        if method == "POST" and path == PLACE:
            self.places += 1
            if self.places == 1:
                raise SimError(51000, ECHO, http_status=200)
            return [
                {"clOrdId": str(o.get("clOrdId", "")), "ordId": "", "code": 51008, "msg": ECHO}
                for o in body or []
            ]
        return self._api.call(method, path, query, body)


def _forms(secret: str) -> set[str]:
    return {secret, quote(secret, safe=""), json.dumps(secret)[1:-1]}


def _leaks(blob: str) -> list[str]:
    return [form for s in (KEY, SECRET, PASSPHRASE) for form in _forms(s) if form in blob]


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    svc = make_service(tmp_path)
    yield svc
    svc.server.stop()


def test_credentials_echoed_by_the_exchange_never_reach_the_journal(service: Service) -> None:
    echo = EchoingExchange(service.sim.http.api)
    service.sim.http.api = echo
    proc = service.start()
    try:
        deadline = time.monotonic() + 60
        while (echo.places < 3 or echo.balances < 3) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.poll() is None, service.output()[-2000:]
        # what the journal holds right now, WAL included (no checkpoint, no close)
        raw = "".join(
            p.read_bytes().decode("latin-1")
            for p in service.folder.glob("journal.sqlite*")
            if p.is_file()
        )
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert echo.places >= 3, "the exchange never saw the orders"
    raw += "".join(p.read_bytes().decode("latin-1") for p in service.folder.glob("journal.sqlite*"))
    assert _leaks(raw) == []
    output = service.output()
    assert _leaks(output) == []
    with Journal(service.journal, clock=lambda: 0) as journal:
        texts = [o.msg for o in journal.orders()] + [e.text for e in journal.events_after(0)]
        cycles = journal.cycles()
    redacted = "invalid request for apiKey=*** sign=*** passphrase=***"
    assert redacted in texts  # the refusals are kept, credentials replaced
    errors = [c.error for c in cycles]
    assert any(redacted in e for e in errors), errors  # the failing read's cycle error too


def test_the_journal_redacts_with_the_log_sinks_redactor(tmp_path: Path) -> None:
    """Every text column a write can fill, through the public journal API."""
    secrets = ("key-AKIA1234", "s3cr3t/with+chars=", "pass phrase!")
    redactor = Redactor(secrets)
    text = f"k={secrets[0]} s={quote(secrets[1], safe='')} p={json.dumps(secrets[2])}"
    assert redactor(text) == 'k=*** s=*** p="***"'
    path = tmp_path / "j.sqlite"
    with Journal(path, clock=lambda: 1, secrets=secrets) as journal:
        cycle = journal.begin_cycle(note=text)
        journal.record_event("note", text, detail={"msg": text}, strategy="s", rule="r")
        journal.mark_unknown(["x"], text)
        journal.end_cycle(cycle, error=text)
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT * FROM cycles").fetchall()
        rows += conn.execute("SELECT * FROM events").fetchall()
        blob = "".join(str(row) for row in rows)
    finally:
        conn.close()
    assert 'k=*** s=*** p="***"' in blob
    for secret in secrets:
        assert secret not in blob
        assert quote(secret, safe="") not in blob
