"""Notifications through Apprise to a real webhook receiver on loopback: ``botkit run`` on the
embedded simulator (a real process) sends grouped fills, refusals and the kill switch; a
receiver that hangs or answers 500 does not hold up cycles and is counted; the URL's token
never reaches the log or the journal."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from botkit.service.metrics import Metrics
from botkit.service.notifications import Note, Notifications, Target, apprise_targets
from botkit.settings import NotifyTarget
from tests.simserve import clean_env

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hook-TOKEN-5f3a9c"  # the secret the URL embeds, looked for in every output
WAIT_S = 60.0
"""A hang guard, not a timing assertion."""

FILLER = """\
strategy: burst
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: buy-three
    when: position.qty == 0
    place:
      ladder: {side: BUY, type: LIMIT, count: 3, from_px: price.mark * 1.003,
               step_px: price.mark * 0.0005, sz: 1}
    max_fires: {count: 1, per: 1d}
"""
REFUSED = """\
strategy: huge
symbol: BTC_USDT_PERP
every: 1s
rules:
  - name: too-big
    when: price.mark > 0
    place:
      order: {side: BUY, type: MARKET, sz: 100}
    max_fires: {count: 1, per: 1d}
"""


class Receiver:
    """A webhook receiver on loopback: records each POST body; ``mode`` ok / fail / hang."""

    def __init__(self, mode: str = "ok") -> None:
        self.mode = mode
        self.bodies: list[dict[str, object]] = []
        self.paths: list[str] = []
        self.got = threading.Condition()
        self.release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with receiver.got:
                    receiver.paths.append(self.path)
                    receiver.bodies.append(json.loads(data or b"{}"))
                    receiver.got.notify_all()
                if receiver.mode == "hang":
                    receiver.release.wait(WAIT_S)
                code = 500 if receiver.mode == "fail" else 200
                self.send_response(code)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.server.server_address[1]}/hook/{TOKEN}"

    def wait_for(
        self, test: Callable[[list[dict[str, object]]], bool], timeout: float = WAIT_S
    ) -> bool:
        with self.got:
            return self.got.wait_for(lambda: test(self.bodies), timeout)

    def messages(self) -> str:
        return "\n".join(f"{b.get('title')}\n{b.get('message')}" for b in self.bodies)


@pytest.fixture
def receiver(request: pytest.FixtureRequest) -> Iterator[Receiver]:
    r = Receiver(getattr(request, "param", "ok"))
    r.thread.start()
    yield r
    r.release.set()
    r.server.shutdown()
    r.server.server_close()


def _env(tmp_path: Path, strategy: str, notify: str) -> dict[str, str]:
    strategies = tmp_path / "strategies"
    strategies.mkdir(exist_ok=True)
    (strategies / "s.yaml").write_text(strategy)
    (tmp_path / "botkit.toml").write_text(notify)
    return {
        **clean_env(),
        "BOTKIT_CONFIG": str(tmp_path / "botkit.toml"),
        "BOTKIT_STRATEGIES_DIR": str(strategies),
        "BOTKIT_JOURNAL": str(tmp_path / "journal.sqlite"),
        "BOTKIT_LOG_FORMAT": "json",
    }


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "botkit", "run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


def _journal_text(path: Path) -> str:
    with sqlite3.connect(path) as db:
        return "\n".join(str(row) for row in db.iterdump())


def test_a_run_that_fills_sends_one_grouped_fill_message_and_no_token(
    tmp_path: Path, receiver: Receiver
) -> None:
    env = _env(tmp_path, FILLER, f'[[notify]]\nurl = "{receiver.url}"\n')
    done = _run(env, "--cycles", "2")
    assert done.returncode == 0, done.stderr
    fills = [b for b in receiver.bodies if "fill" in str(b.get("title"))]
    assert len(fills) == 1, receiver.messages()
    assert fills[0]["title"] == "botkit: 3 fills"
    assert str(fills[0]["message"]).count("burst/buy-three BUY 1 BTC_USDT_PERP @") == 3
    titles = [str(b.get("title")) for b in receiver.bodies]
    assert titles[0] == "botkit started"
    assert titles[-1] == "botkit stopped"
    assert receiver.paths[0] == f"/hook/{TOKEN}"  # the URL was used as given
    assert TOKEN not in done.stderr + done.stdout
    assert TOKEN not in _journal_text(tmp_path / "journal.sqlite")


def test_an_order_the_exchange_refuses_and_the_kill_switch_arrive(
    tmp_path: Path, receiver: Receiver
) -> None:
    env = _env(
        tmp_path,
        REFUSED,
        f'paper_balance = 1\n[[notify]]\nurl = "{receiver.url}"\n'
        'events = ["refused", "kill_switch"]\n',
    )
    assert _run(env, "--once").returncode == 0
    (tmp_path / "botkit.toml").write_text(
        f'paper_balance = 1\nkill_switch = true\n[[notify]]\nurl = "{receiver.url}"\n'
        'events = ["kill_switch"]\n'
    )
    done = _run(env, "--once")
    assert done.returncode == 0, done.stderr
    titles = [str(b.get("title")) for b in receiver.bodies]
    assert titles == ["botkit: 1 order refused by the exchange", "botkit: kill switch ENGAGED"]
    assert "huge/too-big" in str(receiver.bodies[0]["message"])
    assert "code" in str(receiver.bodies[0]["message"])
    assert "kill switch ENGAGED" in str(receiver.bodies[1]["message"])


@pytest.mark.parametrize("receiver", ["hang", "fail"], indirect=True)
def test_a_hanging_or_failing_receiver_holds_up_no_cycle_and_is_logged_once(
    tmp_path: Path, receiver: Receiver
) -> None:
    """The receiver holds the first message until the test ends (hang) or refuses each (500):
    the run still completes its five cycles and exits 0; a failure is one log line."""
    notify = f'[[notify]]\nurl = "{receiver.url}?rto=30"\n'
    env = _env(tmp_path, FILLER.replace("count: 1,", "count: 5,"), notify)
    done = _run(env, "--cycles", "5")
    assert done.returncode == 0, done.stderr
    cycles = _journal_text(tmp_path / "journal.sqlite").count('INSERT INTO "cycles"')
    assert cycles == 5
    assert receiver.bodies  # it was asked
    if receiver.mode == "fail":
        logged = [ln for ln in done.stderr.splitlines() if "notify[0] (json) failed" in ln]
        assert len(logged) == 1, done.stderr
    else:  # still holding the first message: the run ended without it
        assert len(receiver.bodies) == 1
    assert TOKEN not in done.stderr + done.stdout


def test_failures_and_drops_are_counted_in_metrics() -> None:
    failing = Receiver("fail")
    failing.thread.start()
    try:
        metrics = Metrics()
        worker = Notifications(
            apprise_targets([NotifyTarget(url=failing.url)]),
            metrics=metrics,
            queue_size=1,
        )
        worker.post(Note("start", ("one",)))
        assert failing.wait_for(lambda b: len(b) == 1)
        worker.idle.wait(WAIT_S)
        worker.close()
        value = metrics.registry.get_sample_value(
            "botkit_notifications_failed_total", {"target": "notify[0] (json)"}
        )
        assert value == 1
    finally:
        failing.server.shutdown()
        failing.server.server_close()


def test_forty_fills_queued_together_are_one_message(receiver: Receiver) -> None:
    receiver.mode = "hang"  # holds the first message, so the forty queue up behind it
    worker = Notifications(apprise_targets([NotifyTarget(url=receiver.url)]))
    worker.post(Note("start", ("first",)))
    assert receiver.wait_for(lambda b: len(b) == 1)
    worker.post(*(Note("fill", (f"fill {i}",)) for i in range(40)))
    receiver.mode = "ok"
    receiver.release.set()
    assert receiver.wait_for(lambda b: len(b) == 2)
    worker.close()
    assert receiver.bodies[1]["title"] == "botkit: 40 fills"
    assert "... and 20 more" in str(receiver.bodies[1]["message"])
    assert len(receiver.bodies) == 2


def test_a_full_queue_drops_and_counts(receiver: Receiver) -> None:
    receiver.mode = "hang"
    metrics = Metrics()
    worker = Notifications(
        apprise_targets([NotifyTarget(url=receiver.url)]),
        metrics=metrics,
        queue_size=2,
    )
    worker.post(Note("start", ("first",)))
    assert receiver.wait_for(lambda b: len(b) == 1)  # the worker is stuck on it
    worker.post(*(Note("fill", (f"fill {i}",)) for i in range(5)))
    assert worker.dropped == 3
    assert metrics.registry.get_sample_value("botkit_notifications_dropped_total") == 3
    receiver.release.set()
    worker.close()


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[[notify]]\nurl = "json://h/x"\nevents = ["fils"]\n', "did you mean 'fill'?"),
        ('[[notify]]\nurl = "not a url TOKEN-123"\n', "not a notification URL"),
        ('[[notify]]\nurl = "json://h/x"\nevent = ["fill"]\n', "did you mean 'events'?"),
        ('[[notify]]\nurl = "nosuchservice://TOKEN-123"\n', "Apprise does not accept"),
    ],
)
def test_a_bad_target_is_one_line_at_start_up(tmp_path: Path, toml: str, expected: str) -> None:
    env = _env(tmp_path, FILLER, toml)
    done = _run(env, "--once")
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert expected in lines[0]
    assert "TOKEN-123" not in done.stderr


def test_the_url_is_in_no_repr_and_no_description(tmp_path: Path) -> None:
    from botkit.settings import load_settings

    config = tmp_path / "botkit.toml"
    config.write_text(f'[[notify]]\nurl = "tgram://123456:{TOKEN}/987654"\nevents = ["fill"]\n')
    settings = load_settings(config=config, env_file=None)
    assert TOKEN not in repr(settings) + str(settings) + str(settings.describe())
    assert settings.describe()["notify"] == "tgram://******** (fill)"


def test_every_token_a_service_url_embeds_is_redacted() -> None:
    from botkit.app.service import secrets_of
    from botkit.redaction import Redactor
    from botkit.settings import Settings

    settings = Settings.model_construct(
        api_key=None,
        api_secret=None,
        api_passphrase=None,
        notify=(NotifyTarget(url=f"tgram://123456:{TOKEN}/987654"),),
    )
    redact = Redactor(secrets_of(settings))
    said = redact(f"bot {TOKEN} said to 987654 via 123456:{TOKEN}")
    assert TOKEN not in said
    assert "987654" not in said


def test_guard_trips_arrive(tmp_path: Path, receiver: Receiver) -> None:
    notify = f'max_orders_per_cycle = 0\n[[notify]]\nurl = "{receiver.url}"\nevents = ["guard"]\n'
    done = _run(_env(tmp_path, FILLER, notify), "--once")
    assert done.returncode == 0, done.stderr
    assert [b["title"] for b in receiver.bodies] == ["botkit: 3 orders refused by a guard"]
    assert "max_orders_per_cycle" in str(receiver.bodies[0]["message"])


def test_the_first_cycle_of_a_utc_day_sends_the_day_befores_summary_per_strategy() -> None:
    """The clock is injected: the day changes between two cycles."""
    from decimal import Decimal

    from botkit.app.notifications import DAY_MS, CycleNotes
    from botkit.exchange.models import Fill, OrderSide
    from botkit.exchange.queries import FillQuery
    from botkit.pipeline import GuardSettings
    from botkit.runner.cycle import CycleReport

    sent: list[tuple[str, str]] = []
    done = threading.Event()

    def record(title: str, body: str) -> bool:
        sent.append((title, body))
        done.set()
        return True

    worker = Notifications([Target("test", frozenset({"daily_summary"}), record)])
    day = 20_000 * DAY_MS  # 2024-10-04
    clock = [day + 1000]
    fills = [
        Fill(id="1", symbol="BTC_USDT_PERP", clOrdId="a1", side=OrderSide.BUY,
             px=Decimal(100), qty=Decimal(2), cTime=day + 2000, feeAmt=Decimal("0.1")),
        Fill(id="2", symbol="BTC_USDT_PERP", clOrdId="a2", side=OrderSide.SELL,
             px=Decimal(110), qty=Decimal(2), cTime=day + 3000, feeAmt=Decimal("0.2")),
        Fill(id="3", symbol="BTC_USDT_PERP", clOrdId="zz", side=OrderSide.BUY,
             px=Decimal(100), qty=Decimal(1), cTime=day + 4000, feeAmt=Decimal("0.05")),
    ]  # fmt: skip
    owners = {"a1": ("alpha", "buy"), "a2": ("alpha", "sell")}

    def read(query: FillQuery) -> list[Fill]:
        return [f for f in fills if (f.cTime or 0) >= (query.start or 0)]

    notes = CycleNotes(
        worker, owner=owners.get, fills=read, guards=GuardSettings, now_ms=lambda: clock[0]
    )
    notes.started("test")
    notes.after_cycle(CycleReport(now_ms=clock[0]))
    assert not sent  # the same day: nothing yet
    clock[0] = day + DAY_MS + 5
    notes.after_cycle(CycleReport(now_ms=clock[0]))
    assert done.wait(WAIT_S)
    worker.close()
    assert sent == [
        ("botkit: summary of 2024-10-04 (UTC)", "alpha: 2 fills, realized PnL 20, fees 0.3")
    ]


def test_the_service_tells_its_start_a_bad_reload_and_its_stop(
    tmp_path: Path, receiver: Receiver
) -> None:
    """A real service (no --cycles): started, then SIGHUP with a broken settings file, then
    SIGTERM; each arrives, waited for on the receiver (no sleeps)."""
    import signal

    notify = f'[[notify]]\nurl = "{receiver.url}"\nevents = ["start", "stop", "reload_error"]\n'
    env = _env(tmp_path, FILLER, notify)
    with subprocess.Popen(
        [sys.executable, "-m", "botkit", "run"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    ) as proc:
        try:
            assert receiver.wait_for(lambda b: len(b) == 1), "no start message"
            (tmp_path / "botkit.toml").write_text("dry_runn = true\n" + notify)
            proc.send_signal(signal.SIGHUP)
            assert receiver.wait_for(lambda b: len(b) == 2), "no reload message"
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(WAIT_S) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        assert proc.stderr is not None
        assert TOKEN not in proc.stderr.read()
    titles = [b["title"] for b in receiver.bodies]
    assert titles == ["botkit started", "botkit: reload failed", "botkit stopped"]
    assert "did you mean 'dry_run'?" in str(receiver.bodies[1]["message"])


def test_the_plain_words_of_a_service_url_are_no_secrets() -> None:
    # The redactor blanks every occurrence of a secret in every log line and journal text: the
    # words of a URL (its path "botkit/alerts") must not blank a strategy named "grid-alerts".
    from botkit.redaction import Redactor, url_secrets

    redact = Redactor(url_secrets(f"json://localhost:8080/botkit/alerts/{TOKEN}?pass=s3cret"))
    said = redact(f"strategy grid-alerts of botkit: cycle 3 ok; via {TOKEN} with s3cret")
    assert said == "strategy grid-alerts of botkit: cycle 3 ok; via *** with ***"


def test_more_fills_than_a_page_between_two_cycles_are_all_told_and_summed() -> None:
    """The exchange answers at most ``limit`` fills a page, newest first (``from``: below that
    id), as the spec says: 250 fills after one cycle are one note of 250 and the summary's."""
    from decimal import Decimal

    from botkit.app.notifications import DAY_MS, CycleNotes
    from botkit.exchange.models import Fill, OrderSide
    from botkit.exchange.queries import FillQuery
    from botkit.pipeline import GuardSettings
    from botkit.runner.cycle import CycleReport

    sent: list[tuple[str, str]] = []
    both = threading.Event()

    def record(title: str, body: str) -> bool:
        sent.append((title, body))
        if len(sent) == 2:
            both.set()
        return True

    worker = Notifications([Target("test", frozenset({"fill", "daily_summary"}), record)])
    day = 20_000 * DAY_MS
    clock = [day + 1000]
    fills = [
        Fill(id=str(n), symbol="BTC_USDT_PERP", clOrdId=f"a{n}",
             side=OrderSide.BUY if n % 2 else OrderSide.SELL, px=Decimal(100 + n % 2 * 10),
             qty=Decimal(1), cTime=day + 2000 + n, feeAmt=Decimal("0.01"))
        for n in range(1, 251)
    ]  # fmt: skip

    def read(query: FillQuery) -> list[Fill]:
        assert query.limit is not None
        below = int(query.from_id) if query.from_id else len(fills) + 1
        match = [f for f in fills if (f.cTime or 0) >= (query.start or 0) and int(f.id) < below]
        return sorted(match, key=lambda f: -int(f.id))[: query.limit]

    notes = CycleNotes(
        worker,
        owner=lambda cl: ("alpha", "r") if cl else None,
        fills=read,
        guards=GuardSettings,
        now_ms=lambda: clock[0],
    )
    notes.started("test")
    notes.after_cycle(CycleReport(now_ms=clock[0]))  # where the reading starts
    clock[0] = day + DAY_MS + 5
    notes.after_cycle(CycleReport(now_ms=clock[0]))
    assert both.wait(WAIT_S)
    worker.close()
    (title, body), summary = sent
    assert title == "botkit: 250 fills"
    assert body.endswith("\n... and 230 more")  # the worker shows 20 lines of a note
    assert summary == (
        "botkit: summary of 2024-10-04 (UTC)",
        "alpha: 250 fills, realized PnL -1250, fees 2.50",
    )
