"""The service's notifications wired to the loop: :class:`CycleNotes` is called after each cycle
(the loop's ``on_cycle``) and at start, stop and reload, and posts :class:`Note` values to the
:class:`~botkit.service.notifications.Notifications` worker. It never raises into the loop and
never waits for a target: posting only queues.

Fills are not in a cycle's report (an order may fill any time after it was accepted): when a
target asks for fills or the daily summary, the account's new fills are read after each cycle
(``GET /v3/trade/order/trades`` from the last fill seen, page after page, at most
:data:`MAX_FILL_PAGES`), attributed to strategies by the journal, and posted as one note per
cycle (a burst of forty fills is one message).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from loguru import logger

from botkit.exchange.models import Fill, Instrument
from botkit.exchange.paging import iter_pages
from botkit.exchange.queries import FillQuery
from botkit.journal import Journal
from botkit.pipeline import GuardSettings
from botkit.ports.journal import Outcome
from botkit.runner.cycle import CycleReport
from botkit.runner.killswitch import controls
from botkit.runner.pnl import attribute
from botkit.service.notifications import Note, Notifications

__all__ = ["CycleNotes", "journal_owner", "notes_of"]

DAY_MS = 86_400_000
MAX_FILL_PAGES = 20
"""Pages of fills (100 each) read after one cycle at most."""


@dataclass
class CycleNotes:
    """Turns what the loop sees into notes for ``worker``."""

    worker: Notifications
    owner: Callable[[str], tuple[str, str] | None]
    """(strategy, rule) of a client order id, from the journal; None: not botkit's."""
    fills: Callable[[FillQuery], list[Fill]]
    guards: Callable[[], GuardSettings]
    now_ms: Callable[[], int]
    instruments: Callable[[], Mapping[str, Instrument]] = dict
    _since_ms: int | None = None
    _seen: set[str] = field(default_factory=set)
    _engaged: tuple[str | None, str | None] = (None, None)
    _day: int | None = None
    _day_fills: list[Fill] = field(default_factory=list)
    _fill_error_logged: bool = False

    def started(self, mode: str) -> None:
        self._since_ms = self.now_ms()
        self._day = self._since_ms // DAY_MS
        self.worker.post(Note("start", (f"botkit started: {mode}",), "botkit started"))

    def stopped(self, code: int) -> None:
        why = "exit code 0" if code == 0 else f"exit code {code}"
        self.worker.post(Note("stop", (f"botkit stopped ({why})",), "botkit stopped"))

    def reload_failed(self, error: str) -> None:
        self.worker.post(Note("reload_error", (error,), "botkit: reload failed"))

    def after_cycle(self, report: CycleReport) -> None:
        """Everything one cycle gives; a failure here is logged, never raised."""
        try:
            self.worker.post(*notes_of(report, self._strategy_of))
            self._controls()
            if self.worker.wants("fill") or self.worker.wants("daily_summary"):
                self._new_fills()
            self._summary()
        except Exception:  # notifications must never stop trading
            logger.exception("notifications: this cycle's notes were not posted")

    def _strategy_of(self, cl_ord_id: str) -> str:
        found = self.owner(cl_ord_id) if cl_ord_id else None
        return f"{found[0]}/{found[1]}" if found is not None else "(not botkit's)"

    def _controls(self) -> None:
        now = controls(self.guards())
        state = (now.halt, now.kill_switch)
        if state == self._engaged:
            return
        lines = []
        for name, before, after in zip(("halt", "kill switch"), self._engaged, state, strict=True):
            if before != after:
                lines.append(f"{name} ENGAGED: {after}" if after else f"{name} released")
        self._engaged = state
        title = "botkit: kill switch ENGAGED" if any(state) else "botkit: controls released"
        self.worker.post(Note("kill_switch", tuple(lines), title))

    def _new_fills(self) -> None:
        since = self._since_ms if self._since_ms is not None else self.now_ms()

        def fetch(from_id: str | None, limit: int) -> list[Fill]:
            return self.fills(FillQuery(start=since, from_id=from_id, limit=limit, direct="NEXT"))

        try:  # newest first, page after page: more than a page may land between two cycles
            page = list(iter_pages(fetch, limit=100, max_pages=MAX_FILL_PAGES))
        except Exception as exc:  # the next cycle reads again from the same point
            if not self._fill_error_logged:
                self._fill_error_logged = True
                logger.warning("notifications: reading new fills failed: {}", exc)
            return
        self._fill_error_logged = False
        if len(page) >= 100 * MAX_FILL_PAGES:
            logger.warning(
                "notifications: {:,} fills or more since the last cycle: the older ones are"
                " left out of the fill notes and the daily summary",
                len(page),
            )
        fresh = [f for f in page if f.id not in self._seen]
        if not fresh:
            return
        fresh.sort(key=lambda f: (f.cTime or 0, f.id))
        latest = max((f.cTime or since) for f in fresh)
        # the next read starts at latest: the fills stamped with it come back and are skipped
        self._seen = {f.id for f in page if (f.cTime or since) == latest}
        self._since_ms = latest
        self._day_fills += fresh
        if self.worker.wants("fill"):
            lines = tuple(
                f"{self._strategy_of(f.clOrdId)} {f.side.value} {f.qty} {f.symbol} @ {f.px}"
                + (f" fee {f.feeAmt} {f.feeCcy}".rstrip() if f.feeAmt is not None else "")
                for f in fresh
            )
            noun = "fill" if len(fresh) == 1 else "fills"
            self.worker.post(Note("fill", lines, f"botkit: {len(fresh)} {noun}"))

    def _summary(self) -> None:
        """At the first cycle of a new UTC day: the day before's fills, fees and realized PnL
        per strategy (replayed by average cost from the fills seen that day)."""
        day = self.now_ms() // DAY_MS
        if self._day is None:
            self._day = day
        if day == self._day:
            return
        fills, self._day_fills = self._day_fills, []
        previous, self._day = self._day, day
        if not self.worker.wants("daily_summary"):
            return
        owner = {f.clOrdId: o[0] for f in fills if (o := self.owner(f.clOrdId)) is not None}
        ct_vals = {s: i.ctVal for s, i in self.instruments().items()}
        books = attribute(fills, owner, ct_vals)
        per: dict[str, list[Decimal]] = {}
        counts: dict[str, int] = {}
        for (strategy, _symbol, _leg), book in books.items():
            sums = per.setdefault(strategy, [Decimal(0), Decimal(0)])
            sums[0] += book.realized
            sums[1] += book.fees
            counts[strategy] = counts.get(strategy, 0) + book.fills
        lines = tuple(
            f"{s}: {counts[s]} fills, realized PnL {pnl}, fees {fees}"
            for s, (pnl, fees) in sorted(per.items())
        ) or ("no fills",)
        date = _utc_date(previous)
        self.worker.post(Note("daily_summary", lines, f"botkit: summary of {date} (UTC)"))


def journal_owner(journal: Journal) -> Callable[[str], tuple[str, str] | None]:
    """(strategy, rule) of a client order id as ``journal`` holds it."""

    def owner(cl_ord_id: str) -> tuple[str, str] | None:
        record = journal.order(cl_ord_id)
        return None if record is None else (record.strategy, record.rule)

    return owner


def _utc_date(day: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(day * DAY_MS / 1000, tz=UTC).strftime("%Y-%m-%d")


def _outcome_line(strategy_of: Callable[[str], str], cl_ord_id: str, text: str) -> str:
    return f"{strategy_of(cl_ord_id)} {cl_ord_id}: {text}"


def notes_of(report: CycleReport, strategy_of: Callable[[str], str] = lambda _c: "") -> list[Note]:
    """The notes one cycle's report gives: orders the exchange refused, guard trips, a failed
    cycle or read, strategies and rules that failed, orders left unsettled, reload errors."""
    notes: list[Note] = []
    execution = report.execution
    if execution is not None and not execution.dry:
        refused = [
            _outcome_line(strategy_of, o.cl_ord_id, f"code {o.code}: {o.msg}".strip())
            for o in execution.outcomes
            if o.outcome is Outcome.REJECTED
        ]
        if refused:
            notes.append(Note("refused", tuple(refused)))
        if execution.unsettled:
            notes.append(
                Note(
                    "unsettled",
                    tuple(f"{c}: outcome unknown, looked up again" for c in execution.unsettled),
                )
            )
    if report.plan is not None:
        trips = [str(t) for t in report.plan.trips if t.guard != "kill_switch"]
        if trips:
            notes.append(Note("guard", tuple(trips)))
    if report.error:
        event = "read_failed" if report.error.startswith("read failed") else "cycle_failed"
        notes.append(Note(event, (f"cycle {report.cycle_id}: {report.error}",)))
    failed = [f"strategy {n}: {e}" for n, e in report.strategy_errors.items()]
    failed += [f"rule {s}/{r}: {why}" for s, r, why in report.rule_errors]
    if failed:
        notes.append(Note("cycle_failed", tuple(failed)))
    if report.reload is not None and report.reload.errors:
        notes.append(Note("reload_error", tuple(str(e) for e in report.reload.errors)))
    return notes
