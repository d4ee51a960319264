"""``botkit journal``: read the journal — why was an order sent, and what happened to it?

``tail`` prints the running log (``--follow`` keeps polling), ``show`` the orders matching filters
with the rule, its inputs, the rounding, the request and the outcome, ``export`` writes them as
CSV or JSON lines, ``summary`` counts per cycle, ``prune`` drops settled records older than a
time. The journal path comes from ``--journal`` or the ``journal`` setting.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from botkit.cli.argtypes import TimeArg, time_arg
from botkit.clock import wall_ms
from botkit.errors import UsageError

if TYPE_CHECKING:  # the journal (and the models it carries) is imported when a command runs
    from botkit.journal import EventRecord, Journal, OrderFilter, OrderRecord

__all__ = ["format_ms", "register"]

_TIMES = "Unix ms, ISO-8601 with a zone, a date, an age (2h, 7d) or now (docs/times.md)"
# botkit.journal.Outcome's values, spelled out so that building the parser does not import the
# journal (tests/test_cli_startup.py checks they agree)
_OUTCOMES = ["rejected_local", "accepted", "rejected", "failed", "dry_run", "unsettled"]


def format_ms(ms: int | None) -> str:
    if ms is None:
        return "-"
    moment = datetime.fromtimestamp(ms / 1000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _open(args: argparse.Namespace) -> Journal:
    from botkit.journal import Journal

    path: Path | None = args.journal
    if path is None:
        from botkit.settings import load_settings

        path = load_settings().journal
    if str(path) != ":memory:" and not Path(path).is_file():
        raise UsageError(f"no journal at {path} — run the bot first, or pass --journal PATH")
    return Journal(path, clock=wall_ms)


def _filter(args: argparse.Namespace) -> OrderFilter:
    from botkit.journal import OrderFilter

    now = wall_ms()
    return OrderFilter(
        strategy=args.strategy,
        rule=args.rule,
        symbol=args.symbol,
        outcome=args.outcome,
        since_ms=TimeArg.resolve(args.since, now),
        until_ms=TimeArg.resolve(args.until, now),
        cycle_id=args.cycle,
        cl_ord_id=args.id,
        include_dry=not args.live_only,
        limit=args.limit,
    )


# --- output ------------------------------------------------------------------------------


def _event_line(e: EventRecord) -> str:
    who = "/".join(p for p in (e.strategy, e.rule) if p)
    parts = [format_ms(e.ts_ms), f"[{e.kind}]"]
    if who:
        parts.append(who)
    if e.cl_ord_id:
        parts.append(e.cl_ord_id)
    return " ".join(parts) + f"  {e.text}"


def _order_lines(o: OrderRecord) -> list[str]:
    price = f" @ {o.px}" if o.px is not None else ""
    flags = (" reduce-only" if o.reduce_only else "") + (" [dry run]" if o.dry else "")
    lines = [
        f"{o.cl_ord_id}  {format_ms(o.ts_ms)}  cycle {o.cycle_id if o.cycle_id else '-'}",
        f"  order:   {o.side} {o.sz if o.sz is not None else o.intent_sz} {o.symbol} {o.type}"
        f"{price} posSide {o.pos_side} mgnMode {o.mgn_mode}{flags}",
        f"  why:     rule {o.rule} of strategy {o.strategy} ({_slot_text(o)})",
    ]
    if o.inputs:
        lines.append("  inputs:  " + ", ".join(f"{k}={v}" for k, v in sorted(o.inputs.items())))
    asked = f"{o.intent_sz}" + (f" @ {o.intent_px}" if o.intent_px is not None else "")
    lines.append(f"  asked:   {asked}")
    lines.extend(f"  rounded: {note}" for note in o.notes)
    if o.request is not None:
        lines.append("  request: " + json.dumps(o.request, separators=(",", ":"), sort_keys=True))
    lines.append("  outcome: " + _outcome_text(o))
    lines.extend(f"  reason:  {reason}" for reason in o.reasons)
    return lines


def _slot_text(o: OrderRecord) -> str:
    """Where the order comes from: a decision's slot and leg, or a kept order's rung and
    generation (a keep: rule's declared order; its history says why it was placed)."""
    from botkit.rules.ids import parse_client_order_id

    parsed = parse_client_order_id(o.cl_ord_id)
    if parsed is not None and parsed.kept:
        return f"kept order: rung {o.leg}, generation {o.slot}"
    return f"slot {o.slot}, leg {o.leg}"


def _outcome_text(o: OrderRecord) -> str:
    from botkit.journal import Outcome

    if o.outcome is None:
        return f"unsettled ({o.state.value}, {o.attempts} send(s))" + (
            f": {o.error}" if o.error else ""
        )
    text = o.outcome.value
    if o.ord_id:
        text += f" ordId {o.ord_id}"
    if o.code is not None and o.outcome is Outcome.REJECTED:
        text += f" code {o.code}: {o.msg}"
    if o.resolved:
        text += " (settled by looking it up)"
    if o.error:
        text += f" — {o.error}"
    text += f" at {format_ms(o.outcome_ms)}"
    if o.attempts:
        text += f" after {o.attempts} send(s)"
    return text


def _show(args: argparse.Namespace) -> int:
    with _open(args) as journal:
        orders = journal.orders(_filter(args))
        if args.json:
            for o in orders:
                print(json.dumps(o.as_dict(), sort_keys=True))
            return 0
        if not orders:
            print("no orders match")
            return 0
        for o in orders:
            print("\n".join(_order_lines(o)))
            if args.id is not None:
                print("  history:")
                for e in journal.events_for(o.cl_ord_id):
                    print("    " + _event_line(e))
        print(f"{len(orders)} order(s)")
    return 0


def _tail(args: argparse.Namespace) -> int:
    interval = min(max(args.interval, 0.2), 10.0)
    with _open(args) as journal:
        last = max(journal.last_event_id() - args.lines, 0)
        while True:
            for event in journal.events_after(last):
                print(_event_line(event), flush=True)
                last = event.id
            if not args.follow:
                return 0
            time.sleep(interval)  # bounded poll; Ctrl-C ends it


def _write_csv(orders: Iterable[OrderRecord], out: TextIO) -> None:
    writer: Any = None
    for o in orders:
        row = o.as_dict()
        for key in ("notes", "inputs", "request", "reasons"):
            row[key] = json.dumps(row[key], sort_keys=True, separators=(",", ":"))
        if writer is None:
            writer = csv.DictWriter(out, fieldnames=list(row), lineterminator="\n")
            writer.writeheader()
        writer.writerow(row)


def _export(args: argparse.Namespace) -> int:
    with _open(args) as journal:
        orders = journal.orders(_filter(args))
    out: TextIO = sys.stdout if args.out in (None, "-") else open(args.out, "w", encoding="utf-8")  # noqa: SIM115
    try:
        if args.format == "csv":
            _write_csv(orders, out)
        else:
            for o in orders:
                out.write(json.dumps(o.as_dict(), sort_keys=True) + "\n")
    finally:
        if out is not sys.stdout:
            out.close()
    if args.out not in (None, "-"):
        print(f"{len(orders)} order(s) written to {args.out}", file=sys.stderr)
    return 0


def _summary(args: argparse.Namespace) -> int:
    now = wall_ms()
    since, until = TimeArg.resolve(args.since, now), TimeArg.resolve(args.until, now)
    with _open(args) as journal:
        cycles = journal.cycles(since_ms=since, until_ms=until, limit=args.limit)
    if args.json:
        for c in cycles:
            print(json.dumps(c.as_dict(), sort_keys=True))
        return 0
    cols = ["accepted", "rejected_local", "rejected", "failed", "unsettled", "dry_run"]
    header = ["cycle", "started", "dry", "offset", "evals", "fired", "orders", *cols, "trips"]
    rows = [
        [
            str(c.id),
            format_ms(c.started_ms),
            "yes" if c.dry else "no",
            "-" if c.clock_offset_ms is None else str(c.clock_offset_ms),
            str(c.evaluations),
            str(c.fired),
            str(c.orders),
            *(str(c.by_outcome.get(k, 0)) for k in cols),
            str(c.trips),
        ]
        for c in cycles
    ]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    print("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)))
    for row, c in zip(rows, cycles, strict=True):
        line = "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True))
        print(line + (f"  error: {c.error}" if c.error else ""))
    print(f"{len(cycles)} cycle(s)")
    return 0


def _prune(args: argparse.Namespace) -> int:
    before = args.before.at(wall_ms())
    with _open(args) as journal:
        report = journal.prune(before)
    print(
        f"pruned records before {format_ms(before)}: {report.orders} orders, {report.events}"
        f" events, {report.evaluations} evaluations, {report.trips} guard trips,"
        f" {report.cycles} cycles; kept {report.kept_unsettled} unsettled order(s)"
    )
    return 0


# --- parser ------------------------------------------------------------------------------


def register(sub: Any) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--journal", type=Path, default=None, metavar="PATH",
        help="journal database (default: the 'journal' setting)",
    )  # fmt: skip
    filters = argparse.ArgumentParser(add_help=False)
    filters.add_argument("--strategy", help="only this strategy")
    filters.add_argument("--rule", help="only this rule")
    filters.add_argument("--symbol", help="only this symbol")
    filters.add_argument("--outcome", choices=_OUTCOMES, help="only this outcome")
    filters.add_argument("--since", type=time_arg, metavar="TIME", help=f"from TIME: {_TIMES}")
    filters.add_argument("--until", type=time_arg, metavar="TIME", help="before TIME")
    filters.add_argument("--cycle", type=int, help="only this cycle")
    filters.add_argument("--id", metavar="CLORDID", help="only this client order id (with history)")
    filters.add_argument("--live-only", action="store_true", help="leave out dry-run orders")
    filters.add_argument("--limit", type=int, help="only the newest N")

    parser: argparse.ArgumentParser = sub.add_parser(
        "journal", help="read the journal: tail, show, export, summary, prune",
        description="Read the journal: why was an order sent, and what happened to it? tail"
        " prints the running log, show the orders with their rule, inputs, rounding, request and"
        " outcome, export writes them as CSV or JSON lines, summary counts per cycle, prune drops"
        " settled records older than a time. The journal path is --journal or the 'journal'"
        " setting (BOTKIT_JOURNAL).",
    )  # fmt: skip
    cmds = parser.add_subparsers(title="journal commands", metavar="COMMAND")

    def _help(_args: argparse.Namespace) -> int:
        parser.print_help()
        return 2

    parser.set_defaults(handler=_help)

    tail = cmds.add_parser("tail", parents=[common], help="print the newest records")
    tail.add_argument("-n", "--lines", type=int, default=20, help="records to start with")
    tail.add_argument("-f", "--follow", action="store_true", help="keep printing new records")
    tail.add_argument("--interval", type=float, default=1.0, help="seconds between polls")
    tail.set_defaults(handler=_tail)

    show = cmds.add_parser(
        "show", parents=[common, filters], help="orders with their reasons and outcomes"
    )
    show.add_argument("--json", action="store_true", help="JSON lines instead of text")
    show.set_defaults(handler=_show)

    export = cmds.add_parser("export", parents=[common, filters], help="orders as CSV or JSONL")
    export.add_argument("--format", choices=["csv", "jsonl"], default="jsonl")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(handler=_export)

    summary = cmds.add_parser("summary", parents=[common], help="counts per cycle")
    summary.add_argument("--since", type=time_arg, metavar="TIME", help=f"from TIME: {_TIMES}")
    summary.add_argument("--until", type=time_arg, metavar="TIME", help="before TIME")
    summary.add_argument("--limit", type=int, help="only the newest N cycles")
    summary.add_argument("--json", action="store_true")
    summary.set_defaults(handler=_summary)

    prune = cmds.add_parser(
        "prune", parents=[common], help="drop settled records older than a time"
    )
    prune.add_argument(
        "--before", type=time_arg, required=True, metavar="TIME", help=f"e.g. 30d: {_TIMES}"
    )
    prune.set_defaults(handler=_prune)
