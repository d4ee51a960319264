"""The journal's writes: SQL over an open connection, inside the caller's transaction.

:class:`botkit.journal.db.Journal` opens the transaction (one commit per call) and the clock;
these functions only insert and update rows and append the matching event lines. The row
builders (:func:`event_row`, :func:`evaluation_rows`, the cycle texts) are shared by the journal's
write-through and group-commit modes, so both store the very same rows.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from decimal import Decimal
from itertools import chain
from json.encoder import encode_basestring_ascii
from operator import itemgetter
from typing import Any

from botkit.errors import JournalError
from botkit.journal.records import Evaluated, NewOrder, OrderOutcome, OrderState, Outcome
from botkit.journal.schema import LIVE_KEY, live_key, rotated
from botkit.ports.journal import TripLike

__all__ = [
    "CYCLE_INSERT",
    "EVALUATION_INSERT",
    "EVENT_INSERT",
    "EXACT_MAX",
    "ORDER_FULL_INSERT",
    "ORDER_INSERT",
    "ORDER_INTENT_INSERT",
    "ORDER_LATER",
    "ORDER_RESERVED_INSERT",
    "SENT",
    "SETTLE",
    "UPDATE_FROM",
    "TripLike",
    "check_open",
    "cycle_error_text",
    "delete_before",
    "evaluation_rows",
    "event",
    "event_row",
    "insert_reserved",
    "insert_trips",
    "insert_values",
    "mark_sent",
    "order_rows",
    "refuse_settle",
    "release_sends",
    "resend_reserved",
    "settle_orders",
    "settle_rows",
    "unreserve_attempts",
    "update_outcomes",
    "update_sent",
]

Row = tuple[Any, ...]

EVENT_INSERT = "INSERT INTO events (ts_ms, cycle_id, kind, strategy, rule, cl_ord_id, text, detail)"
EVALUATION_INSERT = (
    "INSERT INTO evaluations (cycle_id, ts_ms, dry, strategy, version, rule, fired, reason, inputs)"
)
CYCLE_INSERT = "INSERT INTO cycles (id, started_ms, finished_ms, dry, clock_offset_ms, note, error)"
"""With an explicit id: the group-commit mode numbers its cycles itself."""


def _dec(value: Decimal | None) -> str | None:
    return None if value is None else format(value, "f")


def _plain(value: Decimal, text: str) -> str:
    """``format(value, "f")`` given ``text``, the value's ``str``: the same text when it has no
    exponent (a third of the cost; an order has four amounts)."""
    if type(value) is Decimal and "E" not in text and "e" not in text:
        return text
    return format(value, "f")


def _json(value: Any) -> str:
    """Compact JSON with sorted keys; values it cannot encode as their ``str``.

    A flat mapping with plain values (a rule's inputs, every cycle; an order's request) skips
    :func:`json.dumps`: its keys' order and encoded prefixes are computed once per key set
    (:data:`_PLANS`), each value encoded by its exact type; a list of plain values likewise. A
    key set whose values have all been text (an order's request without ``reduceOnly``) is
    filled into a template made once (:data:`_TEXTS`), each value escaped as
    :func:`json.dumps` escapes a string. The text is byte for byte what :func:`_dumps`
    writes."""
    kind = type(value)
    if kind is list:  # notes and reasons: mostly empty, else a few texts; a send's ids
        if not value:
            return "[]"
        try:  # all texts (a ``str`` subclass too, as json.dumps writes it): encoded in C
            return "[" + ",".join(map(_string, value)) + "]"
        except TypeError:  # another value: each by its type below
            pass
        parts = []
        for item in value:
            encode = _PLAIN.get(type(item))
            if encode is None:
                return _dumps(value)
            parts.append(encode(item))
        return "[" + ",".join(parts) + "]"
    if kind is dict:
        keys = tuple(value)
        text = _TEXTS.get(keys)
        if text is not None:
            template, values = text
            try:
                return template % tuple(map(_string, values(value)))
            except TypeError:  # a value that is not text: this key set takes the plan below
                _TEXTS[keys] = None
        plan = _PLANS.get(keys)
        if plan is None:
            plan = _plan(keys)
        if plan:
            parts = []
            texts = True
            for key, prefix in plan:
                item = value[key]
                kind = type(item)
                if kind is Decimal:  # str(Decimal) is plain ASCII: nothing to escape
                    parts.append(f'{prefix}"{item!s}"')
                    texts = False
                elif kind is str:
                    parts.append(prefix + _string(item))
                elif kind is list:  # a send's ids: encoding composes
                    parts.append(prefix + _json(item))
                    texts = False
                else:
                    encode = _PLAIN.get(kind)
                    if encode is None:
                        return _dumps(value)
                    parts.append(prefix + encode(item))
                    texts = False
            if texts and keys not in _TEXTS:  # all text, and never otherwise: a template
                _TEXTS[keys] = _template(plan)
            return "{" + ",".join(parts) + "}"
    return _dumps(value)


def _plan(keys: tuple[Any, ...]) -> tuple[tuple[str, str], ...]:
    """Each key with its encoded ``"key":`` prefix, in sorted order; empty when a key is not a
    ``str`` (or there is none): then :func:`json.dumps` decides."""
    if len(_PLANS) >= _PLANS_MAX:
        _PLANS.clear()
        _TEXTS.clear()
    plan: tuple[tuple[str, str], ...] = ()
    if keys and all(type(k) is str for k in keys):
        plan = tuple((k, _string(k) + ":") for k in sorted(keys))
    _PLANS[keys] = plan
    return plan


_Picker = Callable[[Any], tuple[Any, ...]]


def _template(plan: tuple[tuple[str, str], ...]) -> tuple[str, _Picker]:
    """The text of a mapping of ``plan``'s keys as a ``%`` template (each value's place a
    ``%s``), and what picks the values out in the plan's order."""
    template = "{" + ",".join(prefix.replace("%", "%%") + "%s" for _, prefix in plan) + "}"
    if len(plan) == 1:
        only = plan[0][0]
        return template, lambda value: (value[only],)
    return template, itemgetter(*(key for key, _ in plan))


_PLANS: dict[tuple[Any, ...], tuple[tuple[str, str], ...]] = {}
"""Key set (in insertion order) -> its encoding plan. A few per strategy; bounded anyway."""
_PLANS_MAX = 1024
_TEXTS: dict[tuple[Any, ...], tuple[str, _Picker] | None] = {}
"""Key set -> its template (:func:`_template`) while every value seen was a ``str``; None once
one was not (the plan from then on). Cleared with :data:`_PLANS`."""


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


_VALUES_SQL: dict[tuple[str, int, int], str] = {}
EXACT_MAX = 16
"""Up to this many rows go in one statement (more: in power-of-two chunks)."""
_CHUNK_MAX = 128


def _chunks(total: int) -> Iterator[tuple[int, int]]:
    """(start, size) of each group of ``total`` rows: all of them up to :data:`EXACT_MAX`, else
    chunks of a power of two rows (at most 128), so few statement texts stay cached."""
    start = 0
    while start < total:
        left = total - start
        size = left if left <= EXACT_MAX else min(_CHUNK_MAX, 1 << (left.bit_length() - 1))
        yield start, size
        start += size


def insert_values(
    conn: sqlite3.Connection, into: str, rows: Sequence[Sequence[Any]], one: str = ""
) -> None:
    """Insert ``rows`` (``into`` is ``INSERT INTO table (columns)``) in their order, several
    rows per statement (one multi-row ``VALUES``): SQLite gives the new rows the same ids, in the
    same order, as one ``INSERT`` each would, at a fraction of the cost per row.

    Up to 16 rows go in one statement (a batch's 10 outcomes and the next send's event: one);
    more in chunks of a power of two rows (at most 128), so about twenty statement texts per
    table stay in the connection's statement cache (256). ``one``: a row's ``VALUES`` text (each
    of ``into``'s statements has one; default: a placeholder per value)."""
    for start, size in _chunks(len(rows)):
        width = len(rows[start])
        sql = _VALUES_SQL.get((into, width, size))
        if sql is None:
            row = one or "(" + ", ".join("?" * width) + ")"
            sql = _VALUES_SQL[(into, width, size)] = f"{into} VALUES " + ", ".join([row] * size)
        conn.execute(sql, list(chain.from_iterable(rows[start : start + size])))


def event_row(
    kind: str,
    text: str,
    *,
    now: int,
    cycle_id: int | None = None,
    strategy: str = "",
    rule: str = "",
    cl_ord_id: str = "",
    detail: dict[str, Any] | None = None,
) -> Row:
    """One line of the running log as the values of :data:`EVENT_INSERT` (detail encoded now)."""
    return (now, cycle_id, kind, strategy, rule, cl_ord_id, text, _json(detail) if detail else "{}")


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
        _EVENT_ONE,
        event_row(
            kind,
            text,
            now=now,
            cycle_id=cycle_id,
            strategy=strategy,
            rule=rule,
            cl_ord_id=cl_ord_id,
            detail=detail,
        ),
    )


_EVENT_ONE = EVENT_INSERT + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def cycle_error_text(cycle_id: int, error: str) -> str:
    """The running log's line for a cycle that ended with an error (every cycle, with or
    without one, has its row in ``cycles``: start, end, clock offset, dry run, error)."""
    return f"cycle {cycle_id} ends with error: {error}"


def evaluation_rows(
    cycle_id: int | None,
    *,
    strategy: str,
    version: str,
    rules: Sequence[Evaluated],
    dry: bool,
    now: int,
) -> tuple[list[Row], list[Row]]:
    """The evaluation rows (values of :data:`EVALUATION_INSERT`) and the event rows of the rules
    that fired, in the rules' order. A fire's detail is ``{"inputs": <the row's inputs>}``:
    JSON encoding composes, so this is the text ``_json({"inputs": inputs})`` would write."""
    flag = int(dry)
    rows: list[Row] = []
    fires: list[Row] = []
    for ev in rules:
        inputs = _json(ev.inputs)
        rows.append(
            (cycle_id, now, flag, strategy, version, ev.rule, int(ev.fired), ev.reason, inputs)
        )
        if ev.fired:
            text = f"{strategy}/{ev.rule} fired"
            fires.append(
                (now, cycle_id, "fire", strategy, ev.rule, "", text, f'{{"inputs":{inputs}}}')
            )
    return rows, fires


ORDER_INSERT = (
    "INSERT INTO orders (cycle_id, ts_ms, dry, strategy, rule, slot, leg, cl_ord_id, symbol, side,"
    " type, pos_side, mgn_mode, reduce_only, intent_px, intent_sz, px, sz, notes, inputs, request,"
    " state, outcome, reasons, outcome_ms)"
)
_ORDERS_KEY = rotated("orders.cl_ord_id")
""":data:`~botkit.journal.schema.LIVE_KEY` in a statement of several tables."""
SETTLE = (
    "UPDATE orders SET state = 'final', outcome = ?, ord_id = ?, code = ?, msg = ?, error = ?,"  # noqa: S608
    " resolved = ?, reasons = ?, outcome_ms = ?"
    f" WHERE {LIVE_KEY} = {rotated('?9')} AND dry = 0 AND outcome IS NULL"
)


SENT = (
    "UPDATE orders SET state = CASE WHEN outcome IS NULL THEN 'sent' ELSE state END,"  # noqa: S608
    f" attempts = attempts + 1, sent_ms = ? WHERE {LIVE_KEY} = {rotated('?2')} AND dry = 0"
)
"""A send mark, one order (``now``, client order id)."""
_SENT_IN = (
    "UPDATE orders SET state = CASE WHEN outcome IS NULL THEN 'sent' ELSE state END,"  # noqa: S608
    f" attempts = attempts + 1, sent_ms = ? WHERE {LIVE_KEY} IN ({{marks}}) AND dry = 0"
)
""":data:`SENT` of several orders, each named once (their keys, :func:`live_key`)."""
_SENT_SQL: dict[int, str] = {}
_SETTLE_FROM = (
    "UPDATE orders SET state = 'final', outcome = v.column1, ord_id = v.column2,"  # noqa: S608
    " code = v.column3, msg = v.column4, error = v.column5, resolved = v.column6,"
    " reasons = v.column7, outcome_ms = v.column8 FROM (VALUES {values}) AS v"
    f" WHERE {_ORDERS_KEY} = {rotated('v.column9')} AND orders.dry = 0"
    " AND orders.outcome IS NULL"
)
""":data:`SETTLE` for several orders at once (``values``: a row of 9 placeholders each)."""
_SETTLE_SQL: dict[int, str] = {}

UPDATE_FROM = sqlite3.sqlite_version_info >= (3, 33, 0)
"""Whether this SQLite has ``UPDATE ... FROM`` (3.33, 2020); without it the outcomes are one
``UPDATE`` each (:func:`update_outcomes`)."""


def mark_sent(conn: sqlite3.Connection, ids: Sequence[str], now: int) -> None:
    """What :data:`SENT` once per id of ``ids`` does, in one statement (``... IN (...)``) per
    up to 128 ids when each is named once (twice: ``attempts`` counts both, one each)."""
    if len(set(ids)) != len(ids):
        conn.executemany(SENT, [(now, cid) for cid in ids])
        return
    for start in range(0, len(ids), _CHUNK_MAX):
        chunk = ids[start : start + _CHUNK_MAX]
        sql = _SENT_SQL.get(len(chunk))
        if sql is None:
            sql = _SENT_SQL[len(chunk)] = _SENT_IN.format(marks=", ".join("?" * len(chunk)))
        conn.execute(sql, [now, *map(live_key, chunk)])


def _in_chunks(conn: sqlite3.Connection, sql: str, head: Sequence[Any], ids: Sequence[str]) -> int:
    """Run ``sql`` (its ``{marks}`` the placeholders of an ``IN (...)`` of the live unique
    index's keys) once per up to 128 of ``ids`` (their keys, :func:`live_key`), ``head`` bound
    first; the rows changed."""
    changed = 0
    for start in range(0, len(ids), _CHUNK_MAX):
        chunk = ids[start : start + _CHUNK_MAX]
        changed += conn.execute(
            sql.format(marks=", ".join("?" * len(chunk))), [*head, *map(live_key, chunk)]
        ).rowcount
    return changed


ORDER_RESERVED_INSERT = ORDER_INSERT[:-1] + ", attempts, sent_ms)"
""":data:`ORDER_INSERT` with the columns a reserved send sets (``order_rows(reserve_until=)``)."""
ORDER_INTENT_INSERT = (
    "INSERT INTO orders (cycle_id, ts_ms, dry, strategy, rule, slot, leg, cl_ord_id, symbol,"
    " side, type, pos_side, mgn_mode, reduce_only, intent_px, intent_sz, px, sz, notes, inputs,"
    " request, state, reasons, attempts, sent_ms)"
)
"""A reserved live intent's row: what :data:`ORDER_RESERVED_INSERT` writes for it, the values
every one shares (not a dry run, ``sent``, no outcome nor its time, one attempt) in the
statement (:data:`_INTENT_ROW`) instead of bound to each row: a cycle's intents bind a sixth
fewer values (two of them NULLs, the dearest to bind)."""
_INTENT_ROW = "(?, ?, 0, " + "?, " * 18 + f"'{OrderState.SENT.value}', ?, 1, ?)"
_INTENT_WIDTH = _INTENT_ROW.count("?")


def insert_reserved(conn: sqlite3.Connection, rows: Sequence[Row]) -> None:
    """Insert the rows of ``order_rows(reserve_until=...)`` in their order: each run of
    reserved intents with :data:`ORDER_INTENT_INSERT`, each of orders settled at once with
    :data:`ORDER_RESERVED_INSERT` (:func:`insert_values`)."""
    start = 0
    total = len(rows)
    while start < total:
        width = len(rows[start])
        end = start + 1
        while end < total and len(rows[end]) == width:
            end += 1
        if width == _INTENT_WIDTH:
            insert_values(conn, ORDER_INTENT_INSERT, rows[start:end], _INTENT_ROW)
        else:
            insert_values(conn, ORDER_RESERVED_INSERT, rows[start:end])
        start = end


def resend_reserved(conn: sqlite3.Connection, ids: Sequence[str], until_ms: int) -> None:
    """Extend the reservation of ``ids`` (still unsent) until ``until_ms``."""
    _in_chunks(
        conn,
        f"UPDATE orders SET sent_ms = ? WHERE dry = 0 AND {LIVE_KEY} IN ({{marks}})",  # noqa: S608
        (until_ms,),
        ids,
    )


def release_sends(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Write reserved orders back as never sent (the attempt the reservation counted taken
    back, no send time, ``intent`` while still ``sent``): what they would be without the
    reservation."""
    _in_chunks(
        conn,
        "UPDATE orders SET state = CASE WHEN state = 'sent' THEN 'intent' ELSE state END,"  # noqa: S608
        " attempts = attempts - 1, sent_ms = NULL"
        f" WHERE dry = 0 AND {LIVE_KEY} IN ({{marks}})",
        (),
        ids,
    )


def unreserve_attempts(conn: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Take back the attempt the reservation of ``ids`` counted (a send mark of these orders
    that is written at once counts its own)."""
    _in_chunks(
        conn,
        f"UPDATE orders SET attempts = attempts - 1 WHERE dry = 0 AND {LIVE_KEY} IN ({{marks}})",  # noqa: S608
        (),
        ids,
    )


_SENT_FROM = (
    "UPDATE orders SET state = CASE WHEN outcome IS NULL THEN 'sent' ELSE state END,"  # noqa: S608
    " sent_ms = v.column1 FROM (VALUES {values}) AS v"
    f" WHERE {_ORDERS_KEY} = {rotated('v.column2')} AND orders.dry = 0"
)
_SENT_FROM_SQL: dict[int, str] = {}


def update_sent(conn: sqlite3.Connection, rows: Sequence[Row]) -> None:
    """The send marks of reserved orders whose request left (``(sent_ms, client order id)``
    each, every order named once; the attempt was counted by the reservation): what
    :data:`SENT` does but the attempt, in one ``UPDATE ... FROM (VALUES ...)`` per group of rows
    (one ``UPDATE`` each with a SQLite before 3.33)."""
    if not UPDATE_FROM:
        conn.executemany(
            "UPDATE orders SET state = CASE WHEN outcome IS NULL THEN 'sent' ELSE state END,"  # noqa: S608
            f" sent_ms = ? WHERE {LIVE_KEY} = {rotated('?2')} AND dry = 0",
            rows,
        )
        return
    for start, size in _chunks(len(rows)):
        sql = _SENT_FROM_SQL.get(size)
        if sql is None:
            sql = _SENT_FROM_SQL[size] = _SENT_FROM.format(values=", ".join(["(?, ?)"] * size))
        conn.execute(sql, list(chain.from_iterable(rows[start : start + size])))


def update_outcomes(
    conn: sqlite3.Connection, rows: Sequence[Row], *, path: str, sent: Sequence[Row] = ()
) -> None:
    """What :data:`SETTLE` once per row (its values, the client order id last) does, in one
    ``UPDATE ... FROM (VALUES ...)`` per group of rows (the groups of :func:`insert_values`)
    when each order is named once; else, or with a SQLite before 3.33, one ``UPDATE`` each.

    ``sent``: held send marks of reserved orders (the rows of :func:`update_sent`), written
    first; an order settled here takes its send time in the same ``UPDATE`` (its state is the
    outcome's), the others in one of their own.

    Every row must change an open order: a :class:`~botkit.errors.JournalError` otherwise
    (raised inside the caller's transaction, which then writes nothing). The orders were checked
    open when they were settled; a row left unchanged means another process settled one
    since."""
    if not UPDATE_FROM or len(rows) < 2 or len({row[-1] for row in rows}) != len(rows):
        if sent:
            update_sent(conn, sent)
        changed = conn.executemany(SETTLE, rows).rowcount
    else:
        cache, sql_of = _SETTLE_SQL, _SETTLE_FROM
        if sent:
            times = {cid: ms for ms, cid in sent}
            rows = [(*row, times.pop(row[-1], None)) for row in rows]
            if times:  # sent, not settled here
                update_sent(conn, [(ms, cid) for cid, ms in times.items()])
            cache, sql_of = _SETTLE_SENT_SQL, _SETTLE_SENT_FROM
        width = len(rows[0])
        changed = 0
        for start, size in _chunks(len(rows)):
            sql = cache.get(size)
            if sql is None:
                values = ", ".join(["(" + ", ".join("?" * width) + ")"] * size)
                sql = cache[size] = sql_of.format(values=values)
            chunk = list(chain.from_iterable(rows[start : start + size]))
            changed += conn.execute(sql, chunk).rowcount
    if changed != len(rows):
        raise JournalError(
            f"journal {path}: {len(rows) - changed} of {len(rows)} order(s) settled were already"
            " settled when the outcomes were written — another process writes this journal"
        )


_SETTLE_SENT_FROM = _SETTLE_FROM.replace(
    " FROM (VALUES", ", sent_ms = COALESCE(v.column10, sent_ms) FROM (VALUES"
)
""":data:`_SETTLE_FROM` with a tenth value, the send time of a held send mark (or NULL)."""
_SETTLE_SENT_SQL: dict[int, str] = {}


ORDER_FULL_INSERT = ORDER_INSERT[:-1] + (", ord_id, code, msg, error, resolved, attempts, sent_ms)")
"""Every column an order's row changes over its life: an order written once, in its final form
(a transient journal's, see :class:`~botkit.journal.pending.Pending`)."""
ORDER_LATER = ("", None, "", "", 0, 0, None)
"""The values of :data:`ORDER_FULL_INSERT`'s last columns an intent starts with (the schema's
defaults)."""


def order_rows(
    cycle_id: int | None,
    orders: Sequence[NewOrder],
    *,
    dry: bool,
    now: int,
    reserve_until: int | None = None,
) -> tuple[list[Row], list[Row]]:
    """The values of the orders' rows (:data:`ORDER_INSERT`) and of their event lines, each
    table to be written in multi-row statements (:func:`insert_values`): the same rows with the
    same ids as one ``INSERT`` per row.

    ``reserve_until``: the rows of :func:`insert_reserved` instead, each intent (no outcome
    yet) *reserved* — written ``sent``, one attempt, ``sent_ms`` the end of the reservation: its
    request may leave any time until then without another commit (a row of
    :data:`ORDER_INTENT_INSERT`, the values every reserved intent shares written in the
    statement). The orders settled at once (refused locally) stay as they are (no attempt; a
    row of :data:`ORDER_RESERVED_INSERT`).

    Each amount is made text once (``str``): its column takes the plain form of it
    (:func:`_plain`), the event line the text itself."""
    flag = int(dry)
    rows: list[Row] = []
    events: list[Row] = []
    append_row = rows.append
    append_event = events.append
    intent_state = OrderState.INTENT.value
    final_state = OrderState.FINAL.value
    settled: Row = () if reserve_until is None else (0, None)
    shared: tuple[object, str] = (None, "")  # the legs of one fire share their inputs
    for order in orders:
        i = order.intent
        notes = order.notes
        reasons = order.reasons
        inputs = i.inputs
        if inputs is not shared[0]:
            shared = (inputs, _json(dict(inputs)))
        outcome = order.outcome
        side = i.side._value_  # ``.value`` reads through enum's descriptor, at twice the cost
        kind_ = i.type._value_
        symbol = i.symbol
        px = order.px
        sz = order.sz
        wire = order.wire
        intent_px = i.px
        intent_sz = i.sz
        # an amount's ``str`` is what the event line's f-string writes, and its plain form
        # unless it has an exponent (:func:`_plain`)
        if sz is None:
            sz_text = str(intent_sz)
            sz_plain = None
        else:
            sz_text = str(sz)
            sz_plain = _plain(sz, sz_text)
        if px is None:
            px_plain = None
            what = f"{side} {sz_text} {symbol} {kind_}"
        else:
            px_text = str(px)
            px_plain = _plain(px, px_text)
            what = f"{side} {sz_text} {symbol} {kind_} @ {px_text}"
        cl_ord_id = i.cl_ord_id
        strategy = i.strategy
        rule = i.rule
        ipx = None if intent_px is None else _plain(intent_px, str(intent_px))
        isz = None if intent_sz is None else _plain(intent_sz, str(intent_sz))
        notes_json = _json(list(notes)) if notes else "[]"
        request = order.request
        if request is None and wire is not None:
            request = _json(wire)
        reasons_json = _json(list(reasons)) if reasons else "[]"
        if outcome is None and reserve_until is not None:  # a reserved intent
            append_row(
                (
                    cycle_id,
                    now,
                    strategy,
                    rule,
                    i.slot,
                    i.leg,
                    cl_ord_id,
                    symbol,
                    side,
                    kind_,
                    i.pos_side._value_,
                    i.mgn_mode._value_,
                    int(i.reduce_only),
                    ipx,
                    isz,
                    px_plain,
                    sz_plain,
                    notes_json,
                    shared[1],
                    request,
                    reasons_json,
                    reserve_until,
                )
            )
        else:
            append_row(
                (
                    cycle_id,
                    now,
                    flag,
                    strategy,
                    rule,
                    i.slot,
                    i.leg,
                    cl_ord_id,
                    symbol,
                    side,
                    kind_,
                    i.pos_side._value_,
                    i.mgn_mode._value_,
                    int(i.reduce_only),
                    ipx,
                    isz,
                    px_plain,
                    sz_plain,
                    notes_json,
                    shared[1],
                    request,
                    intent_state if outcome is None else final_state,
                    None if outcome is None else outcome._value_,
                    reasons_json,
                    None if outcome is None else now,
                    *settled,
                )
            )
        if outcome is None:
            text = "intent " + what
            kind = "intent"
        elif outcome is Outcome.REJECTED_LOCAL:
            kind, text = "rejected_local", f"refused {what}: " + "; ".join(reasons)
        elif outcome is Outcome.DRY_RUN:
            kind, text = "dry_run", f"dry run: would send {what}"
        else:
            kind, text = "intent", f"intent {what}"
        if notes:
            text += " (rounded " + "; ".join(notes) + ")"
        append_event((now, cycle_id, kind, strategy, rule, cl_ord_id, text, "{}"))
    return rows, events


def check_open(
    conn: sqlite3.Connection,
    ids: Sequence[str],
    *,
    path: str,
    held: Collection[str] = (),
) -> None:
    """Raise :class:`~botkit.errors.JournalError` unless every order of ``ids`` is known, still
    open (``held``: outcomes not written yet count as settled) and named once: one ``SELECT``."""
    open_ids: set[str] = set()
    for start in range(0, len(ids), _CHUNK_MAX):
        chunk = ids[start : start + _CHUNK_MAX]
        marks = ", ".join("?" * len(chunk))
        open_ids.update(
            cid
            for (cid,) in conn.execute(
                "SELECT cl_ord_id FROM orders WHERE dry = 0 AND outcome IS NULL"  # noqa: S608
                f" AND {LIVE_KEY} IN ({marks})",
                [live_key(c) for c in chunk],
            )
        )
    if held:
        open_ids.difference_update(held)
    if len(open_ids) != len(ids):  # unknown, already settled, or twice in ``ids``
        refuse_settle(ids, open_ids, path)


def refuse_settle(ids: Sequence[str], open_ids: Collection[str], path: str) -> None:
    """Raise for the first of ``ids`` not in ``open_ids`` or named twice (if any)."""
    seen: set[str] = set()
    for cid in ids:
        if cid not in open_ids or cid in seen:
            raise JournalError(
                f"journal {path}: order {cid} is unknown or already"
                " settled — an order has exactly one final outcome"
            )
        seen.add(cid)


def settle_rows(outcomes: Sequence[OrderOutcome], *, now: int) -> tuple[list[Row], list[Row]]:
    """The values of :data:`SETTLE` (the client order id last) and the event rows of
    ``outcomes``, in their order."""
    updates: list[Row] = []
    events: list[Row] = []
    for out in outcomes:
        value = out.outcome._value_  # ``.value`` reads through enum's descriptor
        reasons = out.reasons
        ord_id = out.ord_id
        code = out.code
        msg = out.msg
        error = out.error
        resolved = out.resolved
        cl_ord_id = out.cl_ord_id
        updates.append(
            (
                value,
                ord_id,
                code,
                msg,
                error,
                int(resolved),
                _json(list(reasons)) if reasons else "[]",
                now,
                cl_ord_id,
            )
        )
        text = value
        if ord_id:
            text += f" ordId {ord_id}"
        if code is not None:
            text += f" code {code}"
        if msg:
            text += f": {msg}"
        if error:
            text += f" ({error})"
        if resolved:
            text += " [resolved by lookup]"
        events.append((now, None, "outcome", "", "", cl_ord_id, text, "{}"))
    return updates, events


def settle_orders(
    conn: sqlite3.Connection,
    outcomes: Sequence[OrderOutcome],
    *,
    now: int,
    path: str,
    checked: bool = False,
) -> None:
    """Each order's final outcome and its event line: checked first (:func:`check_open`; not
    when the caller knows them open, ``checked``), then one ``UPDATE``
    (:func:`update_outcomes`, which checks it changed each) and one multi-row insert of the
    events."""
    if not checked:
        check_open(conn, [out.cl_ord_id for out in outcomes], path=path)
    updates, events = settle_rows(outcomes, now=now)
    update_outcomes(conn, updates, path=path)
    insert_values(conn, EVENT_INSERT, events)


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
