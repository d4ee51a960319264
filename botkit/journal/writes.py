"""The journal's writes: SQL over an open connection, inside the caller's transaction.

:class:`botkit.journal.db.Journal` opens the transaction (one commit per call) and the clock;
these functions only insert and update rows and append the matching event lines.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from decimal import Decimal
from json.encoder import encode_basestring_ascii
from typing import Any, Protocol

from botkit.errors import JournalError
from botkit.journal.records import Evaluated, NewOrder, OrderOutcome, OrderState, Outcome

__all__ = [
    "TripLike",
    "delete_before",
    "event",
    "insert_evaluations",
    "insert_orders",
    "insert_trips",
    "settle_orders",
]


class TripLike(Protocol):
    """What the journal reads of a guard trip (:class:`botkit.pipeline.risk.GuardTrip`)."""

    @property
    def guard(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def strategy(self) -> str | None: ...
    @property
    def cl_ord_id(self) -> str | None: ...
    @property
    def limit(self) -> Decimal | None: ...
    @property
    def value(self) -> Decimal | None: ...
    @property
    def message(self) -> str: ...


def _dec(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def _json(value: Any) -> str:
    """Compact JSON with sorted keys; values it cannot encode as their ``str``."""
    if type(value) is dict and all(type(k) is str for k in value):  # rule inputs, each cycle
        parts = []
        for key in sorted(value):
            encode = _PLAIN.get(type(item := value[key]))
            if encode is None:
                return _dumps(value)
            parts.append(f"{_string(key)}:{encode(item)}")
        return "{" + ",".join(parts) + "}"
    return _dumps(value)


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


_string = encode_basestring_ascii  # what json.dumps uses for a str (ensure_ascii)
_PLAIN: dict[type, Callable[[Any], str]] = {
    str: _string,
    Decimal: lambda d: _string(str(d)),  # default=str
    bool: lambda b: "true" if b else "false",
    int: int.__repr__,
    type(None): lambda _: "null",
}
"""Exactly what :func:`_dumps` writes for a value of each of these types."""


def event(
    conn: sqlite3.Connection,
    kind: str,
    text: str,
    *,
    now: int,
    cycle_id: int | None = None,
    strategy: str = "",
    rule: str = "",
    cl_ord_id: str = "",
    detail: dict[str, Any] | None = None,
) -> None:
    """Append one line to the running log."""
    conn.execute(
        "INSERT INTO events (ts_ms, cycle_id, kind, strategy, rule, cl_ord_id, text, detail)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (now, cycle_id, kind, strategy, rule, cl_ord_id, text, _json(detail) if detail else "{}"),
    )


def insert_evaluations(
    conn: sqlite3.Connection,
    cycle_id: int | None,
    *,
    strategy: str,
    version: str,
    rules: Sequence[Evaluated],
    dry: bool,
    now: int,
) -> None:
    conn.executemany(
        "INSERT INTO evaluations (cycle_id, ts_ms, dry, strategy, version, rule, fired,"
        " reason, inputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                cycle_id,
                now,
                int(dry),
                strategy,
                version,
                ev.rule,
                int(ev.fired),
                ev.reason,
                _json(ev.inputs),
            )
            for ev in rules
        ],
    )
    for ev in rules:
        if ev.fired:
            event(
                conn,
                "fire",
                f"{strategy}/{ev.rule} fired",
                now=now,
                cycle_id=cycle_id,
                strategy=strategy,
                rule=ev.rule,
                detail={"inputs": ev.inputs},
            )


def insert_orders(
    conn: sqlite3.Connection,
    cycle_id: int | None,
    orders: Sequence[NewOrder],
    *,
    dry: bool,
    now: int,
) -> None:
    for order in orders:
        i = order.intent
        final = order.outcome is not None
        conn.execute(
            "INSERT INTO orders (cycle_id, ts_ms, dry, strategy, rule, slot, leg,"
            " cl_ord_id, symbol, side, type, pos_side, mgn_mode, reduce_only, intent_px,"
            " intent_sz, px, sz, notes, inputs, request, state, outcome, reasons,"
            " outcome_ms) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cycle_id,
                now,
                int(dry),
                i.strategy,
                i.rule,
                i.slot,
                i.leg,
                i.cl_ord_id,
                i.symbol,
                i.side.value,
                i.type.value,
                i.pos_side.value,
                i.mgn_mode.value,
                int(i.reduce_only),
                _dec(i.px),
                _dec(i.sz),
                _dec(order.px),
                _dec(order.sz),
                _json(list(order.notes)),
                _json(dict(i.inputs)),
                None if order.wire is None else _json(order.wire),
                OrderState.FINAL.value if final else OrderState.INTENT.value,
                order.outcome.value if order.outcome else None,
                _json(list(order.reasons)),
                now if final else None,
            ),
        )
        what = f"{i.side.value} {order.sz if order.sz is not None else i.sz} {i.symbol}"
        what += f" {i.type.value}" + (f" @ {order.px}" if order.px is not None else "")
        if order.outcome is Outcome.REJECTED_LOCAL:
            kind, text = "rejected_local", f"refused {what}: " + "; ".join(order.reasons)
        elif order.outcome is Outcome.DRY_RUN:
            kind, text = "dry_run", f"dry run: would send {what}"
        else:
            kind, text = "intent", f"intent {what}"
        if order.notes:
            text += " (rounded " + "; ".join(order.notes) + ")"
        event(
            conn,
            kind,
            text,
            now=now,
            cycle_id=cycle_id,
            strategy=i.strategy,
            rule=i.rule,
            cl_ord_id=i.cl_ord_id,
        )


def settle_orders(
    conn: sqlite3.Connection, outcomes: Sequence[OrderOutcome], *, now: int, path: str
) -> None:
    for out in outcomes:
        cur = conn.execute(
            "UPDATE orders SET state = 'final', outcome = ?, ord_id = ?, code = ?, msg = ?,"
            " error = ?, resolved = ?, reasons = ?, outcome_ms = ?"
            " WHERE cl_ord_id = ? AND dry = 0 AND outcome IS NULL",
            (
                out.outcome.value,
                out.ord_id,
                out.code,
                out.msg,
                out.error,
                int(out.resolved),
                _json(list(out.reasons)),
                now,
                out.cl_ord_id,
            ),
        )
        if cur.rowcount != 1:
            raise JournalError(
                f"journal {path}: order {out.cl_ord_id} is unknown or already"
                " settled — an order has exactly one final outcome"
            )
        text = f"{out.outcome.value}"
        if out.ord_id:
            text += f" ordId {out.ord_id}"
        if out.code is not None:
            text += f" code {out.code}"
        if out.msg:
            text += f": {out.msg}"
        if out.error:
            text += f" ({out.error})"
        if out.resolved:
            text += " [resolved by lookup]"
        event(conn, "outcome", text, now=now, cl_ord_id=out.cl_ord_id)


def insert_trips(
    conn: sqlite3.Connection,
    cycle_id: int | None,
    trips: Sequence[TripLike],
    *,
    dry: bool,
    now: int,
) -> None:
    for t in trips:
        conn.execute(
            "INSERT INTO guard_trips (cycle_id, ts_ms, dry, guard, scope, strategy,"
            " cl_ord_id, limit_value, value, message)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                cycle_id,
                now,
                int(dry),
                t.guard,
                t.scope,
                t.strategy or "",
                t.cl_ord_id or "",
                _dec(t.limit),
                _dec(t.value),
                t.message,
            ),
        )
        event(
            conn,
            "guard",
            f"guard {t.guard} tripped: {t.message}",
            now=now,
            cycle_id=cycle_id,
            strategy=t.strategy or "",
            cl_ord_id=t.cl_ord_id or "",
            detail={"limit": _dec(t.limit), "value": _dec(t.value), "scope": t.scope},
        )


def delete_before(conn: sqlite3.Connection, before_ms: int) -> tuple[int, int, int, int, int, int]:
    """Delete settled records older than ``before_ms``; returns (orders, events, evaluations,
    trips, cycles, unsettled kept)."""
    (kept,) = conn.execute(
        "SELECT COUNT(*) FROM orders WHERE outcome IS NULL AND dry = 0 AND ts_ms < ?",
        (before_ms,),
    ).fetchone()
    orders = conn.execute(
        "DELETE FROM orders WHERE ts_ms < ? AND NOT (outcome IS NULL AND dry = 0)",
        (before_ms,),
    ).rowcount
    events = conn.execute(
        "DELETE FROM events WHERE ts_ms < ? AND (cl_ord_id = '' OR cl_ord_id NOT IN"
        " (SELECT cl_ord_id FROM orders WHERE outcome IS NULL AND dry = 0))",
        (before_ms,),
    ).rowcount
    evaluations = conn.execute("DELETE FROM evaluations WHERE ts_ms < ?", (before_ms,)).rowcount
    trips = conn.execute("DELETE FROM guard_trips WHERE ts_ms < ?", (before_ms,)).rowcount
    cycles = conn.execute(
        "DELETE FROM cycles WHERE started_ms < ? AND id NOT IN"
        " (SELECT cycle_id FROM orders WHERE cycle_id IS NOT NULL)",
        (before_ms,),
    ).rowcount
    return orders, events, evaluations, trips, cycles, kept
