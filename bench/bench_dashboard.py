"""What a dashboard polling every second costs the service.

``python -m bench dashboard``: a real ``botkit run`` (paper trading on the embedded simulator)
with 20 strategies cycling every second (each sends an IOC buy under the mark, cancelled at once,
so the book and the account stay the same size however long it runs), and a real ``botkit
serve`` reading its journal and paper account. Phases without and with a poller alternate in the
same run (off, on, off, on, ...; the poller asks for every endpoint the page reads, once a
second, as the page does): the service's cycle times (from its journal) in the "on" phases are
compared with those of the "off" phases. The target: less than 5 % added.

``BENCH_DASHBOARD_PHASES`` (default 6) and ``BENCH_DASHBOARD_PHASE_S`` (default 12) shorten or
lengthen it; ``BENCH_DASHBOARD_NICE`` runs serve at another ``--nice`` (default: serve's own,
10; 0 shows what serve's lowered priority is worth on a busy machine).
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from contextlib import closing
from pathlib import Path
from typing import IO

from botkit.app.dashboard import POLLED, STATIC
from botkit.cli.serve_cmd import SERVE_NICE
from botkit.sim.config import default_config_text

ROOT = Path(__file__).resolve().parents[1]
STRATEGIES = 20
TOKEN = "bench-dashboard-token-0123456789"  # noqa: S105 - a throwaway token, loopback only
STRATEGY = """\
strategy: NAME
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: probe
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.99, sz: 1, time_in_force: IOC}
"""
TARGET = 0.05


def _env(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BOTKIT_", "NOTIFY_"))}
    env.update(
        BOTKIT_CONFIG=str(folder / "botkit.toml"),
        BOTKIT_SIM_CONFIG=str(folder / "sim.toml"),
        BOTKIT_STRATEGIES_DIR=str(folder / "strategies"),
        BOTKIT_JOURNAL=str(folder / "journal.sqlite"),
        BOTKIT_LOG_FORMAT="json",
        BOTKIT_LOG_LEVEL="WARNING",
    )
    return env


def _last_cycle(journal: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT max(id) FROM cycles WHERE finished_ms IS NOT NULL").fetchone()
    except sqlite3.OperationalError:  # not created yet
        return 0
    return int(row[0] or 0)


def _durations(journal: Path, first: int, last: int) -> list[int]:
    """Milliseconds of the finished cycles ``first``..``last``."""
    with closing(sqlite3.connect(f"file:{journal}?mode=ro", uri=True)) as db:
        rows = db.execute(
            "SELECT finished_ms - started_ms FROM cycles"
            " WHERE id BETWEEN ? AND ? AND finished_ms IS NOT NULL AND error = ''",
            (first, last),
        ).fetchall()
    return [int(r[0]) for r in rows]


class Poller:
    """Every endpoint the page reads, once a second (as the page does at ``?poll=1000``)."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.on = threading.Event()
        self.stop = threading.Event()
        self.rounds = 0
        self.failures = 0
        self.round_s: list[float] = []
        self.path_s: dict[str, list[float]] = {p: [] for p in POLLED}
        self.thread = threading.Thread(target=self._run, daemon=True)

    def get(self, path: str) -> None:
        request = urllib.request.Request(self.base + path)  # noqa: S310 - loopback URL
        request.add_header("Authorization", f"Bearer {TOKEN}")
        try:
            with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
                answer.read()
        except OSError:
            self.failures += 1

    def _run(self) -> None:
        while not self.stop.is_set():
            if not self.on.wait(0.1):
                continue
            started = time.monotonic()
            for path in POLLED:
                asked = time.monotonic()
                self.get(path)
                self.path_s[path].append(time.monotonic() - asked)
            self.rounds += 1
            self.round_s.append(time.monotonic() - started)
            self.stop.wait(max(0.0, 1.0 - (time.monotonic() - started)))


def _botkit(env: dict[str, str], err: IO[str], *args: str) -> subprocess.Popen[str]:
    """``botkit ARGS`` (stdout read by the caller for serve's address; run's is dropped)."""
    return subprocess.Popen(  # noqa: S603 - fixed argv: this interpreter running botkit
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE if args[0] == "serve" else subprocess.DEVNULL,
        stderr=err,
        text=True,
    )


def _wait(what: str, predicate: object, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise RuntimeError(f"bench_dashboard: gave up waiting for {what}")


def run(phases: int, phase_s: float, nice: str) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-dashboard-") as tmp:
        folder = Path(tmp)
        (folder / "strategies").mkdir()
        for i in range(STRATEGIES):
            name = f"s{i:02d}"
            (folder / "strategies" / f"{name}.yaml").write_text(STRATEGY.replace("NAME", name))
        (folder / "botkit.toml").write_text("")
        (folder / "sim.toml").write_text(default_config_text())
        tokens = folder / "tokens"
        tokens.write_text(f"bench:{TOKEN}\n")
        tokens.chmod(0o600)
        journal = folder / "journal.sqlite"
        env = _env(folder)
        with (folder / "run.err").open("w") as run_err, (folder / "serve.err").open("w") as err:
            service = _botkit(env, run_err, "run")
            serve = _botkit(
                env, err, "serve", "--port", "0", "--token-file", str(tokens), "--nice", nice
            )
            try:
                assert serve.stdout is not None
                found = re.search(r"http://127\.0\.0\.1:\d+", serve.stdout.readline())
                if not found:
                    raise RuntimeError("bench_dashboard: botkit serve did not start")
                poller = Poller(found.group(0))
                _wait(
                    "the service's first cycles",
                    lambda: journal.exists() and _last_cycle(journal) >= 5,
                )
                for path in ("/", *STATIC):  # the page loads once
                    poller.get(path)
                poller.thread.start()
                by_mode: dict[bool, list[int]] = {False: [], True: []}
                for phase in range(phases):
                    polling = phase % 2 == 1
                    if polling:
                        poller.on.set()
                    else:
                        poller.on.clear()
                    first = _last_cycle(journal) + 2  # a cycle wholly inside the phase
                    time.sleep(phase_s)
                    last = _last_cycle(journal)
                    got = _durations(journal, first, last)
                    by_mode[polling].extend(got)
                    print(
                        f"  phase {phase + 1}/{phases} poller {'on ' if polling else 'off'}"
                        f" {len(got):3d} cycles, median {statistics.median(got):6.1f} ms",
                        flush=True,
                    )
                poller.stop.set()
                poller.on.set()
                poller.thread.join(30)
            finally:
                for proc in (service, serve):
                    proc.send_signal(signal.SIGTERM)
                for proc in (service, serve):
                    proc.wait(60)
                if serve.stdout is not None:
                    serve.stdout.close()
    off, on = by_mode[False], by_mode[True]
    m_off, m_on = statistics.median(off), statistics.median(on)
    a_off, a_on = statistics.fmean(off), statistics.fmean(on)
    added = m_on / m_off - 1
    print(f"cycle time of botkit run, {STRATEGIES} strategies (1 order each), every 1 s:")
    for label, median, mean, n in (
        ("without a dashboard ", m_off, a_off, len(off)),
        ("polling every second", m_on, a_on, len(on)),
    ):
        print(f"  {label} median {median:6.1f} ms  mean {mean:6.1f} ms  ({n} cycles)")
    print(
        f"  poller: {poller.rounds} rounds of {len(POLLED)} requests, median round"
        f" {statistics.median(poller.round_s) * 1000:.0f} ms, {poller.failures} failed"
    )
    print(
        "  answer times (median ms): "
        + ", ".join(
            f"{p.removeprefix('/api/')} {statistics.median(t) * 1000:.0f}"
            for p, t in poller.path_s.items()
            if t
        )
    )
    verdict = "ok" if added < TARGET else "OVER"
    mean_added = (a_on / a_off - 1) * 100
    print(
        f"  added by the dashboard: {added * 100:+.1f} % (median; mean {mean_added:+.1f} %)"
        f" — target < {TARGET * 100:.0f} %: {verdict}"
    )
    return added


def main(argv: object = None) -> None:
    phases = int(os.environ.get("BENCH_DASHBOARD_PHASES", "6"))
    phase_s = float(os.environ.get("BENCH_DASHBOARD_PHASE_S", "12"))
    nice = os.environ.get("BENCH_DASHBOARD_NICE", str(SERVE_NICE))
    print(f"botkit serve --nice {nice} (the default is {SERVE_NICE})")
    run(max(2, phases), phase_s, nice)


if __name__ == "__main__":
    main()
