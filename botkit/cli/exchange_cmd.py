"""``botkit exchange ...``: read-only looks at the exchange, as a table or as JSON (``--json``).

Each subcommand loads the settings, builds a client with
:func:`botkit.app.clients.make_client` (the embedded simulator when ``exchange = "sim"``),
calls one read endpoint and prints the answer. History commands print one page, or with
``--start`` every record of the range (paged and split into 90-day windows). Times and intervals
are read as every command reads them (:mod:`botkit.timeparse`, docs/times.md) and shown in UTC.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from botkit.cli.argtypes import TimeArg, candle_interval_arg, positive_int, time_arg
from botkit.exchange.queries import FillQuery, HistoryQuery, OrderQuery, PositionQuery
from botkit.numbers import shown
from botkit.timeparse import exchange_interval

if TYPE_CHECKING:  # the client, models and settings are imported when a command runs
    from pydantic import BaseModel

    from botkit.live.client import ExchangeClient

    Command = Callable[[ExchangeClient, argparse.Namespace], Any]

__all__ = ["register", "render_table"]

_DAY_MS = 86_400_000
_TIME_FIELDS = frozenset({"cTime", "uTime", "sT", "cT", "oDate", "ts", "fT", "nFT"})


def _show(name: str, value: Any) -> str:
    if value is None or value == "":
        return "-"
    if name in _TIME_FIELDS and isinstance(value, int) and value > 0:
        return datetime.fromtimestamp(value / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, bool):
        return "yes" if value else "no"
    return shown(getattr(value, "value", value))


def render_table(rows: Sequence[BaseModel | dict[str, Any]], columns: Sequence[str]) -> str:
    """Rows as aligned text columns (times in UTC, None as ``-``)."""
    cells = [list(columns)]
    for row in rows:
        get = row.get if isinstance(row, dict) else functools.partial(getattr, row)
        cells.append([_show(c, get(c, None)) for c in columns])
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    lines = ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    return "\n".join(lines) if rows else f"{lines[0]}\n(none)"


def _as_json(value: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_as_json(v) for v in value]
    return value


# --- the subcommands -----------------------------------------------------------------------


def _time(client: ExchangeClient, _args: argparse.Namespace) -> dict[str, Any]:
    sample = client.resync_clock()
    return {
        "serverTime": sample.server_ms,
        "iso": datetime.fromtimestamp(sample.server_ms / 1000, tz=UTC).isoformat(),
        "offsetMs": sample.offset_ms,
        "roundTripMs": sample.rtt_ms,
    }


def _history(
    page: Callable[[Any], Sequence[Any]],
    query: HistoryQuery,
    client: ExchangeClient,
    args: argparse.Namespace,
) -> list[Any]:
    """One page; or with --start every record of [start, end] (--limit caps the count)."""
    from botkit.exchange.paging import iter_history

    now = client.clock.now_ms()  # an age (--start 7d) is measured back from the exchange's time
    end = TimeArg.resolve(args.end, now)
    if args.start is None:
        s_time = None if end is None else max(end - 90 * _DAY_MS, 0)
        return list(page(replace(query, start=s_time, end=end, limit=args.limit or 100)))
    start = args.start.at(now)
    records = iter_history(page, replace(query, start=start, end=end if end is not None else now))
    return list(itertools.islice(records, args.limit))


_COMMANDS: dict[str, tuple[str, Command, Sequence[str]]] = {
    "time": ("server time and the clock offset", _time, ()),
    "instruments": (
        "futures instruments and their order limits",
        lambda c, a: c.instruments(a.symbol),
        ("symbol", "status", "tSz", "lotSz", "minSz", "ctVal", "minPx", "maxPx", "limitMaxQty",
         "marketMaxQty", "maxLever", "ordPxRange"),
    ),
    "markets": (
        "spot symbols and their trade limits",
        lambda c, _a: c.markets(),
        ("symbol", "state", "baseCurrencyName", "quoteCurrencyName", "displayName"),
    ),
    "currencies": (
        "currencies (v1 view)",
        lambda c, a: c.currencies(include_multi_chain=a.multi_chain),
        ("name", "id", "blockchain", "tradingState", "walletState", "withdrawalFee", "delisted"),
    ),
    "tickers": (
        "last, mark, index, best bid/ask and 24h figures",
        lambda c, a: c.tickers(a.symbol),
        ("s", "c", "mPx", "iPx", "bPx", "aPx", "h", "l", "qty", "dC"),
    ),
    "balance": (
        "the futures account (per-currency details with --json)",
        lambda c, _a: c.balance(),
        ("state", "eq", "availMgn", "im", "mm", "mmr", "upl", "isoEq", "uTime"),
    ),
    "positions": (
        "open positions",
        lambda c, a: c.open_positions(a.symbol),
        ("symbol", "mgnMode", "posSide", "side", "qty", "openAvgPx", "markPx", "upl", "lever",
         "liqPx"),
    ),
    "orders": (
        "open orders (every page)",
        lambda c, a: c.open_orders(a.symbol),
        ("ordId", "clOrdId", "symbol", "side", "type", "posSide", "px", "sz", "execQty", "state",
         "cTime"),
    ),
    "history": (
        "closed orders",
        lambda c, a: _history(c.order_history, OrderQuery(symbol=a.symbol), c, a),
        ("ordId", "clOrdId", "symbol", "side", "type", "px", "sz", "avgPx", "execQty", "state",
         "cancelReason", "uTime"),
    ),
    "fills": (
        "executions",
        lambda c, a: _history(c.fills, FillQuery(symbol=a.symbol), c, a),
        ("id", "ordId", "clOrdId", "symbol", "side", "role", "px", "qty", "feeAmt", "feeCcy",
         "cTime"),
    ),
    "position-history": (
        "closed positions",
        lambda c, a: _history(c.position_history, PositionQuery(symbol=a.symbol), c, a),
        ("id", "symbol", "mgnMode", "posSide", "side", "openAvgPx", "closeAvgPx", "closedQty",
         "pnl", "fee", "state", "uTime"),
    ),
    "risk-limit": (
        "risk-limit tiers of a symbol",
        lambda c, a: c.risk_limit(a.symbol),
        ("symbol", "mgnMode", "tier", "maxLever", "mMRatio", "minSize", "maxSize"),
    ),
    "limit-price": (
        "the price band orders must fall in now",
        lambda c, a: [c.limit_price(a.symbol)],
        ("symbol", "buyLmt", "sellLmt"),
    ),
    "candles": (
        "candles, oldest first",
        lambda c, a: c.candles(
            a.symbol,
            exchange_interval(a.interval),
            start=TimeArg.resolve(a.start, c.clock.now_ms()),
            end=TimeArg.resolve(a.end, c.clock.now_ms()),
            limit=a.limit,
        ),
        ("sT", "open", "high", "low", "close", "qty", "amt", "tC"),
    ),
}  # fmt: skip

_NEEDS_SYMBOL = frozenset({"risk-limit", "limit-price", "candles"})
_HAS_SYMBOL = frozenset(
    {"instruments", "tickers", "positions", "orders", "history", "fills", "position-history"}
)
_HAS_RANGE = frozenset({"history", "fills", "position-history", "candles"})


def _run(args: argparse.Namespace) -> int:
    from botkit.app import clients
    from botkit.settings import load_settings

    settings = load_settings(config=args.config)
    _, command, columns = _COMMANDS[args.what]
    with clients.make_client(settings, paper="read") as client:
        result = command(client, args)
    if args.json:
        print(json.dumps(_as_json(result), indent=2, default=str))
    elif isinstance(result, dict):
        print("\n".join(f"{k}: {v}" for k, v in result.items()))
    else:
        rows = result if isinstance(result, list) else [result]
        print(render_table(rows, columns))
    return 0


def _settings(args: argparse.Namespace) -> int:
    from botkit.settings import load_settings

    shown = load_settings(config=args.config).describe()
    if args.json:
        print(json.dumps(shown, indent=2))
    else:
        width = max(map(len, shown))
        print("\n".join(f"{k.ljust(width)}  {v}" for k, v in shown.items()))
    return 0


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON instead of a table")
    common.add_argument("--config", metavar="PATH", help="settings file (default: BOTKIT_CONFIG)")
    return common


def _add_options(parser: argparse.ArgumentParser, name: str) -> None:
    if name in _NEEDS_SYMBOL:
        parser.add_argument("--symbol", required=True, help="e.g. BTC_USDT_PERP")
    elif name in _HAS_SYMBOL:
        parser.add_argument("--symbol", help="only this symbol")
    if name == "currencies":
        parser.add_argument("--multi-chain", action="store_true", help="a row per chain")
    if name == "candles":
        parser.add_argument(
            "--interval", type=candle_interval_arg, default=3_600_000,
            help="1m, 5m, 15m, 30m, 1h (default), 2h, 4h, 6h, 12h, 1d, 3d, 1w, or the "
            "exchange's word (MINUTE_1 … WEEK_1)",
        )  # fmt: skip
    if name in _HAS_RANGE:
        parser.add_argument(
            "--start", type=time_arg, metavar="TIME",
            help="Unix ms, ISO-8601 with a zone, a date, an age (7d) or now (docs/times.md)",
        )  # fmt: skip
        parser.add_argument("--end", type=time_arg, metavar="TIME", help="same forms; default now")
        parser.add_argument("--limit", type=positive_int, help="page size / most records shown")


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "exchange", help="look at the exchange: time, instruments, balance, positions, orders"
    )
    commands = parser.add_subparsers(title="what", metavar="WHAT", dest="what")
    common = _common()
    for name, (text, _command, _columns) in _COMMANDS.items():
        one = commands.add_parser(name, help=text, description=text, parents=[common])
        _add_options(one, name)
        one.set_defaults(handler=_run)
    shown = commands.add_parser(
        "settings", help="the effective settings, secrets masked", parents=[common]
    )
    shown.set_defaults(handler=_settings)
    parser.set_defaults(handler=lambda _args: _usage(parser))


def _usage(parser: argparse.ArgumentParser) -> int:
    parser.print_help()
    return 2
