"""Load-time check of a ladder against its instrument: would every rung be refused?

A ladder of constant prices is checked against ``minPx`` / ``maxPx``. A ladder priced from the
market (``price.mark * 0.9``...) is probed at a reference price: if every rung lies further
from the mark than ``ordPxRange`` allows, the exchange would refuse all of them whatever the
price, which is worth saying before the strategy runs.
"""

from __future__ import annotations

from decimal import Decimal

from botkit.exchange.models import Balance, Instrument, Ticker
from botkit.rules.context import Ctx
from botkit.rules.expr import Expr
from botkit.rules.model import Ladder
from botkit.rules.runtime import EvalError, env_for, value
from botkit.snapshot import Snapshot

__all__ = ["ladder_prices", "ladder_problem"]

REFERENCE = Decimal(1000)
_PRICE_ONLY = ("price.", "instrument.")


def _probe_ok(exprs: list[Expr]) -> bool:
    return all(all(d.startswith(_PRICE_ONLY) for d in e.display.values()) for e in exprs)


def ladder_prices(ladder: Ladder, instrument: Instrument, mark: Decimal) -> list[Decimal] | None:
    """The rung prices with every price field at ``mark``; None if they cannot be known now."""
    exprs = [ladder.count, ladder.from_px, *(e for e in (ladder.step_px, ladder.to_px) if e)]
    if not _probe_ok(exprs):
        return None
    snap = Snapshot(
        now_ms=0,
        balance=Balance(),
        instruments={instrument.symbol: instrument},
        tickers={
            instrument.symbol: Ticker(
                s=instrument.symbol, c=mark, mPx=mark, iPx=mark, bPx=mark, aPx=mark, o=mark,
                h=mark, l=mark,
            )
        },
    )  # fmt: skip
    ctx = Ctx(snap, "probe", instrument.symbol, {}, 0)
    resolvers = {k: v for e in exprs for k, v in e.resolvers.items()}
    env = env_for(ctx, resolvers)
    try:
        count = value(ladder.count, env)
        start = value(ladder.from_px, env)
        if count != int(count) or not 1 <= count <= 200:
            return None
        n = int(count)
        if ladder.to_px is not None:
            end = value(ladder.to_px, env)
            step = (end - start) / (n - 1) if n > 1 else Decimal(0)
        elif ladder.step_px is not None:
            step = value(ladder.step_px, env)
            step = -step if ladder.fields.side.value == "BUY" else step
        else:
            return None
    except (EvalError, ArithmeticError, ValueError):
        return None
    return [start + step * k for k in range(n)]


def ladder_problem(ladder: Ladder, instrument: Instrument) -> tuple[str, str] | None:
    """(message, hint) when every rung would be refused by the instrument's limits."""
    constant = all(
        e.const is not None
        for e in (ladder.count, ladder.from_px, ladder.step_px, ladder.to_px)
        if e
    )
    prices = ladder_prices(ladder, instrument, REFERENCE)
    if not prices:
        return None
    lo, hi = min(prices), max(prices)
    shown = f"{len(prices)} ladder prices ({_fmt(prices[0])} .. {_fmt(prices[-1])})"
    if constant:
        if instrument.minPx and hi < instrument.minPx:
            return (
                f"all {shown} are below minPx {instrument.minPx} of {instrument.symbol}",
                "raise from_px or shorten the ladder",
            )
        if instrument.maxPx and lo > instrument.maxPx:
            return (
                f"all {shown} are above maxPx {instrument.maxPx} of {instrument.symbol}",
                "lower from_px or shorten the ladder",
            )
        return None
    band = instrument.ordPxRange
    if band:
        low, high = REFERENCE * (1 - band), REFERENCE * (1 + band)
        if all(p < low or p > high for p in prices):
            pct = _fmt(band * 100)
            return (
                f"every ladder price is more than {pct}% (ordPxRange) from the mark, "
                f"so {instrument.symbol} would refuse all {len(prices)} orders",
                "start the ladder nearer the mark or use a smaller step",
            )
    return None


def _fmt(value: Decimal) -> str:
    return format(value.normalize(), "f")
