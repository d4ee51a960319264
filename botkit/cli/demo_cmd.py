"""``botkit demo``: botkit against the embedded paper exchange, no network, no credentials.

The demo is a list of steps (:data:`STEPS`) run in order over one :class:`DemoContext`: the
in-process simulator and the real :class:`~botkit.exchange.client.ExchangeClient` talking to it
through the simulator's httpx transport (signing, error mapping and parsing all exercised). This
first version shows the server time, the instruments and the balance; later steps (run the
example strategies, summarise orders and PnL) are appended to :data:`STEPS`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any, TextIO

from botkit.exchange.client import ExchangeClient
from botkit.exchange.clock import ClockSync
from botkit.exchange.factory import SIM_BASE_URL
from botkit.sim.clock import WallClock
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import SimHandle, make_sim

__all__ = ["STEPS", "DemoContext", "DemoStep", "format_table", "register", "run_demo"]

_DEFAULT_SIM_CONFIG = Path("configs/sim.toml")


@dataclass
class DemoContext:
    """What every demo step gets: the simulator, a client on it, and where to print."""

    sim: SimHandle
    client: ExchangeClient
    out: TextIO
    notes: dict[str, Any] = field(default_factory=dict)

    def say(self, text: str = "") -> None:
        print(text, file=self.out)


DemoStep = Callable[[DemoContext], None]


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A plain text table: left-aligned words, right-aligned numbers."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str], numeric: Sequence[bool]) -> str:
        parts = [
            v.rjust(w) if num else v.ljust(w)
            for v, w, num in zip(values, widths, numeric, strict=True)
        ]
        return "  ".join(parts).rstrip()

    numeric = [bool(cells) and all(_is_number(r[i]) for r in cells) for i in range(len(headers))]
    out = [line(list(headers), numeric), line(["-" * w for w in widths], numeric)]
    out.extend(line(r, numeric) for r in cells)
    return "\n".join(out)


def _is_number(text: str) -> bool:
    try:
        Decimal(text)
    except InvalidOperation:
        return False
    return True


# --- the steps -------------------------------------------------------------------------------


def show_server_time(ctx: DemoContext) -> None:
    sample = ctx.client.resync_clock()
    when = datetime.fromtimestamp(sample.server_ms / 1000, tz=UTC)
    ctx.say(f"Server time: {when.isoformat(timespec='milliseconds')} ({sample.server_ms} ms)")
    ctx.say(f"Clock offset to the server: {sample.offset_ms} ms (round trip {sample.rtt_ms} ms)")


def show_instruments(ctx: DemoContext) -> None:
    instruments = ctx.client.instruments()
    marks = {t.s: t.mPx for t in ctx.client.tickers()}
    rows = [
        (
            i.symbol,
            i.status.value,
            marks.get(i.symbol, "-"),
            i.tSz,
            i.lotSz,
            i.minSz,
            i.ctVal,
            i.limitMaxQty,
            i.ordPxRange,
            i.maxLever,
        )
        for i in instruments
    ]
    headers = (
        "symbol",
        "status",
        "mark",
        "tick",
        "lot",
        "min sz",
        "ct val",
        "max limit",
        "band",
        "lever",
    )
    ctx.say(f"Instruments ({len(instruments)}):")
    ctx.say(format_table(headers, rows))


def show_balance(ctx: DemoContext) -> None:
    balance = ctx.client.balance()
    ctx.say(
        f"Balance: equity {balance.eq}, available margin {balance.availMgn}, "
        f"initial margin {balance.im}, maintenance margin {balance.mm}, "
        f"unrealised PnL {balance.upl}"
    )
    rows = [(d.ccy, d.eq, d.avail, d.trdHold, d.upl) for d in balance.details]
    if rows:
        ctx.say(format_table(("currency", "equity", "available", "on hold", "upl"), rows))


STEPS: list[tuple[str, DemoStep]] = [
    ("server time", show_server_time),
    ("instruments", show_instruments),
    ("balance", show_balance),
]
"""The demo's steps, in order: (title, step). The service work appends its own."""


def run_demo(
    *,
    sim: SimHandle | None = None,
    steps: Sequence[tuple[str, DemoStep]] | None = None,
    out: TextIO | None = None,
    signing: str = "v3",
) -> DemoContext:
    """Run the demo steps against ``sim`` (default: a fresh simulator on wall time)."""
    out = out if out is not None else sys.stdout
    if sim is None:
        path = _DEFAULT_SIM_CONFIG if _DEFAULT_SIM_CONFIG.is_file() else None
        sim = make_sim(load_sim_config(path), WallClock())
    key = sim.credential
    client = ExchangeClient(
        SIM_BASE_URL,
        key=key.key,
        secret=key.secret,
        passphrase=key.passphrase,
        signing="pf" if signing == "pf" else "v3",
        clock=ClockSync(),
        transport=sim.transport,
    )
    ctx = DemoContext(sim, client, out)
    with client:
        ctx.say("botkit demo — the embedded paper exchange, in process (no network)")
        for title, step in steps if steps is not None else STEPS:
            ctx.say()
            ctx.say(f"== {title}")
            step(ctx)
    return ctx


def _run(args: argparse.Namespace) -> int:
    sim = None
    if args.sim_config is not None:
        sim = make_sim(load_sim_config(args.sim_config), WallClock())
    run_demo(sim=sim, signing=args.signing)
    return 0


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run the example strategies on the embedded paper exchange"
    )
    parser.add_argument(
        "--sim-config",
        type=Path,
        default=None,
        help="simulator TOML (default: configs/sim.toml if present, else built-in defaults)",
    )
    parser.add_argument(
        "--signing", choices=["v3", "pf"], default="v3", help="signing scheme to use (v3)"
    )
    parser.set_defaults(handler=_run)
