"""The status API's read endpoints: JSON built from the journal (read without its lock) and the
exchange (a read-only client; in sim mode a fresh read copy of the paper account).

The same builders answer ``botkit status --json`` (:func:`status_json`) and ``botkit plan
--json`` (:func:`evaluation_json`, :func:`order_json`), so the API and the CLI say the same
thing in the same shape. Nothing here holds a secret: answers carry journal rows (credentials
are redacted before they are stored) and the account's public fields.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.app.api import ApiError, Request, Response, Router, json_response
from botkit.app.equity_log import EquityLog
from botkit.app.fill_ledger import FillLedger, Share
from botkit.app.service import read_journal
from botkit.app.status import health
from botkit.pipeline import GuardSettings
from botkit.runner.killswitch import controls
from botkit.settings import Settings

if TYPE_CHECKING:
    from botkit.journal import EvaluationRecord, EventRecord, Journal, OrderRecord
    from botkit.live.client import ExchangeClient
    from botkit.rules import Evaluation, RuleResult

__all__ = [
    "API_VERSION",
    "ExchangeReads",
    "add_read_routes",
    "control_state",
    "evaluation_json",
    "event_json",
    "events_json",
    "open_orders_json",
    "order_json",
    "positions_json",
    "rule_json",
    "status_json",
]

API_VERSION = "1"
MAX_LIMIT = 1000


def _limit(request: Request, default: int) -> int:
    text = request.query.get("limit", str(default))
    try:
        value = int(text)
    except ValueError:
        raise ApiError(400, f"limit must be a whole number, got {text[:20]!r}") from None
    if not 1 <= value <= MAX_LIMIT:
        raise ApiError(400, f"limit must be between 1 and {MAX_LIMIT}")
    return value


def _int_arg(request: Request, name: str, default: int) -> int:
    text = request.query.get(name, str(default))
    try:
        return int(text)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number, got {text[:20]!r}") from None


# --- shapes shared with the CLI --------------------------------------------------------------


def rule_json(
    rule: str, *, fired: bool, status: str, reason: str, inputs: dict[str, str]
) -> dict[str, Any]:
    """One rule's evaluation: did it fire, its status, why not, what it saw."""
    return {"rule": rule, "fired": fired, "status": status, "reason": reason, "inputs": inputs}


def _result_json(result: RuleResult) -> dict[str, Any]:
    return rule_json(
        result.rule,
        fired=result.fired,
        status=result.status.value,
        reason=result.reason or result.status.value,
        inputs=dict(result.inputs),
    )


def evaluation_json(evaluation: Evaluation, cycle_id: int | None) -> dict[str, Any]:
    """A strategy's evaluation in a cycle (``botkit plan --json``; ``/api/strategies``'s
    ``last_evaluation`` has the same shape, read back from the journal)."""
    return {
        "strategy": evaluation.strategy,
        "version": evaluation.version,
        "cycle_id": cycle_id,
        "ts_ms": evaluation.now_ms,
        "rules": [_result_json(r) for r in evaluation.results],
    }


def _status_of(record: EvaluationRecord) -> str:
    from botkit.rules import RuleStatus

    if record.fired:
        return RuleStatus.FIRED.value
    known = {s.value for s in RuleStatus}
    head = record.reason.split(":", 1)[0].strip()
    return head if head in known else "not_fired"


def _journaled_rule_json(record: EvaluationRecord) -> dict[str, Any]:
    return {
        **rule_json(
            record.rule,
            fired=record.fired,
            status=_status_of(record),
            reason=record.reason,
            inputs=record.inputs,
        ),
        "cycle_id": record.cycle_id,
        "ts_ms": record.ts_ms,
        "version": record.version,
    }


def order_json(record: OrderRecord) -> dict[str, Any]:
    """One journaled order with its explanation: the rule that made it and what it saw, the
    price and size it asked for and what they became after rounding (``notes``), why it was
    refused (``reasons``), and its outcome at the exchange."""
    return {
        "cl_ord_id": record.cl_ord_id,
        "ord_id": record.ord_id or None,
        "cycle_id": record.cycle_id,
        "ts_ms": record.ts_ms,
        "dry": record.dry,
        "strategy": record.strategy,
        "rule": record.rule,
        "symbol": record.symbol,
        "side": record.side,
        "type": record.type,
        "pos_side": record.pos_side,
        "mgn_mode": record.mgn_mode,
        "reduce_only": record.reduce_only,
        "intent_px": record.intent_px,
        "intent_sz": record.intent_sz,
        "px": record.px,
        "sz": record.sz,
        "notes": list(record.notes),
        "inputs": record.inputs,
        "reasons": list(record.reasons),
        "state": record.state.value,
        "outcome": None if record.outcome is None else record.outcome.value,
        "code": record.code,
        "msg": record.msg or None,
        "error": record.error or None,
        "attempts": record.attempts,
        "sent_ms": record.sent_ms,
        "outcome_ms": record.outcome_ms,
    }


def event_json(event: EventRecord) -> dict[str, Any]:
    return {
        "id": event.id,
        "ts_ms": event.ts_ms,
        "cycle_id": event.cycle_id,
        "kind": event.kind,
        "strategy": event.strategy or None,
        "rule": event.rule or None,
        "cl_ord_id": event.cl_ord_id or None,
        "text": event.text,
        "detail": event.detail,
    }


def status_json(settings: Settings, max_age_s: float) -> dict[str, Any]:
    """``botkit status --json`` and ``/api/status``: the health, the stop controls and the
    open orders no loaded strategy owns (as the service last saw them)."""
    from botkit.runner.orphans import NOT_OWNED_EVENT

    now = health(settings, max_age_s)
    body = {**now.to_json(), "journal": str(settings.journal), "not_owned": None}
    if Path(settings.journal).exists():
        with read_journal(settings) as journal:
            event = journal.last_event(NOT_OWNED_EVENT)
        if event is not None:
            orders = event.detail.get("orders", [])
            body["not_owned"] = {
                "seen_ms": event.ts_ms,
                "orders": [
                    {"text": str(o.get("text", "?")), "why": str(o.get("why", "?"))}
                    for o in orders
                    if isinstance(o, dict)
                ],
            }
    return body


def control_state(settings: Settings) -> dict[str, Any]:
    """The two stop controls: engaged (with the reason), and whether the API can switch them
    (a control file is configured and the setting does not hold it on)."""
    guards = GuardSettings.from_settings(settings)
    ctl = controls(guards)

    def one(reason: str | None, setting: bool, file: str | None) -> dict[str, Any]:
        return {
            "engaged": reason is not None,
            "reason": reason,
            "by_setting": setting,
            "file": file,
            "switchable": bool(file) and not setting,
        }

    return {
        "halt": one(ctl.halt, guards.halt, guards.halt_file),
        "kill_switch": one(ctl.kill_switch, guards.kill_switch, guards.kill_switch_file),
    }


# --- exchange reads ------------------------------------------------------------------------


class ExchangeReads:
    """The account as the exchange says now, read at most every ``ttl_s`` seconds (a page
    polling every second must not turn into a request per poll). In sim mode a fresh
    read-only client per read (a fresh copy of the paper account, which the service holds);
    live, one client kept, its clock re-synced as it falls due (signed reads need it)."""

    def __init__(
        self,
        settings: Settings,
        *,
        ttl_s: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        client: Callable[[], ExchangeClient] | None = None,
        equity: EquityLog | None = None,
    ) -> None:
        self.settings = settings
        self.ttl_s = ttl_s
        self._clock = clock
        self._client = client or self._make
        self._fresh = settings.exchange == "sim"
        self._kept: ExchangeClient | None = None
        self.lock = threading.Lock()
        self._at: float | None = None
        self._value: dict[str, Any] = {}
        self.ledger = FillLedger()
        """Each strategy's share of each open position, kept from the fills between reads."""
        self.equity = equity if equity is not None else EquityLog(None)
        """(exchange ms, equity, unrealized PnL) of each fresh read, oldest first."""

    def _make(self) -> ExchangeClient:
        from botkit.app.clients import make_client

        return make_client(self.settings, paper="read")

    def account(self) -> dict[str, Any]:
        """``positions``, ``open_orders``, ``shares`` (each open position by strategy, from
        :attr:`ledger`), ``balance`` and ``instruments``' contract values, as models; an
        exchange error is a 502."""
        from botkit.errors import ExchangeError

        with self.lock:
            now = self._clock()
            if self._at is not None and now - self._at < self.ttl_s:
                return self._value
            try:
                if self._fresh:
                    with self._client() as client:
                        value = _read_account(client, self.ledger)
                else:
                    if self._kept is None:
                        self._kept = self._client()
                    self._kept.clock.maybe_resync()
                    value = _read_account(self._kept, self.ledger)
            except ExchangeError as exc:
                raise ApiError(502, f"reading the exchange failed: {exc}") from None
            self._at, self._value = now, value
            self.equity.add((value["read_ms"], value["balance"].eq, value["balance"].upl))
            return value


def _read_account(client: ExchangeClient, ledger: FillLedger) -> dict[str, Any]:
    ct_vals = {i.symbol: i.ctVal for i in client.instruments()}
    positions = ledger.refresh(client.fills, client.open_positions, ct_vals)
    return {
        "positions": positions,
        "open_orders": client.open_orders(),
        "shares": ledger.shares(),
        "reading": ledger.reading(),
        "balance": client.balance(),
        "ct_vals": ct_vals,
        "read_ms": client.clock.now_ms(),
    }


def _owners(journal: Journal, ids: Iterable[str]) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for cl in ids:
        if cl and cl not in found and (record := journal.order(cl)) is not None:
            found[cl] = (record.strategy, record.rule)
    return found


def _strategy_by_tag(journal: Journal) -> dict[str, str]:
    from botkit.rules.ids import strategy_tag

    return {r.tag: r.name for r in journal.strategies(strategy_tag)}


def _money(value: Decimal | None) -> str | None:
    return None if value is None else str(value)


BY_STRATEGY_FROM = (
    "each open position's fills since it opened (of a fill that went through zero, the part"
    " beyond it), by average cost; a position at zero ends its rows"
)


def _covers(shares: list[Share], reading: int | None) -> str:
    """What ``by_strategy`` covers, in words: the rule, and each position it falls short on."""
    if reading is not None:
        return (
            f"still reading the exchange's fill history ({reading:,} fills so far): the"
            " figures by strategy follow when it reaches the open positions' first fills"
        )
    short = [f"{s.symbol} {s.leg.value}: {s.why}" for s in shares if not s.complete]
    return BY_STRATEGY_FROM + ("" if not short else "; short of it: " + "; ".join(short))


def positions_json(account: dict[str, Any], tags: dict[str, str]) -> dict[str, Any]:
    """``/api/positions``: the account's positions, and each strategy's share of each open
    position by average cost over the position's fills since it opened (``tags``: strategy
    tag → name; fills of other orders count in the position, not in a strategy's share)."""
    marks = {p.symbol: p.markPx for p in account["positions"]}
    shares: list[Share] = account["shares"]
    rows = []
    for share in shares:
        for tag, book in share.books:
            if tag not in tags:
                continue
            rows.append(
                {
                    "strategy": tags[tag],
                    "symbol": share.symbol,
                    "pos_side": share.leg.value,
                    "qty": str(book.qty),
                    "avg_px": str(book.avg_px),
                    "realized": str(book.realized),
                    "unrealized": str(book.unrealized(marks.get(share.symbol))),
                    "fees": str(book.fees),
                    "fills": book.fills,
                    "since_ms": share.since_ms,
                    "complete": share.complete,
                }
            )
    by_strategy = sorted(rows, key=lambda r: (r["strategy"], r["symbol"], r["pos_side"]))
    coverage = [
        {
            "symbol": s.symbol,
            "pos_side": s.leg.value,
            "since_ms": s.since_ms,
            "fills": s.fills,
            "complete": s.complete,
            "short_of_it": s.why or None,
        }
        for s in shares
    ]
    balance = account["balance"]
    return {
        "read_ms": account["read_ms"],
        "balance": {"eq": _money(balance.eq), "upl": _money(balance.upl)},
        "positions": [
            {
                "symbol": p.symbol,
                "pos_side": p.posSide.value,
                "mgn_mode": None if p.mgnMode is None else p.mgnMode.value,
                "qty": str(p.qty),
                "avg_px": _money(p.openAvgPx),
                "mark_px": _money(p.markPx),
                "upl": _money(p.upl),
                "realized": _money(p.pnl),
                "fees": _money(p.fee),
                "lever": _money(p.lever),
                "liq_px": _money(p.liqPx),
            }
            for p in account["positions"]
        ],
        "by_strategy": by_strategy,
        "by_strategy_from": _covers(shares, account["reading"]),
        "coverage": coverage,
    }


def open_orders_json(account: dict[str, Any], owners: dict[str, tuple[str, str]]) -> dict[str, Any]:
    """``/api/orders``: the open orders at the exchange, each with the strategy and rule the
    journal says placed it, and a count per rule."""
    rows = []
    by_rule: dict[str, dict[str, Any]] = {}
    for o in account["open_orders"]:
        strategy, rule = owners.get(o.clOrdId, (None, None))
        rows.append(
            {
                "strategy": strategy,
                "rule": rule,
                "cl_ord_id": o.clOrdId or None,
                "ord_id": o.ordId,
                "symbol": o.symbol,
                "side": o.side.value,
                "type": o.type.value,
                "px": _money(o.px),
                "sz": _money(o.sz),
                "state": o.state,
            }
        )
        key = f"{strategy}/{rule}" if strategy else "(not owned)"
        group = by_rule.setdefault(key, {"strategy": strategy, "rule": rule, "orders": 0})
        group["orders"] += 1
    return {"read_ms": account["read_ms"], "open": rows, "by_rule": list(by_rule.values())}


def events_json(journal: Journal, *, limit: int, after: int, kind: str | None) -> dict[str, Any]:
    """``/api/events``: the newest ``limit`` events (``after`` < 0), or the first ``limit``
    after ``after``; ``kind`` filters among the (at most 1,000) events read. ``last_id``: where
    the next poll goes on from."""
    window = MAX_LIMIT if kind else limit
    newest = after < 0
    if newest:
        after = max(0, journal.last_event_id() - window)
    events = journal.events_after(after, limit=window)
    matching = [e for e in events if not kind or e.kind == kind]
    chosen = matching[-limit:] if newest else matching[:limit]
    if not events:
        last = after
    elif len(matching) > len(chosen) and not newest:  # more to come: go on from here
        last = chosen[-1].id
    else:
        last = events[-1].id
    return {"events": [event_json(e) for e in chosen], "last_id": last}


# --- the endpoints ---------------------------------------------------------------------------


def add_read_routes(
    router: Router, settings: Settings, *, max_age_s: float, exchange: ExchangeReads
) -> None:
    """Register the read endpoints (``GET /api/...``) on ``router``."""

    def journal() -> Journal:
        if not Path(settings.journal).exists():
            raise ApiError(503, f"no journal at {settings.journal} — has the service run yet?")
        return read_journal(settings)

    def get_health(_r: Request) -> Response:
        return json_response(200, health(settings, max_age_s).to_json())

    def get_status(_r: Request) -> Response:
        return json_response(200, status_json(settings, max_age_s))

    def get_controls(_r: Request) -> Response:
        return json_response(200, control_state(settings))

    def get_strategies(_r: Request) -> Response:
        from botkit.rules.ids import strategy_tag

        with journal() as j:
            records = j.strategies(strategy_tag)
            latest = j.latest_evaluations()
        rules: dict[str, list[EvaluationRecord]] = {}
        for ev in latest:
            rules.setdefault(ev.strategy, []).append(ev)
        out = []
        for record in sorted(records, key=lambda r: r.name):
            evs = rules.get(record.name, [])
            last = max(evs, key=lambda e: e.id) if evs else None
            out.append(
                {
                    "name": record.name,
                    "version": record.version,
                    "loaded_ms": record.loaded_ms,
                    "removed_ms": record.removed_ms,
                    "active": record.removed_ms is None,
                    "on_delete": record.on_delete or None,
                    "last_evaluation": None
                    if last is None
                    else {
                        "strategy": record.name,
                        "version": last.version,
                        "cycle_id": last.cycle_id,
                        "ts_ms": last.ts_ms,
                        "rules": [_journaled_rule_json(e) for e in evs],
                    },
                }
            )
        return json_response(200, {"strategies": out})

    def get_positions(_r: Request) -> Response:
        account = exchange.account()
        with journal() as j:
            tags = _strategy_by_tag(j)
        return json_response(200, positions_json(account, tags))

    def get_orders(_r: Request) -> Response:
        account = exchange.account()
        with journal() as j:
            owners = _owners(j, (o.clOrdId for o in account["open_orders"]))
        return json_response(200, open_orders_json(account, owners))

    def get_equity(_r: Request) -> Response:
        exchange.account()  # a fresh sample when the last read is older than the TTL
        with exchange.lock:
            samples = list(exchange.equity.samples)
            where = exchange.equity.where
        return json_response(
            200,
            {
                "samples": [
                    {"ts_ms": ts, "eq": _money(eq), "upl": _money(upl)} for ts, eq, upl in samples
                ],
                "sampled": f"by botkit serve at each read of the account, at most every"
                f" {exchange.ttl_s:g} s, the last {exchange.equity.keep:,} kept {where}",
            },
        )

    def get_decisions(request: Request) -> Response:
        from botkit.journal import OrderFilter

        limit = _limit(request, 50)
        strategy = request.query.get("strategy") or None
        with journal() as j:
            # the newest `limit` in SQL: the journal grows by every order ever placed
            orders = j.orders(OrderFilter(strategy=strategy, include_dry=False, limit=limit))
            fires = j.recent_evaluations(limit=limit, fired_only=True)
        recent = sorted(orders, key=lambda r: -r.id)
        return json_response(
            200,
            {
                "orders": [order_json(r) for r in recent],
                "fires": [
                    {**_journaled_rule_json(e), "strategy": e.strategy}
                    for e in fires
                    if strategy is None or e.strategy == strategy
                ],
            },
        )

    def get_order(request: Request) -> Response:
        cl = request.params["cl_ord_id"]
        with journal() as j:
            record = j.order(cl)
            events = j.events_for(cl) if record is not None else []
        if record is None:
            raise ApiError(404, "no order with this client order id in the journal")
        return json_response(
            200, {"order": order_json(record), "history": [event_json(e) for e in events]}
        )

    def get_events(request: Request) -> Response:
        limit = _limit(request, 100)
        after = _int_arg(request, "after", -1)
        with journal() as j:
            body = events_json(j, limit=limit, after=after, kind=request.query.get("kind"))
        return json_response(200, body)

    router.add("GET", "/api/health", get_health)
    router.add("GET", "/api/status", get_status)
    router.add("GET", "/api/controls", get_controls)
    router.add("GET", "/api/strategies", get_strategies)
    router.add("GET", "/api/positions", get_positions)
    router.add("GET", "/api/equity", get_equity)
    router.add("GET", "/api/orders", get_orders)
    router.add("GET", "/api/orders/{cl_ord_id}", get_order)
    router.add("GET", "/api/decisions", get_decisions)
    router.add("GET", "/api/events", get_events)
