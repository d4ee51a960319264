"""``botkit demo``: botkit against the embedded paper exchange, no network, no credentials.

The demo is a list of steps (:data:`STEPS`) run in order over one :class:`DemoContext`: the
in-process simulator and the real :class:`~botkit.live.client.ExchangeClient` talking to it
through the simulator's httpx transport (signing, error mapping and parsing all exercised). This
first version shows the server time, the instruments and the balance; later steps (run the
example strategies, summarise orders and PnL) are appended to :data:`STEPS`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from botkit.backtest.progress import Progress
from botkit.errors import UsageError
from botkit.numbers import shown

if TYPE_CHECKING:  # the simulator, client and runner are imported when the demo runs
    from botkit.app.paper import PaperRun
    from botkit.journal import Journal
    from botkit.live.client import ExchangeClient
    from botkit.sim.inprocess import SimHandle

__all__ = [
    "PAPER_STEPS",
    "STEPS",
    "DemoContext",
    "DemoStep",
    "PaperOptions",
    "format_table",
    "register",
    "run_demo",
]

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
    cells = [[shown(c) for c in row] for row in rows]
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
            str(i.status),
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


# --- the main job: the example strategies on simulated time ---------------------------------


@dataclass(frozen=True, slots=True)
class PaperOptions:
    """How long and on what the demo trades (``botkit demo`` flags)."""

    strategies: Path = Path("strategies")
    journal: Path = Path("var/demo-journal.sqlite")
    hours: int = 8


def _fresh_journal(path: Path, clock: Callable[[], int]) -> Journal:
    """The demo's own journal, emptied first: each demo run tells one story. It is held first
    (a demo, or a service, already on it is refused before anything is removed)."""
    from botkit.journal import Journal, lock_journal

    def cannot(exc: OSError) -> UsageError:
        return UsageError(
            f"--journal {path}: cannot start it afresh ({exc.strerror or exc}): "
            "name a file in a folder you can write, such as var/demo-journal.sqlite"
        )

    try:  # a path the system refuses is the usage error below, not a journal error
        os.stat(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise cannot(exc) from None
    lock = lock_journal(path, "botkit demo")
    for suffix in ("", "-wal", "-shm"):
        try:
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        except OSError as exc:
            lock.release()
            raise cannot(exc) from None
    return Journal(path, clock=clock, synchronous="NORMAL", lock=lock)


def trade_on_paper(ctx: DemoContext) -> None:
    from botkit.app.paper import run_paper
    from botkit.clock import ManualClock

    options: PaperOptions = ctx.notes.get("paper", PaperOptions())
    if not isinstance(ctx.sim.clock, ManualClock):
        raise UsageError("the paper run needs the simulator on simulated time")
    span = options.hours * 3_600_000
    ctx.notes["start_equity"] = ctx.client.balance().eq or Decimal(0)
    progress = Progress(span, label=f"trading {options.hours}h of simulated time")
    journal = _fresh_journal(options.journal, ctx.sim.clock.now_ms)
    ctx.say(f"Strategies from {options.strategies}/, journal {options.journal}")
    done = 0

    def advance(elapsed: int) -> None:
        nonlocal done
        progress.update(elapsed - done)
        done = elapsed

    try:
        run = run_paper(
            ctx.sim,
            ctx.client,
            strategies=[options.strategies],
            journal=journal,
            span_ms=span,
            on_progress=advance,
        )
    finally:
        progress.close()
    ctx.notes["run"] = run
    ctx.say(f"Ran {run.cycles} cycles over {(run.end_ms - run.start_ms) / 3_600_000:.1f}h.")


def show_summary(ctx: DemoContext) -> None:
    from botkit.app.paper import money, summarize

    run: PaperRun = ctx.notes["run"]
    options: PaperOptions = ctx.notes.get("paper", PaperOptions())
    try:
        summary = summarize(run, ctx.client, ctx.notes["start_equity"])
    finally:
        run.journal.close()
    placed = sum(n for k, n in summary.outcomes.items() if k != "rejected_local")
    ctx.say(f"Cycles: {summary.cycles}; strategies: {', '.join(summary.strategies) or 'none'}")
    ctx.say(
        f"Orders: {placed} sent, {summary.outcomes.get('accepted', 0)} accepted, "
        f"{summary.outcomes.get('rejected', 0)} rejected by the exchange, "
        f"{summary.outcomes.get('rejected_local', 0)} refused locally, "
        f"{summary.outcomes.get('failed', 0)} failed, "
        f"{summary.outcomes.get('unsettled', 0)} unsettled"
    )
    if summary.refused:
        ctx.say("Refused locally, by reason:")
        ctx.say(format_table(("reason", "orders"), sorted(summary.refused.items())))
    if summary.rejected:
        ctx.say("Rejected by the exchange, by code:")
        ctx.say(format_table(("code and message", "orders"), sorted(summary.rejected.items())))
    if summary.trades:
        from botkit.backtest.trades import attribute

        total = sum((t.net for t in summary.trades), Decimal(0))
        still_open = sum(1 for t in summary.trades if t.status == "open")
        ctx.say(
            f"Trades: {len(summary.trades) - still_open} closed, {still_open} open (valued at "
            f"the mark); net PnL {money(total)} USDT after {money(summary.fees, 4)} fees. "
            "By the rule that opened them, and by the rule that closed them (each adds up to "
            "the total):"
        )
        for title, by in (("opened by", "entry"), ("closed by", "exit")):
            by_rule = [
                (r.key, r.trades, f"{r.win_rate * 100:.1f}%", money(r.net), money(r.fees, 4))
                for r in attribute(summary.trades, by)
            ]
            ctx.say(format_table((title, "trades", "won", "net PnL", "fees"), by_rule))
    else:
        ctx.say("No fills: no strategy traded in this stretch.")
    symbols = sorted(set(summary.realized) | {p.symbol for p in summary.positions})
    if symbols:
        ctx.say("Positions and PnL per symbol, as the exchange books them:")
        table: list[tuple[object, ...]] = []
        for symbol in symbols:
            realized = money(summary.realized.get(symbol, Decimal(0)))
            legs = sorted(
                (p for p in summary.positions if p.symbol == symbol), key=lambda p: p.posSide.value
            )
            table += [
                (
                    symbol,
                    p.posSide.value,
                    p.qty,
                    money(p.openAvgPx or Decimal(0)),
                    money(p.upl or Decimal(0)),
                    realized,
                )
                for p in legs
            ] or [(symbol, "-", 0, "-", "0.00", realized)]
        ctx.say(
            format_table(("symbol", "leg", "position", "avg px", "unrealized", "realized"), table)
        )
    _show_kept(ctx, run)
    change = summary.equity - summary.start_equity
    ctx.say(
        f"Equity: {money(summary.start_equity)} -> {money(summary.equity)} "
        f"({'+' if change >= 0 else ''}{money(change)})"
    )
    ctx.say(
        f"Journal: {options.journal} — try 'botkit journal summary --journal "
        f"{options.journal}' or 'botkit journal show --journal {options.journal}'"
    )


def _show_kept(ctx: DemoContext, run: PaperRun) -> None:
    """The orders the keep: rules keep resting now (e.g. the kept grid), rung by rung."""
    from botkit.rules.ids import parse_client_order_id

    names = {
        (strategy.tag, rule.tag): f"{strategy.name}/{rule.name}"
        for strategy in run.runner.store.strategies.values()
        for rule in strategy.rules
        if rule.keep is not None
    }
    rows: list[tuple[str, int, str, Decimal, object, str]] = []
    for order in ctx.client.open_orders():
        parsed = parse_client_order_id(order.clOrdId)
        if parsed is None or not parsed.kept:
            continue
        who = names.get((parsed.strategy_tag, parsed.rule_tag), "?")
        px = order.px or Decimal(0)
        rows.append((who, parsed.leg, order.side.value, px, order.sz, order.clOrdId))
    if not rows:
        return
    rows.sort(key=lambda r: (r[0], -r[3]))
    ctx.say("Kept orders resting now (keep: rules; botkit keeps them as the files declare):")
    ctx.say(format_table(("rule", "rung", "side", "px", "sz", "clOrdId"), rows))


PAPER_STEPS: list[tuple[str, DemoStep]] = [
    ("trade the example strategies on paper", trade_on_paper),
    ("summary", show_summary),
]
"""The main job: ``botkit demo`` runs :data:`STEPS` and then these."""


def run_demo(
    *,
    sim: SimHandle | None = None,
    steps: Sequence[tuple[str, DemoStep]] | None = None,
    out: TextIO | None = None,
    signing: str = "v3",
    notes: dict[str, Any] | None = None,
) -> DemoContext:
    """Run the demo steps against ``sim`` (default: a fresh simulator on wall time)."""
    from botkit.app.paper import sim_client
    from botkit.clock import WallClock
    from botkit.sim.config import load_sim_config
    from botkit.sim.inprocess import make_sim

    out = out if out is not None else sys.stdout
    if sim is None:
        path = _DEFAULT_SIM_CONFIG if _DEFAULT_SIM_CONFIG.is_file() else None
        sim = make_sim(load_sim_config(path), WallClock())
    client = sim_client(sim, signing="pf" if signing == "pf" else "v3")
    ctx = DemoContext(sim, client, out, notes=dict(notes or {}))
    with client:
        ctx.say("botkit demo — the embedded paper exchange, in process (no network)")
        for title, step in steps if steps is not None else STEPS:
            ctx.say()
            ctx.say(f"== {title}")
            step(ctx)
    return ctx


def _run(args: argparse.Namespace) -> int:
    from botkit.clock import ManualClock, wall_ms
    from botkit.service.logs import configure_logging
    from botkit.sim.config import load_sim_config
    from botkit.sim.inprocess import make_sim

    if args.hours < 1 or args.hours > 24 * 7:
        raise UsageError(f"botkit demo: --hours must be between 1 and 168, got {args.hours}")
    if not args.strategies.exists():
        raise UsageError(f"botkit demo: {args.strategies} does not exist (--strategies PATH)")
    path = args.sim_config
    if path is None and _DEFAULT_SIM_CONFIG.is_file():
        path = _DEFAULT_SIM_CONFIG
    now = wall_ms()
    start = now - now % 60_000 - args.hours * 3_600_000  # ends about now: journal times read well
    sim = make_sim(load_sim_config(path), ManualClock(start))
    configure_logging(level="WARNING", fmt="text")
    options = PaperOptions(strategies=args.strategies, journal=args.journal, hours=args.hours)
    run_demo(sim=sim, signing=args.signing, steps=[*STEPS, *PAPER_STEPS], notes={"paper": options})
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
    parser.add_argument(
        "--strategies",
        type=Path,
        default=Path("strategies"),
        metavar="PATH",
        help="strategy folder or file to trade (default: strategies/)",
    )
    parser.add_argument(
        "--journal",
        type=Path,
        default=Path("var/demo-journal.sqlite"),
        metavar="FILE",
        help="where the demo's journal is written (emptied first; default var/demo-journal.sqlite)",
    )
    parser.add_argument("--hours", type=int, default=8, help="simulated hours to trade (default 8)")
    parser.set_defaults(handler=_run)
