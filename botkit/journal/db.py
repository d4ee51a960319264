"""The journal: a SQLite database (WAL) of every cycle, order, outcome and guard trip.

An order's intent is written (and committed) *before* its request leaves, its outcome after;
an order without an outcome is *unsettled* and
:func:`botkit.runner.orders.reconcile.reconcile` settles it by looking it up. A trigger makes
the final outcome write-once, so every order has exactly one.

``synchronous=FULL`` is the default: in WAL mode NORMAL survives a process crash (SIGKILL) but
may lose the last commits on power loss or an OS crash, and a lost intent is an order at the
exchange the bot no longer knows it sent. FULL costs one fsync per commit; the pipeline writes
a cycle's intents and their reserved sends in one commit, its outcomes and the send marks in
another (the cycle's end). The backtest may pass ``synchronous="OFF"`` (nothing real at stake).

Two write modes (``group_rows``, see :class:`Journal`): write-through (each call commits; a
cycle's own rows with its next write) and group commit (the per-cycle bookkeeping rows wait in
memory and go with the next commit). Both store the very same rows with the very same ids;
outcomes may be held for the next write in both (``settle(..., hold=True)``).

Time comes from the injected ``clock`` (Unix ms). One connection, guarded by a lock, so the
submitter's threads may write; readers in other processes (``botkit journal tail``) see committed
records at once thanks to WAL.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from botkit.errors import DuplicateOrderId, JournalError, JournalUntrusted, printable
from botkit.intents import Activity
from botkit.journal import queries, strategies, views, writes
from botkit.journal.conn import RedactingConnection, is_corrupt, journal_failure, untrusted
from botkit.journal.deferred import DeferredIndexes
from botkit.journal.lock import JournalLock, create_private, identity
from botkit.journal.pending import Pending
from botkit.journal.records import (
    ActivityNote,
    ActivitySink,
    CycleSummary,
    Evaluated,
    EventRecord,
    NewOrder,
    OrderFilter,
    OrderOutcome,
    OrderRecord,
    Outcome,
    PruneReport,
    StrategyRecord,
    TripRecord,
)
from botkit.journal.schema import (
    LIVE_KEY,
    MIGRATIONS,
    ORDER_ROW_KINDS,
    SCHEMA_VERSION,
    rotated,
)
from botkit.journal.tx import Transaction, write_failed
from botkit.journal.views import EvaluationRecord
from botkit.journal.writes import TripLike
from botkit.redaction import Redactor

__all__ = ["Journal", "Synchronous", "TripLike"]

Synchronous = Literal["OFF", "NORMAL", "FULL"]


_NO_FILE = (":memory:", "")
"""Paths that name no file of the journal's own: ``":memory:"`` (held in memory) and ``""``
(SQLite's private temporary database: its pages past a small cache go to a file the
operating system deletes when the journal closes)."""


class Journal:
    """The journal database at ``path`` (``":memory:"`` for a throw-away one).

    ``group_rows`` chooses how the per-cycle bookkeeping is written:

    * ``0`` (the default) -- **write-through**: every call commits before it returns, but a
      cycle's row and evaluations (:meth:`begin_cycle`, :meth:`record_evaluations`), which
      wait for the cycle's next write (its intents, an event; :meth:`end_cycle` always
      commits).
    * ``N > 0`` -- **group commit**: cycle rows (:meth:`begin_cycle`, :meth:`end_cycle`),
      evaluation rows (:meth:`record_evaluations`) and events (:meth:`record_event`, and the
      events those calls write) wait in memory, values fixed at the call, and are written in one
      transaction once ``N`` rows are pending, and always *before* (in the same transaction as)
      any other write -- :meth:`add_orders` (an intent is durable together with everything
      journaled before it, before its request leaves), :meth:`mark_sent`, :meth:`mark_unknown`,
      :meth:`settle`, :meth:`record_trips`, :meth:`prune` -- before any read of the tables
      (every public read method, :meth:`activity` included, sees every earlier call), and in
      :meth:`flush` and :meth:`close`. A crash (no close) loses at most the unwritten
      bookkeeping rows -- never an intent, an order state or an outcome, which are committed
      before the call returns (but held outcomes, below).
      Other processes (``botkit journal tail``) see bookkeeping rows up to ``N`` rows late.
      A failed write keeps the pending rows for the next one.

    In either mode ``settle(..., hold=True)`` lets outcomes wait for the next write (the
    cycle's end): a crash before it leaves those orders sent without an outcome, for
    reconcile. ``add_orders(..., reserve_ms=N)`` reserves the intents' sends in their commit:
    a send mark within the reservation is held likewise (:meth:`mark_sent`), and
    :meth:`release_sends` writes the orders never sent back as never sent.
    ``transient=True`` (group commit only; a journal nothing outlives and nothing else writes:
    the backtest's temporary database) keeps the orders in memory too, sent and settled there,
    each written once in its final form; held in no file (``""``, ``":memory:"``) it also
    leaves its secondary indexes out until a read needs them (:mod:`botkit.journal.deferred`).

    ``secrets`` (the API key, secret and passphrase): every text the journal stores passes
    through the log sink's :class:`~botkit.redaction.Redactor` first, so a credential an exchange
    echoes in a message never reaches the file. ``lock``: the process lock of
    :func:`~botkit.journal.lock.lock_journal`, held for this journal and released by
    :meth:`close` — every process that writes a journal holds it. A file journal is created mode
    0600; :meth:`verify` checks that the path still names the file opened (the journal calls it
    at each cycle and before each intent), and a corrupt file is
    :class:`~botkit.errors.JournalUntrusted`.

    Both modes leave exactly the same rows with the same ids: cycle ids come from a counter read
    from the table at open (one process holds a journal: no other adds cycles), an ended
    cycle still pending is written ended (no ``UPDATE``), and the rows keep their call order.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        clock: Callable[[], int],
        synchronous: Synchronous = "FULL",
        group_rows: int = 0,
        transient: bool = False,
        secrets: Iterable[str] = (),
        lock: JournalLock | None = None,
    ) -> None:
        if synchronous not in ("OFF", "NORMAL", "FULL"):
            raise ValueError(f"synchronous must be OFF, NORMAL or FULL, not {synchronous!r}")
        if type(group_rows) is not int or group_rows < 0:
            raise ValueError(
                f"group_rows must be 0 (write-through) or a positive row count, not {group_rows!r}"
            )
        if transient and not group_rows:
            raise ValueError("a transient journal groups its rows: give group_rows too")
        self.path = str(path)
        self._transient = transient
        self._clock = clock
        self._lock = threading.RLock()
        self._group_rows = group_rows
        self._pending = Pending(group_rows)
        self._owner = lock
        self._identity: tuple[int, int] | None = None
        redactor = Redactor(secrets)
        try:
            if self.path not in _NO_FILE:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                create_private(self.path)  # mode 0600; SQLite gives -wal and -shm the same
            self._conn = sqlite3.connect(
                self.path,
                isolation_level=None,
                check_same_thread=False,
                timeout=30,
                cached_statements=256,
                factory=RedactingConnection if redactor else sqlite3.Connection,
            )
            if isinstance(self._conn, RedactingConnection):
                self._conn.redactor = redactor
            self._conn.execute("PRAGMA busy_timeout = 30000")
            self._conn.execute("PRAGMA auto_vacuum = INCREMENTAL")  # effective on a new file
            # a temporary database (``""``) keeps its rollback journal in memory: a file of
            # its own per commit cost a backtest more system time than its whole replay
            mode = "MEMORY" if self.path == "" else "WAL"
            self._conn.execute(f"PRAGMA journal_mode = {mode}")
            self._conn.execute(f"PRAGMA synchronous = {synchronous}")
            # a statement that changes several rows inside a transaction (the grouped inserts
            # and updates) keeps a statement journal: in memory, not in a temporary file of
            # its own opened, written and deleted each time (about 90 system calls a live cycle)
            self._conn.execute("PRAGMA temp_store = MEMORY")
            if self.path not in _NO_FILE:
                self._check_integrity()
            self._migrate()
            (count,) = self._conn.execute(
                "SELECT COUNT(*) FROM orders WHERE outcome IS NULL AND dry = 0"
            ).fetchone()
            self._unsettled = int(count)
            self._deferred: DeferredIndexes | None = (
                DeferredIndexes(self._conn) if transient and self.path in _NO_FILE else None
            )
            """A transient journal in no file: its secondary indexes, dropped until a read
            needs them (:mod:`botkit.journal.deferred`)."""
            self._walks = 0
            """:meth:`iter_order_cells` walks under way: their statements are open, so the
            indexes left out wait (SQLite refuses to create one under an open statement)."""
            self._activity_rev = 0
            self._sinks: list[ActivitySink] = []
            self._live_ids: set[str] = self._written_live_ids() if transient else set()
            """A transient journal's live client order ids, written or waiting (else unused)."""
            self._open_ids: set[str] = set()
            """The live orders this journal added without an outcome and has not settled since:
            :meth:`settle` takes them as open without asking the table (one process writes a
            journal), and each ``UPDATE`` of outcomes checks it changed every row it names."""
            self._last_cycle_id = self._max_cycle_id()
            self._reserved: set[str] = set()
            """Orders reserved by :meth:`add_orders` whose request has not left yet."""
            self._reserved_until = 0
            self._reserve_ms = 0
            if self.path not in _NO_FILE:
                self._identity = identity(self.path)
        except (JournalError, sqlite3.Error, OSError) as exc:
            conn = getattr(self, "_conn", None)
            if conn is not None:
                conn.close()
            if lock is not None:
                lock.release()
            if isinstance(exc, JournalError):
                raise
            if is_corrupt(exc):
                raise untrusted(self.path, exc) from exc
            raise JournalError(
                f"journal {self.path}: cannot open ({exc}) — check the path, its permissions"
                " and free disk space"
            ) from exc

    def _check_integrity(self) -> None:
        """``PRAGMA quick_check`` at open (about 1 ms per MB): a corrupt journal is refused at
        start, not found out mid-cycle."""
        rows = self._conn.execute("PRAGMA quick_check(1)").fetchall()
        if rows != [("ok",)]:
            problem = printable(str(rows[0][0]) if rows else "no answer")[:200]
            raise untrusted(self.path, problem)

    def _written_live_ids(self) -> set[str]:
        """The client order ids of the live orders in the table: a transient journal keeps
        them (and adds each live order it takes) to answer :meth:`known_ids` without a query —
        nothing else writes its table."""
        return {row[0] for row in self._conn.execute(_LIVE_IDS)}

    def _max_cycle_id(self) -> int:
        """The id SQLite gives the next cycle row is this plus one (the largest plus one)."""
        return int(self._conn.execute("SELECT COALESCE(MAX(id), 0) FROM cycles").fetchone()[0])

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
    def group_rows(self) -> int:
        """0: write-through; N: bookkeeping rows are written in groups of N (see the class)."""
        return self._group_rows

    @property
    def schema_version(self) -> int:
        with self._lock:
            return int(self._conn.execute("PRAGMA user_version").fetchone()[0])

    def close(self) -> None:
        """Write the pending bookkeeping rows, then close (closed even when that write fails),
        then release the process lock (if this journal holds one)."""
        with self._lock:
            try:
                self.flush()
            finally:
                try:
                    self._conn.close()
                finally:
                    if self._owner is not None:
                        self._owner.release()

    @property
    def exclusive(self) -> bool:
        """Whether this journal holds the process lock (:func:`~botkit.journal.lock_journal`)."""
        return self._owner is not None and self._owner.held

    def verify(self) -> None:
        """Raise :class:`~botkit.errors.JournalUntrusted` unless the file at the journal's path
        is still the one opened (same device and inode: not deleted, moved or replaced) and the
        lock file is still the one locked (two ``stat`` calls), then drop SQLite's page cache
        so the cycle's reads and writes go to the file and SQLite finds damage there (a
        corrupt page is :class:`~botkit.errors.JournalUntrusted`); about 15 µs, plus reading
        the pages the cycle touches from the OS cache again. Called by
        :meth:`begin_cycle` (write-through) and :meth:`add_orders`, so nothing is written into
        a file nobody will read again."""
        if self._identity is None:
            return
        now = identity(self.path)
        if now != self._identity:
            what = "deleted or moved" if now is None else "replaced by another file"
            raise JournalUntrusted(
                f"journal {self.path} was {what} while this process had it open — stopping:"
                " what it wrote since is in a file nobody will read. Put the original back if"
                " you still have it; the next start opens what is at the path"
            )
        if self._owner is not None:
            self._owner.verify()
        with self._lock:
            try:  # drop the cached pages: what follows reads the file, and meets any damage
                self._conn.execute("PRAGMA shrink_memory")
            except sqlite3.Error as exc:
                raise journal_failure(self.path, exc, "read", "") from exc

    def flush(self) -> None:
        """Write the pending bookkeeping rows now (group commit; nothing to do otherwise)."""
        with self._lock:
            if self._pending.rows:
                with self._tx():
                    pass  # the transaction writes the pending rows first

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

    def _tx(self, events: list[writes.Row] | None = None) -> Transaction:
        """One write transaction (``with self._tx() as conn:``), pending rows first, then
        ``events`` (this write's own event rows, in the same statements)."""
        return Transaction(self._conn, self._lock, self._pending, self.path, events)

    @contextmanager
    def _read(self, *, indexed: bool = True) -> Iterator[sqlite3.Connection]:
        """A read: the pending rows are written first (read-your-writes). ``indexed``: the read
        may search the secondary indexes (a transient journal builds those it left out first,
        :meth:`_build_indexes`); False for a read that scans the table anyway."""
        with self._lock:
            if self._pending.rows:
                self.flush()
            if indexed and self._deferred is not None:
                self._build_indexes()
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise journal_failure(self.path, exc, "read", "") from exc

    def _build_indexes(self) -> None:
        """A transient journal's indexes left out at open, built now if a table they index holds
        a row (over empty tables a read is as quick without them); then kept as usual."""
        deferred = self._deferred
        if deferred is None or self._walks:  # a walk's statement open: a read scans meanwhile
            return
        try:
            if deferred.needed(self._conn):
                deferred.restore(self._conn)
                self._deferred = None
        except sqlite3.Error as exc:
            raise write_failed(self.path, exc) from exc

    @contextmanager
    def _read_orders(self) -> Iterator[sqlite3.Connection]:
        """A read of the ``orders`` table alone, the pending rows left waiting (a backtest
        plans every few candles and each plan's read cut the group commit short): the caller
        adds what a transient journal's pending orders answer, and writes held outcomes first
        when they matter."""
        with self._lock:
            try:
                yield self._conn
            except sqlite3.Error as exc:
                raise journal_failure(self.path, exc, "read", "") from exc

    # --- cycles and evaluations --------------------------------------------------------------

    def begin_cycle(
        self, *, dry: bool = False, clock_offset_ms: int | None = None, note: str = ""
    ) -> int:
        """A new cycle; its id. Its row waits for the cycle's next write (write-through: the
        intents, a send mark, an event, at the latest :meth:`end_cycle`; group commit: see the
        class)."""
        now = self._clock()
        if not self._group_rows:
            self.verify()
        with self._lock:
            self._last_cycle_id = cycle_id = self._last_cycle_id + 1
            full = self._pending.add_cycle(
                cycle_id, now, dry=dry, clock_offset_ms=clock_offset_ms, note=note
            )
            if full and self._group_rows:
                self.flush()
        return cycle_id

    def end_cycle(self, cycle_id: int, *, error: str = "") -> None:
        """The cycle's end (and its error); write-through commits it, with every row of the
        cycle still waiting."""
        now = self._clock()
        with self._lock:
            full = self._pending.add_end(cycle_id, now, error)
            if full or not self._group_rows:
                self.flush()

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
        self.record_cycle_evaluations(cycle_id, [(strategy, version, rules)], dry=dry)

    def record_cycle_evaluations(
        self,
        cycle_id: int | None,
        evaluated: Sequence[tuple[str, str, Sequence[Evaluated]]],
        *,
        dry: bool = False,
    ) -> None:
        """What the rules of several strategies saw and decided this cycle, each as
        ``(strategy, file version, rules)``, in one commit: the rows :meth:`record_evaluations`
        would write for each in turn, with the same ids."""
        now = self._clock()
        rows: list[writes.Row] = []
        fires: list[writes.Row] = []
        for strategy, version, rules in evaluated:
            more_rows, more_fires = writes.evaluation_rows(
                cycle_id, strategy=strategy, version=version, rules=rules, dry=dry, now=now
            )
            rows += more_rows
            fires += more_fires
        with self._lock:
            if fires:
                self._activity_rev += 1
                self._note_fires(evaluated, now, dry)
            if self._pending.add_evaluations(rows, fires) and self._group_rows:
                self.flush()

    # --- activity watchers -------------------------------------------------------------------

    def watch_activity(self, sink: ActivitySink) -> None:
        """Call ``sink`` with an :class:`~botkit.journal.records.ActivityNote` for every later
        write :meth:`activity` may see — each fire, each order added, each order settled with an
        outcome activity does not count, each repair — once it is committed (in group commit:
        once it is pending, which the next read writes first), under the journal's lock. The
        rules' activity cache keeps itself current from these instead of reading the journal
        again."""
        with self._lock:
            self._sinks.append(sink)

    def _notify(self, notes: Sequence[ActivityNote]) -> None:
        if notes:
            for sink in self._sinks:
                sink(notes)

    def _note_fires(
        self, evaluated: Sequence[tuple[str, str, Sequence[Evaluated]]], now: int, dry: bool
    ) -> None:
        if self._sinks:
            self._notify(
                [
                    ActivityNote(strategy, ev.rule, now, "", dry, True)
                    for strategy, _, rules in evaluated
                    for ev in rules
                    if ev.fired
                ]
            )

    # --- orders ------------------------------------------------------------------------------

    def add_orders(
        self,
        cycle_id: int | None,
        orders: Sequence[NewOrder],
        *,
        dry: bool,
        reserve_ms: int = 0,
    ) -> None:
        """Write intents (and orders settled at once: refused locally, dry run) in one commit.

        Call this *before* the request leaves. A live client order id the journal already holds
        (or one named twice) is a :class:`~botkit.errors.DuplicateOrderId`, and nothing of the
        call is written: the executor inserts first and asks :meth:`known_ids` only then (a
        decision taken again is rare; the question cost every cycle a read).

        ``reserve_ms`` > 0 (live): the intents are also *reserved* in that commit — written as
        sent (one attempt), their ``sent_ms`` the end of the reservation, ``reserve_ms`` from
        now: each may leave until then with its send mark held (:meth:`mark_sent`), not
        committed on its own. A crash meanwhile leaves them sent without an outcome, with a
        send time no earlier than their request's, for reconcile. :meth:`release_sends` writes
        those never sent back as never sent. A transient journal reserves nothing.
        """
        if not orders:
            return
        self.verify()
        now = self._clock()
        reserved: list[str] = []
        if self._transient:
            self._add_pending_orders(cycle_id, orders, dry=dry, now=now)
        else:
            if reserve_ms > 0 and not dry:
                rows, events = writes.order_rows(
                    cycle_id, orders, dry=dry, now=now, reserve_until=now + reserve_ms
                )
                reserved = [o.intent.cl_ord_id for o in orders if o.outcome is None]
                with self._lock, self._tx(events) as conn:
                    try:
                        writes.insert_reserved(conn, rows)
                    except sqlite3.IntegrityError as exc:
                        raise _refused(self.path, exc) from exc
                    if self._reserved:  # one end for every reservation: the earlier extended
                        writes.resend_reserved(conn, sorted(self._reserved), now + reserve_ms)
            else:
                rows, events = writes.order_rows(cycle_id, orders, dry=dry, now=now)
                with self._tx(events) as conn:  # the events with those waiting: one statement
                    try:
                        writes.insert_values(conn, writes.ORDER_INSERT, rows)
                    except sqlite3.IntegrityError as exc:
                        raise _refused(self.path, exc) from exc
        with self._lock:  # counted once committed
            if reserved:
                self._reserved.update(reserved)
                self._reserve_ms = reserve_ms
                self._reserved_until = now + reserve_ms
            self._activity_rev += 1
            if not dry:
                self._unsettled += sum(1 for o in orders if o.outcome is None)
                if not self._transient:
                    self._open_ids.update(o.intent.cl_ord_id for o in orders if o.outcome is None)
            if self._sinks:
                self._notify(
                    [
                        ActivityNote(
                            o.intent.strategy,
                            o.intent.rule,
                            now,
                            o.intent.cl_ord_id,
                            dry,
                            o.outcome is None or o.outcome in _COUNTED,
                        )
                        for o in orders
                    ]
                )

    def _add_pending_orders(
        self, cycle_id: int | None, orders: Sequence[NewOrder], *, dry: bool, now: int
    ) -> None:
        """A transient journal's orders wait in memory, refused as the table's unique index
        would refuse them (a live client order id the journal already holds)."""
        with self._lock:
            ids = [] if dry else [o.intent.cl_ord_id for o in orders]
            if ids:
                taken = self._live_ids.intersection(ids)
                if taken or len(set(ids)) != len(ids):
                    duplicate = min(taken) if taken else next(c for c in ids if ids.count(c) > 1)
                    raise DuplicateOrderId(
                        f"journal {self.path}: cannot write (UNIQUE constraint failed:"
                        f" orders.cl_ord_id {duplicate}) — a live order has one client order id"
                    )
            rows, events = writes.order_rows(cycle_id, orders, dry=dry, now=now)
            self._live_ids.update(ids)
            if self._pending.add_orders(rows, events, dry=dry):
                self.flush()

    def mark_sent(self, cl_ord_ids: Sequence[str], *, note: str = "") -> None:
        """A request carrying these orders is about to leave (or has left).

        Committed before it returns — but for orders reserved by :meth:`add_orders` (each
        named once) within their reservation: their mark is already durable as the
        reservation, and the true send time and the ``sent`` event are held for the next
        write, like held outcomes. A mark after the reservation ended is committed, and the
        reservation of the orders still unsent is extended in the same commit."""
        now = self._clock()
        row = writes.event_row(
            "sent",
            f"sent {len(cl_ord_ids)} order(s)" + (f": {note}" if note else ""),
            now=now,
            cl_ord_id=cl_ord_ids[0] if len(cl_ord_ids) == 1 else "",
            detail={"cl_ord_ids": list(cl_ord_ids)},
        )
        with self._lock:
            live = self._pending.live
            if live and all(cid in live for cid in cl_ord_ids):  # a transient journal's
                self._pending.mark_sent(cl_ord_ids, now)
                if self._pending.add_event(row):
                    self.flush()
                return
            reserved = self._reserved
            taken: list[str] = []
            if reserved:
                if (
                    now <= self._reserved_until
                    and reserved.issuperset(cl_ord_ids)
                    and len(set(cl_ord_ids)) == len(cl_ord_ids)
                ):
                    reserved.difference_update(cl_ord_ids)
                    if self._pending.add_sends(cl_ord_ids, now, row) and self._group_rows:
                        self.flush()
                    return
                taken = list(dict.fromkeys(c for c in cl_ord_ids if c in reserved))
            until = now + self._reserve_ms
            with self._tx([row]) as conn:  # the event with the rows waiting: one statement
                if taken:  # the reservation's attempt: this mark counts its own
                    writes.unreserve_attempts(conn, taken)
                writes.mark_sent(conn, cl_ord_ids, now)
                rest = [c for c in reserved if c not in taken] if reserved else []
                if rest:
                    writes.resend_reserved(conn, rest, until)
            if reserved:
                reserved.difference_update(taken)
                self._reserved_until = until

    def release_sends(self) -> None:
        """The sends of the cycle are over (or cut short): the reserved orders whose request
        never left are written back as never sent (``intent`` while open, no attempt, no send
        time), committed with the rows held. Without such orders nothing is written: the held
        send marks and outcomes wait for the next write (write-through: the cycle's end), or
        are committed now in group commit (whose cycle end may wait)."""
        with self._lock:
            unsent = sorted(self._reserved)
            if unsent:
                with self._tx() as conn:
                    writes.release_sends(conn, unsent)
                self._reserved.clear()
            elif self._group_rows and (self._pending.sends or self._pending.settles):
                self.flush()

    def mark_unknown(self, cl_ord_ids: Sequence[str], error: str) -> None:
        """The fate of these orders is unknown (the request left, no answer came)."""
        now = self._clock()
        with self._tx() as conn:
            conn.executemany(
                "UPDATE orders SET state = 'unknown', error = ?"  # noqa: S608
                f" WHERE {LIVE_KEY} = {rotated('?2')} AND dry = 0 AND outcome IS NULL",
                [(error, cid) for cid in cl_ord_ids],
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
        """A free note in the running log (a retry, a lookup, a re-sync, a cancel). Not of a
        kind the journal writes with an order's row (:data:`~botkit.journal.schema.
        ORDER_ROW_KINDS`: found by the row's times, not by the client order id)."""
        if kind in ORDER_ROW_KINDS:
            raise ValueError(f"an event of kind {kind!r} is written with its order's row only")
        now = self._clock()
        row = writes.event_row(
            kind,
            text,
            now=now,
            cycle_id=cycle_id,
            strategy=strategy,
            rule=rule,
            cl_ord_id=cl_ord_id,
            detail=detail,
        )
        with self._lock:
            if self._group_rows or self._pending.rows:  # after the rows waiting, in order
                if self._pending.add_event(row) or not self._group_rows:
                    self.flush()
                return
            try:
                self._conn.execute(_EVENT_ONE, row)  # one statement: atomic on its own
            except sqlite3.Error as exc:
                raise write_failed(self.path, exc) from exc

    def settle(self, outcomes: Sequence[OrderOutcome], *, hold: bool = False) -> None:
        """Record final outcomes in one commit. Settling an order twice is a JournalError.

        ``hold``: the outcomes are checked now but written with the journal's next write (the
        cycle's end, a send mark committed, any read; :meth:`flush`, :meth:`close`)
        instead of committing on their own. A crash before that leaves these orders sent
        without an outcome, which reconcile settles by looking them up — what the caller
        accepts by holding them."""
        if not outcomes:
            return
        now = self._clock()
        with self._lock:
            live = self._pending.live
            if live and all(o.cl_ord_id in live for o in outcomes):  # a transient journal's
                ids = [o.cl_ord_id for o in outcomes]
                open_ids = self._pending.open_ids(ids)
                if len(open_ids) != len(ids):
                    writes.refuse_settle(ids, open_ids, self.path)
                updates, events = writes.settle_rows(outcomes, now=now)
                self._pending.settle(updates)
                full = self._pending.add_events(events)
                self._settled(outcomes, now)
                if full:
                    self.flush()
                return
        ids = [o.cl_ord_id for o in outcomes]
        if hold:
            with self._lock:
                if self._pending.live:  # some of a transient journal's orders wait: write them
                    self.flush()
                if not self._known_open(ids):
                    try:
                        writes.check_open(self._conn, ids, path=self.path, held=self._pending.held)
                    except sqlite3.Error as exc:
                        raise journal_failure(self.path, exc, "read", "") from exc
                updates, events = writes.settle_rows(outcomes, now=now)
                full = self._pending.add_settles(updates, events)
                self._settled(outcomes, now)
                if full and self._group_rows:
                    self.flush()
            return
        with self._lock, self._tx() as conn:
            writes.settle_orders(
                conn, outcomes, now=now, path=self.path, checked=self._known_open(ids)
            )
        with self._lock:
            self._settled(outcomes, now)

    def _known_open(self, ids: Sequence[str]) -> bool:
        """Whether every one of ``ids`` (each named once) is an order this journal added and
        has not settled since: open without a query (the ``UPDATE`` still checks it changed
        each row: another writer of the journal is an error there)."""
        open_ids = self._open_ids
        return bool(open_ids) and open_ids.issuperset(ids) and len(set(ids)) == len(ids)

    def _settled(self, outcomes: Sequence[OrderOutcome], now: int) -> None:
        self._unsettled = max(0, self._unsettled - len(outcomes))
        if self._open_ids:
            self._open_ids.difference_update(o.cl_ord_id for o in outcomes)
        if self._sinks:
            self._notify(
                [
                    ActivityNote("", "", now, o.cl_ord_id, False, False)
                    for o in outcomes
                    if o.outcome not in _COUNTED
                ]
            )

    def repair(self, cl_ord_id: str, ord_id: str, why: str) -> bool:
        """An order the journal settled ``failed`` or ``rejected`` was seen at the exchange:
        correct it to ``accepted`` with the exchange's ``ord_id``, and journal a ``repaired``
        event saying what it was and ``why``. The only change a final outcome may take (the
        schema's trigger allows nothing else). False when there was nothing to repair."""
        now = self._clock()
        with self._tx() as conn:
            row = conn.execute(
                "SELECT outcome, error, msg, strategy, rule, ts_ms FROM orders"  # noqa: S608
                f" WHERE {LIVE_KEY} = {rotated('?1')} AND dry = 0"
                " AND outcome IN ('failed', 'rejected')",
                (cl_ord_id,),
            ).fetchone()
            if row is None:
                return False
            was, error, msg, strategy, rule, ts_ms = row
            text = f"was {was}" + (f" ({error or msg})" if error or msg else "")
            conn.execute(
                "UPDATE orders SET outcome = 'accepted', ord_id = ?, resolved = 1, error = ?,"  # noqa: S608
                f" outcome_ms = ? WHERE {LIVE_KEY} = {rotated('?4')} AND dry = 0",
                (ord_id, f"repaired: {why}; {text}", now, cl_ord_id),
            )
            writes.event(
                conn,
                "repaired",
                f"accepted ordId {ord_id}: {why}; the journal said {text}",
                now=now,
                cl_ord_id=cl_ord_id,
            )
        with self._lock:
            self._activity_rev += 1
            self._notify([ActivityNote(strategy, rule, ts_ms, cl_ord_id, False, True)])
        return True

    def record_trips(
        self, cycle_id: int | None, trips: Sequence[TripLike], *, dry: bool = False
    ) -> None:
        if not trips:
            return
        now = self._clock()
        with self._tx() as conn:
            writes.insert_trips(conn, cycle_id, trips, dry=dry, now=now)

    def record_strategies(self, loaded: Sequence[StrategyRecord]) -> None:
        """Remember strategies as loaded now (name, id tag, version, file, on_delete)."""
        if loaded:
            now = self._clock()
            with self._tx() as conn:
                strategies.upsert_strategies(conn, loaded, now)

    def mark_strategies_removed(self, names: Sequence[str]) -> None:
        """Note that these strategies' files are gone (their row stays: see strategies())."""
        if names:
            now = self._clock()
            with self._tx() as conn:
                strategies.mark_removed(conn, names, now)

    # --- reads -------------------------------------------------------------------------------

    def strategies(self, tag_of: Callable[[str], str]) -> list[StrategyRecord]:
        """Every strategy this journal knows: recorded ones, and those only orders name (with
        ``on_delete=""``, unknown; ``tag_of`` gives their client-order-id tag)."""
        with self._read() as conn:
            return strategies.select_strategies(conn, tag_of)

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
        """Changes whenever this journal takes a write :meth:`activity` may see (a fire, an
        order) — committed, or pending in group commit, which the next read writes first;
        while it stays the same, an activity read since an earlier read finds nothing new
        (one bot owns a journal: no other process adds these)."""
        return self._activity_rev

    def known_ids(self, ids: Collection[str]) -> set[str]:
        if not ids:  # a quiet cycle's plan
            return set()
        if self._transient:  # the table's and those waiting, kept in memory
            with self._lock:
                return self._live_ids.intersection(ids)
        with self._read_orders() as conn:
            found = queries.known_ids(conn, ids)
            if self._pending.live:  # a transient journal's orders not written yet
                found.update(self._pending.live.keys() & ids)
            return found

    def ord_ids(self, ids: Collection[str]) -> dict[str, str]:
        """clOrdId → ordId (``""`` while unsettled) of each of ``ids`` journaled as live."""
        if not ids:
            return {}
        if self._pending.settles:  # an ordId held for the next write
            self.flush()
        with self._read_orders() as conn:
            found = queries.ord_ids(conn, ids)
            if self._pending.live:  # a transient journal's orders not written yet
                found.update(self._pending.ord_ids(ids))
            return found

    def order(self, cl_ord_id: str) -> OrderRecord | None:
        """The live order with this client order id (else the latest dry-run one)."""
        rows = self.orders(OrderFilter(cl_ord_id=cl_ord_id))
        live = [r for r in rows if not r.dry]
        chosen = live or rows
        return chosen[-1] if chosen else None

    def orders(self, flt: OrderFilter | None = None) -> list[OrderRecord]:
        flt = flt or OrderFilter()
        with self._read(indexed=not queries.kept_index(flt)) as conn:
            return queries.select_orders(conn, flt)

    def iter_order_cells(self, flt: OrderFilter | None = None) -> Iterator[queries.OrderCells]:
        """:meth:`orders` one at a time as the plain rows of
        :func:`~botkit.journal.queries.iter_order_cells` (what a backtest's table of orders
        shows, no record built per order: its result over a year of orders). The journal is
        held (its lock) until the iteration ends: write nothing to it meanwhile (a read answers
        as usual)."""
        with self._read(indexed=False) as conn:  # every order in id order: a scan
            self._walks += 1
            try:
                yield from queries.iter_order_cells(conn, flt or OrderFilter())
            finally:
                self._walks -= 1

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

    def last_event(self, kind: str) -> EventRecord | None:
        """The newest event of ``kind`` (e.g. ``orders_not_owned``), or None."""
        with self._read() as conn:
            return queries.last_event(conn, kind)

    def last_event_id(self) -> int:
        with self._read() as conn:
            return queries.last_event_id(conn)

    def latest_evaluations(self, *, include_dry: bool = False) -> list[EvaluationRecord]:
        """The newest journaled evaluation of every (strategy, rule) (the status API)."""
        with self._read() as conn:
            return views.latest_evaluations(conn, include_dry=include_dry)

    def recent_evaluations(
        self, *, limit: int = 100, fired_only: bool = False, include_dry: bool = False
    ) -> list[EvaluationRecord]:
        """The ``limit`` newest journaled evaluations, newest first (the status API)."""
        with self._read() as conn:
            return views.recent_evaluations(
                conn, limit=limit, fired_only=fired_only, include_dry=include_dry
            )

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
        with self._lock:
            self._build_indexes()  # the deletes search the time indexes
            with self._tx() as conn:
                counts = writes.delete_before(conn, before_ms)
                last_cycle_id = self._max_cycle_id()  # as SQLite numbers the next one
                if self._transient:
                    self._live_ids = self._written_live_ids()
            self._last_cycle_id = last_cycle_id
            try:
                self._conn.execute("PRAGMA incremental_vacuum")
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.Error as exc:
                raise journal_failure(self.path, exc, "vacuum", "") from exc
        return PruneReport(*counts)


def _refused(path: str, exc: sqlite3.IntegrityError) -> JournalError:
    """The error of an intents' ``INSERT`` that broke a constraint: the unique live client order
    id's is a :class:`DuplicateOrderId` (the only unique key of ``orders``), any other a failed
    write."""
    if exc.sqlite_errorcode == sqlite3.SQLITE_CONSTRAINT_UNIQUE:
        return DuplicateOrderId(
            f"journal {path}: cannot write ({exc}) — a live order has one client order id"
        )
    return write_failed(path, exc)


_COUNTED = frozenset({Outcome.ACCEPTED, Outcome.DRY_RUN})
"""The final outcomes an order keeps counting with in the rules' activity (see
:func:`~botkit.journal.queries.activity`)."""

_LIVE_IDS = "SELECT cl_ord_id FROM orders WHERE dry = 0"
_EVENT_ONE = writes.EVENT_INSERT + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
