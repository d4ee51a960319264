"""``botkit data ...``: market data for backtests — synthesize, fetch and check candle files.

* ``synth``  a seeded synthetic series (random walk with trend, volatility, jumps); the same
  arguments write the same bytes. Start price and tick default to the simulator's instrument.
* ``fetch``  candles of ``/v3/market/candles`` through the configured exchange (``live`` or the
  embedded ``sim``), paged, deduplicated, sorted, written as CSV (or JSON lines).
* ``check``  load a candle file as the backtest would and say what it holds, or every problem
  with its line.

Layouts: docs/backtest.md. Output format follows the extension (``.jsonl`` → JSON lines).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botkit.backtest.progress import Progress
from botkit.cli.argtypes import TimeArg, candle_interval_arg, interval_arg, positive_int, time_arg
from botkit.clock import wall_ms
from botkit.errors import BotkitError, UsageError
from botkit.exchange.params import MAX_PAGE
from botkit.timeparse import exchange_interval, format_interval, format_time

if TYPE_CHECKING:  # the loaders, writer and fetcher are imported when a command runs
    from botkit.backtest.candles import CandleSeries

__all__ = ["register"]

_TIMES = "Unix ms, ISO-8601 with a zone, a date, an age (7d) or now (docs/times.md)"
_FALLBACK_PRICE = Decimal(30000)
_FALLBACK_TICK = Decimal("0.1")
# botkit.backtest.fetch.DEFAULT_PAGE_SIZE, spelled out so that building the parser does not
# import the fetcher (tests/test_cli_startup.py checks they agree)
_DEFAULT_PAGE_SIZE = 100


def _decimal(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"{text!r} is not a decimal number") from None
    if not value.is_finite() or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive decimal number")
    return value


def _page_size(text: str) -> int:
    """Candles per request: what the client may ask for (the v3 queries' page limit)."""
    value = positive_int(text)
    if value > MAX_PAGE:
        raise argparse.ArgumentTypeError(
            f"{value} is more than the {MAX_PAGE} candles a request may ask for"
        )
    return value


def _rate(text: str) -> float:
    """Requests per second at most, 0 for no pacing (a pace, not money: a float is fine)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"{text!r} must be a number of requests a second, 0 or more (0: no pacing)"
        )
    return value


def _model_number(text: str) -> float:
    """A parameter of the synthetic model (a float: model maths, not money)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} must be a finite number")
    return value


def _writable_file(out: Path) -> None:
    """Refuse an ``--out`` that cannot be written, before anything is fetched or made (its
    folder is created here, as writing would)."""
    if out.is_dir():
        raise UsageError(f"--out {out} is a directory: name a file such as {out / 'candles.csv'}")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(
            f"--out {out}: cannot create {out.parent}: {exc.strerror or exc}"
        ) from None
    if not os.access(out.parent, os.W_OK) or (out.exists() and not os.access(out, os.W_OK)):
        raise UsageError(f"--out {out}: not writable")


def _instrument_defaults(symbol: str) -> tuple[Decimal, Decimal] | None:
    """(start price, tick) of ``symbol`` in the simulator the settings name, if it has it."""
    from botkit.settings import load_settings  # settings only when needed
    from botkit.sim.inprocess import sim_config_for

    config = sim_config_for(load_settings())
    for inst in config.instruments:
        if inst.symbol == symbol:
            return inst.start_px, inst.tSz
    return None


def _write(bars: Any, out: Path) -> int:
    from botkit.backtest.candle_writer import write_candles
    from botkit.backtest.synth import SynthOverflow

    try:
        return write_candles(bars, out)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    except SynthOverflow as exc:
        raise UsageError(str(exc)) from None


def _synth(args: argparse.Namespace) -> int:
    from botkit.backtest.synth import SynthParams, synth_bars

    now = wall_ms()
    start = args.start.at(now)
    end = TimeArg.resolve(args.end, now)
    interval: int = args.interval
    if end is not None:
        if end <= start:
            raise UsageError("--end must be after --start")
        count = -(-(end - start) // interval)
    else:
        count = args.candles
    price, tick = args.start_price, args.tick
    if price is None or tick is None:
        found = _instrument_defaults(args.symbol)
        if found is None:
            print(
                f"note: {args.symbol} is not an instrument of the simulator; using start price "
                f"{price or _FALLBACK_PRICE} and tick {tick or _FALLBACK_TICK}",
                file=sys.stderr,
            )
            found = (_FALLBACK_PRICE, _FALLBACK_TICK)
        price = price if price is not None else found[0]
        tick = tick if tick is not None else found[1]
    params = SynthParams(start_ms=start, count=count, interval_ms=interval, seed=args.seed,
                         start_price=price, tick=tick, trend=args.trend,
                         volatility=args.volatility, jump_prob=args.jump_prob,
                         jump_size=args.jump_size)  # fmt: skip
    problems = params.problems()
    if problems:
        raise UsageError("; ".join(problems))
    _writable_file(args.out)
    written = _write(synth_bars(params), args.out)
    end = start + written * interval
    print(
        f"wrote {written:,} {format_interval(interval)} candles of {args.symbol} "
        f"({format_time(start)} → {format_time(end)}, seed {args.seed}) to {args.out}"
    )
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from botkit.app import clients  # the client only when fetching
    from botkit.backtest.candles import load_candles
    from botkit.backtest.fetch import fetch_candles
    from botkit.settings import load_settings

    word = exchange_interval(args.interval)  # candle_interval_arg checked it has one
    _writable_file(args.out)
    settings = load_settings(config=args.config)
    with clients.make_client(settings, paper="read") as client:
        now = client.server_time()  # an age (--start 30d) is measured back from the exchange's
        start = args.start.at(now)
        end = args.end.at(now) if args.end is not None else now
        if end <= start:
            raise UsageError("--end must be after --start")
        windows = -(-(end - start) // (args.page_size * args.interval))
        eta = f", about {windows / args.rate:,.0f} s at {args.rate:g}/s" if args.rate > 0 else ""
        print(
            f"fetching {format_time(start)} → {format_time(end)} in {windows:,} requests{eta}",
            file=sys.stderr,
        )
        with Progress(windows, sys.stderr, label="fetch") as progress:
            result = fetch_candles(client, args.symbol, args.interval, start, end,
                                   page_size=args.page_size, now_ms=now, max_rate=args.rate,
                                   on_page=lambda done, _total: progress.update())  # fmt: skip
    if not result.bars:
        raise BotkitError(
            f"the exchange has no {word} candles of {args.symbol} between "
            f"{format_time(start)} and {format_time(end)}"
        )
    _write(result.bars, args.out)
    print(
        f"fetched {len(result.bars):,} {format_interval(args.interval)} candles of {args.symbol} "
        f"in {result.requests} requests to {args.out}"
    )
    series = load_candles(args.out, interval_ms=args.interval, allow_gaps=True)
    _print_gaps(series)
    return 0


def _print_gaps(series: CandleSeries) -> None:
    if not series.gaps:
        return
    missing = sum(g.missing for g in series.gaps)
    print(f"{len(series.gaps)} gaps, {missing:,} candles missing:")
    for gap in series.gaps[:10]:
        print(
            f"  {series.source}:{gap.line}: {gap.missing} missing between "
            f"{format_time(gap.after_ms)} and {format_time(gap.before_ms)}"
        )
    if len(series.gaps) > 10:
        print(f"  … and {len(series.gaps) - 10} more")


def _check(args: argparse.Namespace) -> int:
    from botkit.backtest.candles import load_candles

    now = wall_ms()
    series = load_candles(
        args.file,
        interval_ms=args.interval,
        start_ms=TimeArg.resolve(args.start, now),
        end_ms=TimeArg.resolve(args.end, now),
        allow_gaps=args.allow_gaps,
    )
    print(
        f"{args.file}: {len(series):,} {format_interval(series.interval_ms)} candles, "
        f"{format_time(series.start_ms)} → {format_time(series.end_ms)}"
    )
    _print_gaps(series)
    return 0


def _named(
    command: str, handler: Callable[[argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    """``handler`` whose usage errors name the command, as argparse's own do."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except UsageError as exc:
            text = str(exc)
            if text.startswith("botkit "):
                raise
            raise UsageError(f"botkit data {command}: {text}") from None

    return run


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "data", help="candle files for backtests: synth, fetch, check"
    )

    def show_help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(handler=show_help)
    data = parser.add_subparsers(title="data commands", metavar="WHAT")

    synth = data.add_parser("synth", help="write a seeded synthetic candle series")
    synth.add_argument("--symbol", default="BTC_USDT_PERP", help="default %(default)s")
    synth.add_argument(
        "--interval", type=interval_arg, default=60_000, help="e.g. 1m (default), 1h"
    )
    synth.add_argument("--start", type=time_arg, required=True, help=_TIMES)
    length = synth.add_mutually_exclusive_group(required=True)
    length.add_argument("--end", type=time_arg, help="end of the series (exclusive)")
    length.add_argument("--candles", type=positive_int, help="number of candles")
    synth.add_argument("--seed", type=int, default=1, help="random seed (default %(default)s)")
    synth.add_argument("--trend", type=_model_number, default=0.0,
                       help="drift of the log price per year (default %(default)s; "
                            "a negative one as --trend=-0.5)")  # fmt: skip
    synth.add_argument("--volatility", type=_model_number, default=0.6,
                       help="volatility per year (default %(default)s = 60%%)")  # fmt: skip
    synth.add_argument("--jump-prob", type=_model_number, default=0.0,
                       help="chance of a jump per candle (default %(default)s)")  # fmt: skip
    synth.add_argument("--jump-size", type=_model_number, default=0.02,
                       help="typical jump of the log price (default %(default)s)")  # fmt: skip
    synth.add_argument("--start-price", type=_decimal,
                       help="first open (default: the simulator's start price)")  # fmt: skip
    synth.add_argument("--tick", type=_decimal, help="price step (default: the instrument's)")
    synth.add_argument("--out", type=Path, required=True, help="file.csv or file.jsonl")
    synth.set_defaults(handler=_named("synth", _synth))

    fetch = data.add_parser("fetch", help="download candles from the exchange")
    fetch.add_argument("--symbol", required=True)
    fetch.add_argument(
        "--interval", type=candle_interval_arg, required=True,
        help="one the exchange serves: 1m, 5m, 15m, 30m, 1h, 2h, 4h, 6h, 12h, 1d, 3d, 1w",
    )  # fmt: skip
    fetch.add_argument("--start", type=time_arg, required=True, help=_TIMES)
    fetch.add_argument("--end", type=time_arg, help="exclusive (default: now)")
    fetch.add_argument("--out", type=Path, required=True, help="file.csv or file.jsonl")
    fetch.add_argument(
        "--page-size",
        type=_page_size,
        default=_DEFAULT_PAGE_SIZE,
        help=f"candles per request, 1..{MAX_PAGE} (default %(default)s)",
    )
    fetch.add_argument(
        "--rate",
        type=_rate,
        default=10.0,
        help="requests per second at most, 0 for no pacing (default %(default)s)",
    )
    fetch.add_argument("--config", metavar="PATH", help="settings file (default: BOTKIT_CONFIG)")
    fetch.set_defaults(handler=_named("fetch", _fetch))

    check = data.add_parser("check", help="load a candle file and report what it holds")
    check.add_argument("file", type=Path)
    check.add_argument("--interval", type=interval_arg, help="default: the most common step")
    check.add_argument("--start", type=time_arg, help=f"inclusive; {_TIMES}")
    check.add_argument("--end", type=time_arg, help="exclusive; same forms")
    check.add_argument("--allow-gaps", action="store_true", help="report gaps, do not refuse")
    check.set_defaults(handler=_named("check", _check))
