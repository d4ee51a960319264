"""The paper account's state file: the simulator's state in SQLite, so that a paper account
survives restarts and crashes (``botkit run`` with ``exchange = "sim"``: ``paper.sqlite`` beside
the journal; ``botkit sim serve --state FILE``).

What is kept: the wallet, open positions, every known order (open and closed) with its fills
so far, executions, closed positions, the position mode, leverage, instrument statuses, the
minute candles (the mark is the last one's close), how far the random walk has stepped, the
last id handed out and the server time of the last change. A restart continues from there:
resting orders rest again, the mark continues from where it was and the walk catches up from
its last step (reseeded from the seed, the symbol and that step: a deterministic path, not the
one the stopped process would have drawn). Fill-less API cancels older than 5 hours are not
read back (history no longer shows them, as in memory).

**Crash safety.** :class:`PaperState` writes what a request changed in one SQLite transaction
*before its answer leaves* (:class:`PersistentApi` saves after every call, the simulator's HTTP
lock held; ``botkit sim serve`` commits groups instead: the requests handled in one turn of its
event loop are saved in one transaction, under that lock, before any of their answers leaves —
:class:`~botkit.sim.server.SimAsgiApp`). A SIGKILL at any point therefore leaves the file at a
request (or group) boundary: either a request's whole effect or none of it, and an order whose
acceptance an answer reported is in the file. The file is in WAL mode; ``synchronous`` is
``NORMAL`` by default: a commit is complete when its WAL frames are written to the operating
system, which keeps them when the process dies however it dies (SIGKILL, OOM, a crash), so the
promise holds without an ``fsync`` per request (``FULL`` adds one: it also survives a power
loss or a kernel crash, at the cost of one disk flush per changed request).
The journal keeps its own (default ``FULL``) setting.

If a save fails (disk full, the file removed), the request answers 500 and every later request
is refused with 503: the account in memory is then ahead of the file, and trading on would
break the promise; restarting continues from the file.

One process holds a state file at a time (an OS lock on ``<state>-lock``, dropped by the kernel
when the holder ends, however it ends); a second one gets :class:`~botkit.errors.PaperStateLocked`.
Readers (``botkit exchange ...`` on paper) take a copy without the lock (:func:`read_copy`).

Only what changed is written: new orders, fills and closed positions by id, orders that were
open at the last save and changed since, the positions and the wallet when an order or fill
changed something, the candles of the symbols whose mark moved, settings when they changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from botkit.clock import ManualClock
from botkit.errors import PaperStateError, PaperStateLocked
from botkit.exchange.models import (
    InstrumentStatus,
    MarginMode,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.filelock import LockBusy, LockUnusable, create_private, lock_path, take
from botkit.sim.accounts import PositionRecord, SimPosition
from botkit.sim.book import OrderState, SimOrder
from botkit.sim.codes import SimError
from botkit.sim.engine import SimEngine
from botkit.sim.history import FillRecord, History
from botkit.sim.prices import MinuteCandle

__all__ = [
    "SCHEMA_VERSION",
    "PaperFile",
    "PaperState",
    "PersistentApi",
    "Restored",
    "Synchronous",
    "lock_path",
    "read_copy",
]

SCHEMA_VERSION = "1"
Synchronous = Literal["NORMAL", "FULL"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS open_orders (
    ord_id INTEGER PRIMARY KEY, cl_ord_id TEXT NOT NULL, symbol TEXT NOT NULL,
    side TEXT NOT NULL, type TEXT NOT NULL, sz TEXT NOT NULL, px TEXT,
    mgn_mode TEXT NOT NULL, pos_side TEXT NOT NULL, reduce_only INTEGER NOT NULL,
    closing INTEGER NOT NULL, tif TEXT NOT NULL, stp TEXT NOT NULL, lever TEXT NOT NULL,
    c_time INTEGER NOT NULL, u_time INTEGER NOT NULL, source TEXT NOT NULL, state TEXT NOT NULL,
    exec_qty TEXT NOT NULL, exec_amt TEXT NOT NULL, exec_px_qty TEXT NOT NULL, fee TEXT NOT NULL,
    cancel_reason TEXT NOT NULL, rev INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS history (first_id INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS account (
    id INTEGER PRIMARY KEY CHECK (id = 1), wallet TEXT NOT NULL, c_time INTEGER NOT NULL,
    u_time INTEGER NOT NULL, ids_last INTEGER NOT NULL, clock_ms INTEGER NOT NULL,
    last_step INTEGER NOT NULL, position_mode TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS positions (
    symbol TEXT NOT NULL, pos_side TEXT NOT NULL, mgn_mode TEXT NOT NULL, qty TEXT NOT NULL,
    avg_px TEXT NOT NULL, c_time INTEGER NOT NULL, u_time INTEGER NOT NULL, pnl TEXT NOT NULL,
    fee TEXT NOT NULL, closed_qty TEXT NOT NULL, close_px_qty TEXT NOT NULL,
    seq INTEGER NOT NULL, PRIMARY KEY (symbol, pos_side)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS levers (
    symbol TEXT NOT NULL, mgn_mode TEXT NOT NULL, pos_side TEXT NOT NULL, lever TEXT NOT NULL,
    PRIMARY KEY (symbol, mgn_mode, pos_side)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS status (symbol TEXT PRIMARY KEY, status TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS candles (
    symbol TEXT NOT NULL, st INTEGER NOT NULL, o TEXT NOT NULL, h TEXT NOT NULL,
    l TEXT NOT NULL, c TEXT NOT NULL, qty TEXT NOT NULL, amt TEXT NOT NULL, tc INTEGER NOT NULL,
    PRIMARY KEY (symbol, st)) WITHOUT ROWID;
"""
_TABLES = ("open_orders", "history", "account", "positions", "levers", "status", "candles")
_PUT_ORDER = (
    "INSERT OR REPLACE INTO open_orders VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)"
)
_PUT_ACCOUNT = "INSERT OR REPLACE INTO account VALUES (1, ?, ?, ?, ?, ?, ?, ?)"
_PUT_POSITION = "INSERT INTO positions VALUES (?,?,?,?,?,?,?,?,?,?,?,?)"
_PUT_CANDLE = "INSERT OR REPLACE INTO candles VALUES (?,?,?,?,?,?,?,?,?)"
_PUT_META = "INSERT OR REPLACE INTO meta VALUES (?, ?)"


@dataclass(frozen=True, slots=True)
class PaperFile:
    """Where a simulator keeps its paper account, and how: ``hold`` it (load, then save every
    change; one process at a time) or read a copy (never written back); ``fresh``: start a
    fresh account there (``botkit sim reset``)."""

    path: Path
    hold: bool = True
    synchronous: Synchronous = "NORMAL"
    command: str = "botkit"
    fresh: bool = False


@dataclass(frozen=True, slots=True)
class Restored:
    """What a state file gave back when it was opened (for the start-up line)."""

    fresh: bool
    forgotten: int = 0
    """Closed orders no longer shown (fill-less cancels older than 5 hours), not read back."""
    open_orders: int = 0
    positions: int = 0
    wallet: Decimal = Decimal(0)
    currency: str = ""

    def describe(self) -> str:
        if self.fresh:
            return f"a fresh paper account ({self.wallet} {self.currency})"
        return (
            f"continued: {self.open_orders} open order(s), {self.positions} position(s),"
            f" wallet {self.wallet} {self.currency}"
        )


# --- rows ------------------------------------------------------------------------------------
# The enums are StrEnums: SQLite and json store them as their text without the (slow)
# ``.value``. Open orders change (fills, cancels): a row each, replaced. Closed orders, fills and
# closed positions never change again: each save appends the new ones as one ``history`` row
# (JSON ``{"o": closed orders, "f": fills, "p": closed positions}``; ``first_id``, the smallest
# id in it, is unique as every id comes from one sequence): a row per record, or a table per
# kind, cost more than the records' text.


def _order_row(o: SimOrder) -> tuple[Any, ...]:
    return (
        o.ord_id,
        o.cl_ord_id,
        o.symbol,
        o.side,
        o.type,
        str(o.sz),
        None if o.px is None else str(o.px),
        o.mgn_mode,
        o.pos_side,
        int(o.reduce_only),
        int(o.closing),
        o.tif,
        o.stp,
        str(o.lever),
        o.c_time,
        o.u_time,
        o.source,
        o.state,
        str(o.exec_qty),
        str(o.exec_amt),
        str(o.exec_px_qty),
        str(o.fee),
        o.cancel_reason,
        o.rev,
    )


def _order(r: tuple[Any, ...] | list[Any]) -> SimOrder:
    return SimOrder(
        ord_id=r[0],
        cl_ord_id=r[1],
        symbol=r[2],
        side=OrderSide(r[3]),
        type=OrderType(r[4]),
        sz=Decimal(r[5]),
        px=None if r[6] is None else Decimal(r[6]),
        mgn_mode=MarginMode(r[7]),
        pos_side=PosSide(r[8]),
        reduce_only=bool(r[9]),
        closing=bool(r[10]),
        tif=TimeInForce(r[11]),
        stp=StpMode(r[12]),
        lever=Decimal(r[13]),
        c_time=r[14],
        u_time=r[15],
        source=r[16],
        state=r[17],
        exec_qty=Decimal(r[18]),
        exec_amt=Decimal(r[19]),
        exec_px_qty=Decimal(r[20]),
        fee=Decimal(r[21]),
        cancel_reason=r[22],
        rev=r[23],
    )


def _ord_id(order: SimOrder) -> int:
    return order.ord_id


def _fill_row(f: FillRecord) -> list[Any]:
    return [
        f.id,
        f.trd_id,
        f.symbol,
        f.ord_id,
        f.cl_ord_id,
        f.side,
        f.mgn_mode,
        f.pos_side,
        f.ord_type,
        f.role,
        str(f.px),
        str(f.qty),
        str(f.value),
        str(f.fee),
        str(f.fee_rate),
        f.c_time,
    ]


def _fill(r: list[Any]) -> FillRecord:
    return FillRecord(
        id=r[0],
        trd_id=r[1],
        symbol=r[2],
        ord_id=r[3],
        cl_ord_id=r[4],
        side=OrderSide(r[5]),
        mgn_mode=MarginMode(r[6]),
        pos_side=PosSide(r[7]),
        ord_type=OrderType(r[8]),
        role=r[9],
        px=Decimal(r[10]),
        qty=Decimal(r[11]),
        value=Decimal(r[12]),
        fee=Decimal(r[13]),
        fee_rate=Decimal(r[14]),
        c_time=r[15],
    )


def _closed_row(p: PositionRecord) -> list[Any]:
    return [
        p.id,
        p.symbol,
        p.side,
        p.mgn_mode,
        p.pos_side,
        str(p.open_avg_px),
        str(p.close_avg_px),
        str(p.closed_qty),
        str(p.pnl),
        str(p.fee),
        p.c_time,
        p.u_time,
    ]


def _closed(r: list[Any]) -> PositionRecord:
    return PositionRecord(
        id=r[0],
        symbol=r[1],
        side=OrderSide(r[2]),
        mgn_mode=MarginMode(r[3]),
        pos_side=PosSide(r[4]),
        open_avg_px=Decimal(r[5]),
        close_avg_px=Decimal(r[6]),
        closed_qty=Decimal(r[7]),
        pnl=Decimal(r[8]),
        fee=Decimal(r[9]),
        c_time=r[10],
        u_time=r[11],
    )


def _position_row(p: SimPosition, seq: int) -> tuple[Any, ...]:
    return (
        p.symbol,
        p.pos_side,
        p.mgn_mode,
        str(p.qty),
        str(p.avg_px),
        p.c_time,
        p.u_time,
        str(p.pnl),
        str(p.fee),
        str(p.closed_qty),
        str(p.close_px_qty),
        seq,  # the account's own order of positions (the order reads list them in)
    )


def _position(r: tuple[Any, ...]) -> SimPosition:
    return SimPosition(
        symbol=r[0],
        pos_side=PosSide(r[1]),
        mgn_mode=MarginMode(r[2]),
        qty=Decimal(r[3]),
        avg_px=Decimal(r[4]),
        c_time=r[5],
        u_time=r[6],
        pnl=Decimal(r[7]),
        fee=Decimal(r[8]),
        closed_qty=Decimal(r[9]),
        close_px_qty=Decimal(r[10]),
    )


def _candle_row(symbol: str, c: MinuteCandle) -> tuple[Any, ...]:
    return (symbol, c.sT, str(c.o), str(c.h), str(c.l), str(c.c), str(c.qty), str(c.amt), c.tc)


def _candle(r: tuple[Any, ...]) -> MinuteCandle:
    return MinuteCandle(
        r[0], Decimal(r[1]), Decimal(r[2]), Decimal(r[3]), Decimal(r[4]), Decimal(r[5]),
        Decimal(r[6]), r[7],
    )  # fmt: skip


# --- opening ---------------------------------------------------------------------------------


def _connect(path: Path, *, read_only: bool = False) -> sqlite3.Connection:
    try:
        if read_only:
            conn = sqlite3.connect(
                f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
            )
        else:
            create_private(path)  # mode 0600 like the journal; SQLite gives -wal and -shm the same
            conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 5000")
        return conn
    except (sqlite3.Error, OSError) as exc:
        raise PaperStateError(
            f"paper account {path}: cannot open it ({exc}) — check the path and its permissions"
        ) from None


def _lock(state: Path, command: str) -> int:
    """Hold ``state`` for this process (:func:`botkit.filelock.take`), or raise
    :class:`PaperStateLocked` naming the holder."""
    path = lock_path(state)
    try:
        return take(state, command)
    except LockBusy as busy:
        raise PaperStateLocked(
            f"paper account {state} is in use by {busy.holder} — one process per paper"
            " account: stop that one first"
        ) from None
    except LockUnusable as bad:
        if bad.step == "create":
            raise PaperStateError(
                f"paper account {state}: cannot create its lock file {path}"
                f" ({bad.detail}) — check the path and its permissions"
            ) from None
        if bad.step == "not_regular":
            raise PaperStateError(f"paper account {state}: {path} is not a regular file") from None
        raise PaperStateError(
            f"paper account {state}: cannot lock {path} ({bad.detail}) —"
            " put it on a local file system"
        ) from None


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    try:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.OperationalError:  # no table yet: a fresh file
        return {}


def _check(engine: SimEngine, meta: dict[str, str], path: Path) -> None:
    """Refuse, in one line, a state file this simulator cannot continue."""
    if meta["schema"] != SCHEMA_VERSION:
        raise PaperStateError(
            f"paper account {path}: written in format {meta['schema']}, this botkit reads"
            f" {SCHEMA_VERSION} — use the botkit that wrote it, or start afresh with"
            " botkit sim reset"
        )
    acc = engine.account
    if meta["currency"] != acc.currency:
        raise PaperStateError(
            f"paper account {path}: settled in {meta['currency']}, the simulator's config says"
            f" {acc.currency} — restore the config, or start afresh with botkit sim reset"
        )


def _check_symbols(engine: SimEngine, used: set[str], path: Path) -> None:
    unknown = sorted(used - set(engine.instruments))
    if unknown:
        raise PaperStateError(
            f"paper account {path}: holds orders or positions on {', '.join(unknown)}, which the"
            " simulator's config no longer lists — add the instrument back, or start afresh"
            " with botkit sim reset"
        )


def _load(conn: sqlite3.Connection, engine: SimEngine, path: Path) -> Restored:
    """Read the state at ``conn`` into ``engine`` (built from the config, untouched so far)."""
    meta = _meta(conn)
    if "schema" not in meta:
        return Restored(True, wallet=engine.account.wallet, currency=engine.account.currency)
    _check(engine, meta, path)
    acc = engine.account
    (account,) = conn.execute(
        "SELECT wallet, c_time, u_time, ids_last, clock_ms, last_step, position_mode FROM account"
    ).fetchall()
    wallet, c_time, u_time, ids_last, clock_ms, last_step, position_mode = account
    clock = engine.clock
    if isinstance(clock, ManualClock) and clock.now_ms() < clock_ms:
        clock.set(clock_ms - clock.offset_ms)  # a manual clock continues where it stopped
    now = engine.clock.now_ms()
    acc.wallet = Decimal(wallet)
    acc.c_time = c_time
    acc.u_time = u_time
    for row in conn.execute("SELECT * FROM positions ORDER BY seq"):
        pos = _position(row)
        acc.positions[(pos.symbol, pos.pos_side)] = pos
    history = engine.history
    orders = [_order(row) for row in conn.execute("SELECT * FROM open_orders")]
    forgotten = 0
    for (data,) in conn.execute("SELECT data FROM history ORDER BY first_id"):
        saved = json.loads(data)
        for record in saved.get("f", ()):
            history.fills.add(_fill(record))
        for record in saved.get("p", ()):
            history.positions.add(_closed(record))
        for record in saved.get("o", ()):
            order = _order(record)
            if History.visible(order, now):
                orders.append(order)
            else:
                forgotten += 1
    orders.sort(key=_ord_id)
    _check_symbols(engine, {o.symbol for o in orders} | {p for p, _ in acc.positions}, path)
    for symbol, word in conn.execute("SELECT symbol, status FROM status"):
        if symbol in engine.status:
            engine.status[symbol] = InstrumentStatus(word)
    candles: dict[str, list[MinuteCandle]] = {}
    for row in conn.execute("SELECT * FROM candles ORDER BY symbol, st"):
        candles.setdefault(row[0], []).append(_candle(row[1:]))
    for symbol, series in engine.prices.items():
        if symbol in candles:
            series.restore(candles[symbol], f"{engine.config.seed}:{symbol}:{last_step}")
    levers = {
        (s, MarginMode(m), PosSide(p)): Decimal(v)
        for s, m, p, v in conn.execute("SELECT * FROM levers")
        if s in engine.instruments
    }
    engine.restore(
        orders=orders,
        levers=levers,
        position_mode=PositionMode(position_mode),
        last_step=last_step,
    )
    engine.ids.resume(ids_last)
    return Restored(
        False,
        forgotten=forgotten,
        open_orders=len(engine.matcher.open),
        positions=len(acc.positions),
        wallet=acc.wallet,
        currency=acc.currency,
    )


_HISTORY_JSON = json.JSONEncoder(separators=(",", ":"), check_circular=False)
"""Rows of plain values (no cycles to look for): about 15 % faster than ``json.dumps``."""


def _put_history(
    conn: sqlite3.Connection,
    orders: list[SimOrder],
    fills: list[FillRecord],
    closed: list[PositionRecord],
) -> None:
    """Append closed orders, fills and closed positions (each ascending) as one row."""
    data: dict[str, list[list[Any]]] = {}
    first = []
    if orders:
        data["o"] = [list(_order_row(o)) for o in orders]
        first.append(orders[0].ord_id)
    if fills:
        data["f"] = [_fill_row(f) for f in fills]
        first.append(fills[0].id)
    if closed:
        data["p"] = [_closed_row(p) for p in closed]
        first.append(closed[0].id)
    conn.execute("INSERT INTO history VALUES (?, ?)", (min(first), _HISTORY_JSON.encode(data)))


def read_copy(path: Path, engine: SimEngine) -> Restored:
    """Read the paper account at ``path`` into ``engine`` without holding it (a copy: nothing
    is ever written back). No file yet: ``engine`` stays a fresh account, and no file is made."""
    if not path.exists():
        return Restored(True, wallet=engine.account.wallet, currency=engine.account.currency)
    conn = _connect(path, read_only=True)
    try:
        conn.execute("BEGIN")  # one snapshot, while the holder may be writing
        return _load(conn, engine, path)
    except sqlite3.Error as exc:
        raise PaperStateError(f"paper account {path}: cannot read it ({exc})") from None
    finally:
        conn.close()


_BACKSTOP_PAGES = 20_000
_CHECKPOINT_S = 0.5


class _Checkpointer:
    """Copies the WAL back into the database every half second on its own thread and
    connection (a PASSIVE checkpoint: it never blocks the writer), so the writer's commits
    never pay for a checkpoint's copy and ``fsync``."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"checkpoint {path}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            conn = sqlite3.connect(self._path, isolation_level=None)
        except sqlite3.Error:
            return  # the writer's own backstop checkpoints then
        try:
            while not self._stop.wait(_CHECKPOINT_S):
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error:
            return
        finally:
            conn.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


class PaperState:
    """A paper account held in its state file: load at open, :meth:`save` after each change."""

    def __init__(
        self,
        path: Path,
        engine: SimEngine,
        *,
        synchronous: Synchronous = "NORMAL",
        command: str = "botkit",
        fresh: bool = False,
    ) -> None:
        """Hold ``path`` (or raise :class:`PaperStateLocked`) and continue the account it holds
        in ``engine`` (a just-built engine); ``fresh``: start a fresh account there instead
        (``botkit sim reset``). No file yet: a fresh account is written at once."""
        self.path = path
        self.engine = engine
        self._fd: int | None = _lock(path, command)
        self._failed = ""
        self._noted: dict[str, tuple[int, int, Decimal, Decimal, Decimal, int]] = {}
        self._rev = self._mark_rev = self._settings_rev = -1
        self._status: dict[str, InstrumentStatus] = {}
        try:
            self._conn = _connect(path)
            try:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute(f"PRAGMA synchronous = {synchronous}")
                # checkpoints (and their fsync) run on a thread of their own, off the answer's
                # path; this connection checkpoints only if that thread falls far behind
                self._conn.execute(f"PRAGMA wal_autocheckpoint = {_BACKSTOP_PAGES}")
                self._conn.executescript(_SCHEMA)
                self.restored = (
                    Restored(True, wallet=engine.account.wallet, currency=engine.account.currency)
                    if fresh
                    else _load(self._conn, engine, path)
                )
            except sqlite3.Error as exc:
                raise PaperStateError(
                    f"paper account {path}: cannot read it ({exc}) — is it a botkit paper"
                    " account? Move it away, or start afresh with botkit sim reset"
                ) from None
            self._checkpointer = _Checkpointer(path)
            self._mark_saved()
            if self.restored.fresh:
                self._save(fresh=True)
            elif self.restored.forgotten:
                self._forget()
        except BaseException:
            self.close()
            raise

    @property
    def failed(self) -> str:
        """Why the last save failed ("" while every save succeeded)."""
        return self._failed

    # --- saving ------------------------------------------------------------------------------

    def _mark_saved(self, *, everything: bool = True) -> None:
        """What the engine holds now is what the file holds (``everything``: look at every
        part; else the candles were noted by :meth:`_write_candles`)."""
        e = self.engine
        m = e.matcher
        h = e.history
        if everything or m.rev != self._rev:
            self._last_order = h.orders.ids[-1] if h.orders.ids else 0
            self._last_fill = h.fills.ids[-1] if h.fills.ids else 0
            self._last_closed = h.positions.ids[-1] if h.positions.ids else 0
            self._open = {oid: (o, o.rev) for oid, o in m.open.items()}
            self._positions = bool(e.account.positions)
        if everything or e.status != self._status:
            self._status = dict(e.status)
        if everything:
            self._candles = {s: self._candle_key(p.current) for s, p in e.prices.items()}
            self._oldest = {s: p.oldest_ms for s, p in e.prices.items()}
        else:
            for symbol, key in self._noted.items():
                self._candles[symbol] = key
                self._oldest[symbol] = e.prices[symbol].oldest_ms
        self._noted.clear()
        self._rev = m.rev
        self._mark_rev = e.mark_rev
        self._settings_rev = e.settings_rev

    @staticmethod
    def _candle_key(c: MinuteCandle) -> tuple[int, int, Decimal, Decimal, Decimal, int]:
        return (id(c), c.sT, c.c, c.h, c.l, c.tc)

    def save(self) -> None:
        """Write what changed since the last save in one transaction (nothing changed: no
        transaction). Raises :class:`PaperStateError` when it cannot (then and from then on)."""
        if self._failed:
            raise PaperStateError(self._failed)
        if self.unsaved():
            self._save(fresh=False)

    def unsaved(self) -> bool:
        """Whether the engine changed since the last save."""
        e = self.engine
        return not (
            e.matcher.rev == self._rev
            and e.mark_rev == self._mark_rev
            and e.settings_rev == self._settings_rev
            and e.status == self._status
        )

    def _save(self, *, fresh: bool) -> None:
        conn = self._conn
        try:
            conn.execute("BEGIN")
            try:
                self._write(conn, fresh=fresh)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
        except (sqlite3.Error, OSError) as exc:
            self._failed = (
                f"paper account {self.path}: cannot be written ({exc}) — the simulator refuses"
                " every request until it is restarted (it then continues from the file)"
            )
            raise PaperStateError(self._failed) from None
        self._mark_saved(everything=fresh)

    def _write(self, conn: sqlite3.Connection, *, fresh: bool) -> None:
        e = self.engine
        m = e.matcher
        acc = e.account
        if fresh:
            for table in _TABLES:
                conn.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
            conn.execute("DELETE FROM meta")
            conn.executemany(
                _PUT_META,
                [
                    ("schema", SCHEMA_VERSION),
                    ("currency", acc.currency),
                    ("start_balance", str(acc.wallet)),
                    ("created_ms", str(e.clock.now_ms())),
                ],
            )
        if fresh or m.rev != self._rev:
            self._write_orders(conn)
            if acc.positions or self._positions:
                conn.execute("DELETE FROM positions")
                conn.executemany(
                    _PUT_POSITION,
                    [_position_row(p, n) for n, p in enumerate(acc.positions.values())],
                )
        if fresh or m.rev != self._rev or e.mark_rev != self._mark_rev:
            self._write_candles(conn, fresh=fresh)
        if fresh or e.settings_rev != self._settings_rev:
            conn.execute("DELETE FROM levers")
            conn.executemany(
                "INSERT INTO levers VALUES (?,?,?,?)",
                [(s, mg, ps, str(v)) for (s, mg, ps), v in e.levers.items()],
            )
        if fresh or e.status != self._status:
            conn.executemany("INSERT OR REPLACE INTO status VALUES (?, ?)", e.status.items())
        conn.execute(
            _PUT_ACCOUNT,
            (
                str(acc.wallet),
                acc.c_time,
                acc.u_time,
                e.ids.last,
                e.clock.now_ms(),
                e.last_step,
                e.position_mode,
            ),
        )

    def _write_orders(self, conn: sqlite3.Connection) -> None:
        """Open orders that changed (a row each); what closed, filled or was closed since the
        last save (one history row)."""
        e = self.engine
        series = e.history.orders
        start = bisect_right(series.ids, self._last_order)
        changed = [o for o, rev in self._open.values() if o.rev != rev]
        ended = [o.ord_id for o in changed if o.state not in OrderState.OPEN]
        if ended:
            conn.executemany("DELETE FROM open_orders WHERE ord_id = ?", [(i,) for i in ended])
        changed += series.records[start:]
        resting = [_order_row(o) for o in changed if o.state in OrderState.OPEN]
        if resting:
            conn.executemany(_PUT_ORDER, resting)
        done = (
            sorted((o for o in changed if o.state not in OrderState.OPEN), key=_ord_id)
            if len(resting) < len(changed)
            else []
        )
        fills = e.history.fills
        new_fills = fills.records[bisect_right(fills.ids, self._last_fill) :]
        closed = e.history.positions
        new_closed = closed.records[bisect_right(closed.ids, self._last_closed) :]
        if done or new_fills or new_closed:
            _put_history(conn, done, new_fills, new_closed)

    def _write_candles(self, conn: sqlite3.Connection, *, fresh: bool) -> None:
        rows: list[tuple[Any, ...]] = []
        for symbol, series in self.engine.prices.items():
            current = series.current
            key = self._candle_key(current)
            if not fresh and key == self._candles[symbol]:
                continue
            self._noted[symbol] = key
            # from the minute saved as current last time (its key's start), which may have moved
            since = series.oldest_ms if fresh else self._candles[symbol][1]
            rows += [_candle_row(symbol, c) for c in series.since(since)]
            oldest = series.oldest_ms
            if not fresh and oldest != self._oldest[symbol]:
                conn.execute("DELETE FROM candles WHERE symbol = ? AND st < ?", (symbol, oldest))
        if rows:
            conn.executemany(_PUT_CANDLE, rows)

    def _forget(self) -> None:
        """Rewrite the history without the forgotten orders (history no longer shows them), so
        the file does not grow with them for ever."""
        h = self.engine.history
        orders = [o for o in h.orders.records if o.state in OrderState.CLOSED]
        fills, closed = h.fills.records, h.positions.records
        conn = self._conn
        try:
            conn.execute("BEGIN")
            conn.execute("DELETE FROM history")
            for at in range(0, max(len(orders), len(fills), len(closed)), 1000):
                part = slice(at, at + 1000)
                _put_history(conn, orders[part], fills[part], closed[part])
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise PaperStateError(f"paper account {self.path}: cannot be written ({exc})") from None

    def close(self) -> None:
        """Let go of the file (what is saved stays); the lock is dropped."""
        checkpointer = getattr(self, "_checkpointer", None)
        if checkpointer is not None:
            checkpointer.stop()
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __repr__(self) -> str:
        return f"PaperState({str(self.path)!r}, held={self._fd is not None})"


class PersistentApi:
    """The wire API with the paper account saved after every call, before its answer leaves
    (the simulator's HTTP layer calls it under its lock). A save that fails turns the answer
    into HTTP 500 and every later one into 503."""

    def __init__(self, api: Any, state: PaperState) -> None:
        self.api = api
        self.state = state
        self.saving = True
        """False while a server commits a group of answers itself (:meth:`SimHttp.handle`
        with ``defer_save``, then :meth:`flush` before any of those answers leaves)."""

    def unsaved(self) -> bool:
        """Whether the engine holds changes a save still has to write (after a failed save
        none: every call is refused with 503 from then on, and those answers report nothing)."""
        return not self.state.failed and self.state.unsaved()

    def flush(self) -> None:
        """Save what changed (one transaction); raises :class:`PaperStateError` when it cannot."""
        self.state.save()

    def is_public(self, method: str, path: str) -> bool:
        return bool(self.api.is_public(method, path))

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        if self.state.failed:
            raise SimError(503, self.state.failed, http_status=503)
        try:
            return self.api.call(method, path, query, body)
        finally:
            if self.saving:
                self.state.save()  # also after a refusal: a step or drift may have moved a mark
