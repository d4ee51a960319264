"""The engine's records as the spec's resources, in native values (Decimal, enums, int times).

One function per resource. :mod:`botkit.sim.api` turns these dicts into JSON-ready values
(:func:`jsonify`: decimal strings, enum words, string times where the spec types them so) and
:mod:`botkit.sim.port` builds the typed models from the very same dicts with
``model_construct`` — so the wire and the in-process port cannot drift apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from enum import Enum
from typing import Any

from botkit.exchange.models import PositionMode, PosSide
from botkit.sim.accounts import MONEY_Q, BalanceFigures, PositionRecord, SimPosition, q8
from botkit.sim.book import SimOrder
from botkit.sim.config import InstrumentConfig
from botkit.sim.engine import OpenPosition, SimEngine
from botkit.sim.figures import Book
from botkit.sim.history import FillRecord
from botkit.sim.orders import band
from botkit.sim.prices import PriceSeries

__all__ = [
    "TIME_KEYS",
    "TickerBase",
    "balance_view",
    "fill_view",
    "funding_view",
    "instrument_view",
    "jsonify",
    "limit_price_fields",
    "limit_price_view",
    "open_position_at",
    "open_position_base",
    "open_position_view",
    "order_book_view",
    "order_parts",
    "order_view",
    "position_record_view",
    "risk_limit_view",
    "ticker_base",
    "ticker_fields",
    "ticker_view",
]

TIME_KEYS = frozenset({"cTime", "uTime", "oDate", "visibleStartTime", "tradableStartTime"})
_INT_KEYS = frozenset({"lotSz", "minSz", "marketMaxQty", "limitMaxQty"})
_ZERO = Decimal(0)
_FUNDING_MS = 8 * 3_600_000


def jsonify(value: Any, *, str_times: bool = True) -> Any:
    """JSON-ready: Decimal → plain decimal string, enum → its word, spec-typed times → strings."""
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _INT_KEYS and isinstance(item, Decimal) and item == item.to_integral_value():
                out[key] = int(item)
            elif str_times and key in TIME_KEYS and isinstance(item, int):
                out[key] = str(item)
            else:
                out[key] = jsonify(item, str_times=str_times)
        return out
    if isinstance(value, list | tuple):
        return [jsonify(v, str_times=str_times) for v in value]
    return value


def instrument_view(inst: InstrumentConfig, engine: SimEngine) -> dict[str, Any]:
    """2.9, with the live status."""
    fields = inst.model_dump(exclude={"start_px", "volatility"})
    fields["status"] = engine.status[inst.symbol]
    return fields


def order_view(o: SimOrder, engine: SimEngine) -> dict[str, Any]:
    """2.5 (closed) or an open order: the same fields, the state says which. The values are
    :func:`order_parts`', in the wire's order (the times last)."""
    fields, extras = order_parts(o, engine)
    c_time, u_time = fields.pop("cTime"), fields.pop("uTime")
    return {**fields, **extras, "cTime": c_time, "uTime": u_time}


def order_parts(o: SimOrder, engine: SimEngine) -> tuple[dict[str, Any], dict[str, Any]]:
    """:func:`order_view`'s values in two: an open order's fields (those of
    :class:`~botkit.exchange.models.OpenOrder`, in the view's order) and the rest (the view's
    extras for it, in the view's order). The port builds an open order's model from the two
    without splitting the view key by key (every order a cycle placed is built so)."""
    inst = engine.instruments[o.symbol]
    fee = o.fee
    return {
        "symbol": o.symbol,
        "side": o.side,
        "type": o.type,
        "ordId": str(o.ord_id),
        "clOrdId": o.cl_ord_id,
        "mgnMode": o.mgn_mode,
        "posSide": o.pos_side,
        "px": o.px,
        "sz": o.sz,
        "state": o.state,
        "cancelReason": o.cancel_reason,
        "source": o.source,
        "reduceOnly": o.reduce_only,
        "timeInForce": o.tif,
        "stpMode": o.stp,
        "avgPx": q8(o.exec_px_qty / o.exec_qty) if o.exec_qty else _ZERO,
        "execQty": o.exec_qty,
        "cTime": o.c_time,
        "uTime": o.u_time,
    }, {
        "execAmt": o.exec_amt,
        "feeCcy": inst.sCcy,
        "feeAmt": fee,
        "deductCcy": inst.sCcy,
        "deductAmt": fee,
        "actType": "FUTURES",
        "qCcy": inst.qCcy,
        "lever": o.lever,
        "slPx": "",
        "slTrgPx": "",
        "slTrgPxType": "",
        "tpPx": "",
        "tpTrgPx": "",
        "tpTrgPxType": "",
    }


def fill_view(f: FillRecord, engine: SimEngine) -> dict[str, Any]:
    """2.6."""
    inst = engine.instruments[f.symbol]
    return {
        "id": str(f.id),
        "symbol": f.symbol,
        "clOrdId": f.cl_ord_id,
        "ordId": str(f.ord_id),
        "trdId": str(f.trd_id),
        "side": f.side,
        "type": "TRADE",
        "mgnMode": f.mgn_mode,
        "posSide": f.pos_side,
        "ordType": f.ord_type,
        "role": f.role,
        "px": f.px,
        "qty": f.qty,
        "cTime": f.c_time,
        "uTime": f.c_time,
        "actType": "FUTURES",
        "qCcy": inst.qCcy,
        "value": f.value,
        "feeCcy": inst.sCcy,
        "feeAmt": f.fee,
        "deductCcy": inst.sCcy,
        "deductAmt": f.fee,
        "feeRate": f.fee_rate,
    }


def position_record_view(p: PositionRecord) -> dict[str, Any]:
    """2.7: a closed position (size after execution 0)."""
    return {
        "id": str(p.id),
        "symbol": p.symbol,
        "side": p.side,
        "mgnMode": p.mgn_mode,
        "posSide": p.pos_side,
        "openAvgPx": p.open_avg_px,
        "closeAvgPx": p.close_avg_px,
        "qty": _ZERO,
        "closedQty": p.closed_qty,
        "availQty": _ZERO,
        "pnl": p.pnl,
        "fee": p.fee,
        "fFee": _ZERO,
        "state": "NORMAL",
        "cTime": p.c_time,
        "uTime": p.u_time,
    }


def open_position_base(
    pos: SimPosition, avail_qty: Decimal, lever: Decimal, mode: PositionMode
) -> dict[str, Any]:
    """An open position's fields that do not move with the mark (those are None here).

    ``qty`` is signed in one-way mode, the leg's size in hedge mode.
    """
    qty = pos.qty if mode is PositionMode.ONE_WAY or pos.pos_side is PosSide.BOTH else abs(pos.qty)
    return {
        "symbol": pos.symbol,
        "mgnMode": pos.mgn_mode,
        "posSide": pos.pos_side,
        "side": pos.side,
        "qty": qty,
        "availQty": avail_qty,
        "openAvgPx": pos.avg_px,
        "markPx": None,
        "lastPx": None,
        "indexPx": None,
        "liqPx": None,
        "lever": lever,
        "im": None,
        "mm": None,
        "mgn": None,
        "upl": None,
        "uplRatio": None,
        "pnl": pos.pnl,
        "fee": pos.fee,
        "fFee": _ZERO,
        "mgnRatio": None,
        "adl": None,
        "state": "NORMAL",
        "cTime": pos.c_time,
        "uTime": pos.u_time,
    }


def open_position_at(
    base: dict[str, Any], mark: Decimal, im: Decimal, mm: Decimal, upl: Decimal
) -> dict[str, Any]:
    """A copy of ``base`` (:func:`open_position_base`) completed with the figures at ``mark``."""
    fields = base.copy()
    fields["markPx"] = fields["lastPx"] = fields["indexPx"] = mark
    fields["im"] = fields["mgn"] = im
    fields["mm"] = mm
    fields["upl"] = upl
    if im:
        fields["uplRatio"] = (upl / im).quantize(MONEY_Q, ROUND_HALF_EVEN)
        fields["mgnRatio"] = (mm / im).quantize(MONEY_Q, ROUND_HALF_EVEN)
    else:
        fields["uplRatio"] = fields["mgnRatio"] = _ZERO
    return fields


def open_position_view(op: OpenPosition, mode: PositionMode) -> dict[str, Any]:
    """An open position (the same fields, in the same order, as the port builds it from)."""
    f = op.figures
    base = open_position_base(op.position, op.avail_qty, op.lever, mode)
    return open_position_at(base, op.mark, f.im, f.mm, f.upl)


def balance_view(b: BalanceFigures | Book) -> dict[str, Any]:
    """2.10 with one ``details`` entry (the settlement currency)."""
    detail = {
        "ccy": b.currency,
        "eq": b.eq,
        "isoEq": b.iso_eq,
        "avail": b.avail,
        "trdHold": b.order_im,
        "upl": b.upl,
        "isoAvail": b.iso_position_im,
        "isoHold": b.iso_hold,
        "isoUpl": b.iso_upl,
        "im": b.im,
        "mm": b.mm,
        "mmr": b.mmr,
        "imr": b.imr,
        "cTime": b.c_time,
        "uTime": b.u_time,
    }
    return {
        "state": "NORMAL",
        "eq": b.eq,
        "isoEq": b.iso_eq,
        "im": b.im,
        "mm": b.mm,
        "mmr": b.mmr,
        "upl": b.upl,
        "availMgn": b.avail,
        "cTime": b.c_time,
        "uTime": b.u_time,
        "details": [detail],
    }


@dataclass(frozen=True, slots=True)
class TickerBase:
    """What a symbol's ticker takes from the engine besides the mark and the 24h stats; fixed
    for an engine (instruments and price settings do not change), so callers may keep it."""

    symbol: str
    series: PriceSeries
    tick: Decimal
    spread: Decimal
    depth: Decimal | None
    name: str


def ticker_base(engine: SimEngine, symbol: str) -> TickerBase:
    inst = engine.instruments[symbol]
    prices = engine.config.prices
    return TickerBase(
        symbol=symbol,
        series=engine.prices[symbol],
        tick=inst.tSz,
        spread=inst.tSz * prices.spread_ticks,
        depth=prices.depth_per_fill or inst.marketMaxQty,
        name=symbol.replace("_", "/"),
    )


def ticker_fields(base: TickerBase, now_ms: int) -> dict[str, Any]:
    """The notes' 24h ticker: last = mark = index; bid/ask ``spread_ticks`` around the mark."""
    series = base.series
    mark = series.mark
    open_, high, low, qty, amt, count = series.day_stats(now_ms)
    bid = mark - base.spread
    tick = base.tick
    return {
        "s": base.symbol,
        "o": open_,
        "h": high,
        "l": low,
        "c": mark,
        "qty": qty,
        "amt": amt,
        "tC": count,
        "sT": now_ms - 86_400_000,
        "cT": now_ms,
        "dN": base.name,
        "dC": ((mark - open_) / open_).quantize(MONEY_Q, ROUND_HALF_EVEN) if open_ else _ZERO,
        "bPx": tick if tick > bid else bid,
        "bSz": base.depth,
        "aPx": mark + base.spread,
        "aSz": base.depth,
        "mPx": mark,
        "iPx": mark,
    }


def ticker_view(engine: SimEngine, symbol: str, now_ms: int) -> dict[str, Any]:
    """The notes' 24h ticker of ``symbol`` (see :func:`ticker_fields`)."""
    return ticker_fields(ticker_base(engine, symbol), now_ms)


def limit_price_view(engine: SimEngine, symbol: str) -> dict[str, Any]:
    low, high = band(engine.instruments[symbol], engine.prices[symbol].mark)
    return limit_price_fields(symbol, low, high)


def limit_price_fields(symbol: str, low: Decimal, high: Decimal) -> dict[str, Any]:
    """The band ``(low, high)`` of ``symbol`` as the wire shows it."""
    return {"symbol": symbol, "buyLmt": high, "sellLmt": low}


def funding_view(symbol: str, now_ms: int) -> dict[str, Any]:
    """A flat funding rate; funding is never charged (see docs/simulator.md)."""
    next_t = now_ms - now_ms % _FUNDING_MS + _FUNDING_MS
    return {
        "s": symbol,
        "fR": Decimal("0.0001"),
        "fT": next_t,
        "nFR": Decimal("0.0001"),
        "nFT": next_t + _FUNDING_MS,
    }


def order_book_view(engine: SimEngine, symbol: str, levels: int, now_ms: int) -> dict[str, Any]:
    """A synthetic book: ``levels`` price levels a tick apart outside the bid/ask."""
    inst = engine.instruments[symbol]
    mark = engine.prices[symbol].mark
    spread = engine.config.prices.spread_ticks
    depth = engine.config.prices.depth_per_fill or inst.marketMaxQty
    asks = [[mark + inst.tSz * (spread + i), depth] for i in range(levels)]
    bids = [
        [mark - inst.tSz * (spread + i), depth]
        for i in range(levels)
        if mark - inst.tSz * (spread + i) > 0
    ]
    return {"asks": asks, "bids": bids, "s": symbol, "ts": now_ms}


def risk_limit_view(inst: InstrumentConfig, mgn_mode: str) -> list[dict[str, Any]]:
    """2.11: three tiers derived from the instrument (the account is always on tier 1)."""
    tiers = []
    lower = _ZERO
    for n in (1, 2, 3):
        upper = inst.mR * n
        tiers.append(
            {
                "symbol": inst.symbol,
                "mgnMode": mgn_mode,
                "tier": str(n),
                "maxLever": max(Decimal(1), inst.maxLever / (2 ** (n - 1))).to_integral_value(),
                "mMRatio": inst.mM * n,
                "maxSize": upper,
                "minSize": lower,
            }
        )
        lower = upper
    return tiers
