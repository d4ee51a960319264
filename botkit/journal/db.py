"""The journal: a SQLite database (WAL) of every cycle, order, outcome and guard trip.

An order's intent is written (and committed) *before* its request leaves, its outcome after;
an order without an outcome is *unsettled* and :func:`botkit.pipeline.reconcile.reconcile` settles
it by looking it up. A trigger makes the final outcome write-once, so every order has exactly one.

``synchronous=FULL`` is the default: in WAL mode NORMAL survives a process crash (SIGKILL) but
may lose the last commits on power loss or an OS crash, and a lost intent is an order at the
exchange the bot no longer knows it sent. FULL costs one fsync per commit; the pipeline writes
a whole batch per commit. The backtest may pass ``synchronous="OFF"`` (nothing real at stake).

Time comes from the injected ``clock`` (Unix ms). One connection, guarded by a lock, so the
submitter's threads may write; readers in other processes (``botkit journal tail``) see committed
records at once thanks to WAL.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from botkit.errors import JournalError
from botkit.intents import Activity
from botkit.journal import queries, writes
from botkit.journal.records import (
    CycleSummary,
    Evaluated,
    EventRecord,
    NewOrder,
    OrderFilter,
    OrderOutcome,
    OrderRecord,
    PruneReport,
    TripRecord,
)
from botkit.journal.schema import MIGRATIONS, SCHEMA_VERSION
from botkit.journal.writes import TripLike

__all__ = ["Journal", "Synchronous", "TripLike"]

Synchronous = Literal["OFF", "NORMAL", "FULL"]


class Journal:
    """The journal database at ``path`` (``":memory:"`` for a throw-away one)."""

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], int],
        synchronous: Synchronous = "FULL",
    ) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL"):
            raise ValueError(f"synchronous must be OFF, NORMAL or FULL, not {synchronous!r}")
        self.path = str(path)
        self._clock = clock
        self._lock = threading.RLock()
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=30
            )
            self._conn.execute("PRAGMA busy_timeout = 30000")
            self._conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # effective on a new file
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(f"PRAGMA synchronous = {synchronous}")
            self._migrate()
            (count,) = self._conn.execute(
                "SELECT COUNT(*) FROM orders WHERE outcome IS NULL AND dry = 0"
            ).fetchone()
            self._unsettled = int(count)
            self._activity_rev = 0
        except (JournalError, sqlite3.Error, OSError) as exc:
            conn = getattr(self, "_conn", None)
            if conn is not None:
                conn.close()
            if isinstance(exc, JournalError):
                raise
            raise JournalError(
                f"journal {self.path}: cannot open ({exc}) — check the path, its permissions"
                " and free disk space"
            ) from exc

    # --- lifecycle ---------------------------------------------------------------------------

    def _migrate(self) -> None:
        (version,) = self._conn.execute("PRAGMA user_version").fetchone()
        if version > SCHEMA_VERSION:
            raise JournalError(
                f"journal {self.path} has schema version {version}, newer than this botkit"
                f" understands ({SCHEMA_VERSION}) — upgrade botkit"
            )
        for target in range(version + 1, SCHEMA_VERSION + 1):
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for statement in MIGRATIONS[target - 1]:
                    self._conn.execute(statement)
                self._conn.execute(f"PRAGMA user_version = {target}")
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    @property
    def clock(self) -> Callable[[], int]:
        """The journal's clock (Unix ms)."""
        return self._clock

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Journal({self.path!r})"

    def _tx(self) -> _Transaction:
        """One write transaction (``with self._tx() as conn:``): committed at the end, rolled
        back on an exception; a SQLite error becomes a :class:`JournalError`."""
        return _Transaction(self)

    @contextmanager
    def _read(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: read failed ({exc})") from exc

    # --- cycles and evaluations --------------------------------------------------------------

    def begin_cycle(
        self, *, dry: bool = False, clock_offset_ms: int | None = None, note: str = ""
    ) -> int:
        now = self._clock()
        with self._tx() as conn:
            cur = conn.execute(
                "INSERT INTO cycles (started_ms, dry, clock_offset_ms, note) VALUES (?, ?, ?, ?)",
                (now, int(dry), clock_offset_ms, note),
            )
            cycle_id = int(cur.lastrowid or 0)
            text = f"cycle {cycle_id} begins" + (" (dry run)" if dry else "")
            if clock_offset_ms is not None:
                text += f", clock offset {clock_offset_ms} ms"
            writes.event(conn, "cycle", text, now=now, cycle_id=cycle_id)
        return cycle_id

    def end_cycle(self, cycle_id: int, *, error: str = "") -> None:
        now = self._clock()
        with self._tx() as conn:
            conn.execute(
                "UPDATE cycles SET finished_ms = ?, error = ? WHERE id = ?", (now, error, cycle_id)
            )
            text = f"cycle {cycle_id} ends" + (f" with error: {error}" if error else "")
            writes.event(conn, "cycle_end", text, now=now, cycle_id=cycle_id)

    def record_evaluations(
        self,
        cycle_id: int | None,
        *,
        strategy: str,
        version: str,
        rules: Sequence[Evaluated],
        dry: bool = False,
    ) -> None:
        """What a strategy's rules saw and decided this cycle (file ``version``)."""
        now = self._clock()
        with self._tx() as conn:
            writes.insert_evaluations(
                conn, cycle_id, strategy=strategy, version=version, rules=rules, dry=dry, now=now
            )
        if any(r.fired for r in rules):
            with self._lock:
                self._activity_rev += 1

    # --- orders ------------------------------------------------------------------------------

    def add_orders(self, cycle_id: int | None, orders: Sequence[NewOrder], *, dry: bool) -> None:
        """Write intents (and orders settled at once: refused locally, dry run) in one commit.

        Call this *before* the request leaves. A live client order id the journal already holds
        is a :class:`~botkit.errors.JournalError` (the planner skips known ids).
        """
        if not orders:
            return
        now = self._clock()
        with self._tx() as conn:
            writes.insert_orders(conn, cycle_id, orders, dry=dry, now=now)
        with self._lock:  # counted once committed
            self._activity_rev += 1
            if not dry:
                self._unsettled += sum(1 for o in orders if o.outcome is None)

    def mark_sent(self, cl_ord_ids: Sequence[str], *, note: str = "") -> None:
        """A request carrying these orders is about to leave (or has left)."""
        now = self._clock()
        with self._tx() as conn:
            for cid in cl_ord_ids:
                conn.execute(
                    "UPDATE orders SET state = CASE WHEN outcome IS NULL THEN 'sent' ELSE state"
                    " END, attempts = attempts + 1, sent_ms = COALESCE(sent_ms, ?)"
                    " WHERE cl_ord_id = ? AND dry = 0",
                    (now, cid),
                )
            writes.event(
                conn,
                "sent",
                f"sent {len(cl_ord_ids)} order(s)" + (f": {note}" if note else ""),
                now=now,
                cl_ord_id=cl_ord_ids[0] if len(cl_ord_ids) == 1 else "",
                detail={"cl_ord_ids": list(cl_ord_ids)},
            )

    def mark_unknown(self, cl_ord_ids: Sequence[str], error: str) -> None:
        """The fate of these orders is unknown (the request left, no answer came)."""
        now = self._clock()
        with self._tx() as conn:
            for cid in cl_ord_ids:
                conn.execute(
                    "UPDATE orders SET state = 'unknown', error = ? WHERE cl_ord_id = ? AND dry = 0"
                    " AND outcome IS NULL",
                    (error, cid),
                )
            writes.event(
                conn,
                "unknown",
                f"outcome unknown for {len(cl_ord_ids)} order(s): {error}",
                now=now,
                detail={"cl_ord_ids": list(cl_ord_ids)},
            )

    def record_event(
        self,
        kind: str,
        text: str,
        *,
        cl_ord_id: str = "",
        detail: dict[str, Any] | None = None,
        cycle_id: int | None = None,
        strategy: str = "",
        rule: str = "",
    ) -> None:
        """A free note in the running log (a retry, a lookup, a re-sync, a cancel)."""
        now = self._clock()
        with self._tx() as conn:
            writes.event(
                conn,
                kind,
                text,
                now=now,
                cycle_id=cycle_id,
                strategy=strategy,
                rule=rule,
                cl_ord_id=cl_ord_id,
                detail=detail,
            )

    def settle(self, outcomes: Sequence[OrderOutcome]) -> None:
        """Record final outcomes in one commit. Settling an order twice is a JournalError."""
        if not outcomes:
            return
        now = self._clock()
        with self._tx() as conn:
            writes.settle_orders(conn, outcomes, now=now, path=self.path)
        with self._lock:
            self._unsettled = max(0, self._unsettled - len(outcomes))

    def record_trips(
        self, cycle_id: int | None, trips: Sequence[TripLike], *, dry: bool = False
    ) -> None:
        if not trips:
            return
        now = self._clock()
        with self._tx() as conn:
            writes.insert_trips(conn, cycle_id, trips, dry=dry, now=now)

    # --- reads -------------------------------------------------------------------------------

    def unsettled(self) -> list[OrderRecord]:
        """Live orders without a final outcome, oldest first."""
        return self.orders(OrderFilter(outcome="unsettled"))

    def has_unsettled(self) -> bool:
        """Whether a live order may lack its final outcome, without a query: a count read at
        open and kept by this journal's own writes (intents add, each settle removes one).
        Another process that settles orders can only leave it too high (then the caller runs
        the query and finds none); one bot owns a journal, so none adds intents behind it."""
        return self._unsettled > 0

    @property
    def activity_revision(self) -> int:
        """Changes whenever this journal commits a write :meth:`activity` may see (a fire, an
        order); while it stays the same, an activity read since an earlier read finds nothing
        new (one bot owns a journal: no other process adds these)."""
        return self._activity_rev

    def known_ids(self, ids: Collection[str]) -> set[str]:
        if not ids:  # a quiet cycle's plan
            return set()
        with self._read() as conn:
            return queries.known_ids(conn, ids)

    def order(self, cl_ord_id: str) -> OrderRecord | None:
        """The live order with this client order id (else the latest dry-run one)."""
        rows = self.orders(OrderFilter(cl_ord_id=cl_ord_id))
        live = [r for r in rows if not r.dry]
        chosen = live or rows
        return chosen[-1] if chosen else None

    def orders(self, flt: OrderFilter | None = None) -> list[OrderRecord]:
        with self._read() as conn:
            return queries.select_orders(conn, flt or OrderFilter())

    def trips(
        self, *, cycle_id: int | None = None, since_ms: int | None = None
    ) -> list[TripRecord]:
        with self._read() as conn:
            return queries.select_trips(conn, cycle_id=cycle_id, since_ms=since_ms)

    def events_after(self, after_id: int = 0, *, limit: int = 1000) -> list[EventRecord]:
        with self._read() as conn:
            return queries.events_after(conn, after_id, limit=limit)

    def events_for(self, cl_ord_id: str) -> list[EventRecord]:
        """One order's history: intent, sends, retries, lookups, outcome."""
        with self._read() as conn:
            return queries.events_for(conn, cl_ord_id)

    def last_event_id(self) -> int:
        with self._read() as conn:
            return queries.last_event_id(conn)

    def cycles(
        self,
        *,
        since_ms: int | None = None,
        until_ms: int | None = None,
        limit: int | None = None,
    ) -> list[CycleSummary]:
        with self._read() as conn:
            return queries.cycle_summaries(conn, since_ms=since_ms, until_ms=until_ms, limit=limit)

    def activity(self, strategy: str, since_ms: int, *, include_dry: bool = False) -> Activity:
        """What each rule of ``strategy`` did since ``since_ms`` (for the rule engine)."""
        with self._read() as conn:
            return queries.activity(conn, strategy, since_ms, include_dry=include_dry)

    # --- maintenance -------------------------------------------------------------------------

    def prune(self, before_ms: int) -> PruneReport:
        """Delete records older than ``before_ms``; unsettled orders and their events are kept
        whatever their age (reconcile still needs them). Frees the space incrementally."""
        with self._tx() as conn:
            counts = writes.delete_before(conn, before_ms)
        with self._lock:
            try:
                self._conn.execute("PRAGMA incremental_vacuum")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise JournalError(f"journal {self.path}: vacuum failed ({exc})") from exc
        return PruneReport(*counts)


class _Transaction:
    """The context manager of :meth:`Journal._tx` (a class: the journal writes several times
    a cycle, and a generator-based context manager cost more than the SQL of a small write)."""

    __slots__ = ("_journal",)

    def __init__(self, journal: Journal) -> None:
        self._journal = journal

    def _failed(self, exc: sqlite3.Error) -> JournalError:
        return JournalError(
            f"journal {self._journal.path}: write failed ({exc}) — check free disk space and"
            " that one bot owns this journal"
        )

    def __enter__(self) -> sqlite3.Connection:
        journal = self._journal
        journal._lock.acquire()
        try:
            journal._conn.execute("BEGIN IMMEDIATE")
        except BaseException as exc:
            journal._lock.release()
            if isinstance(exc, sqlite3.Error):
                raise self._failed(exc) from exc
            raise
        return journal._conn

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        conn = self._journal._conn
        try:
            conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
        except sqlite3.Error as error:
            raise self._failed(error) from error
        finally:
            self._journal._lock.release()
        if isinstance(exc, sqlite3.Error):
            raise self._failed(exc) from exc
