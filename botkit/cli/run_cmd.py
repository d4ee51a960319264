"""``botkit run`` (the service loop), ``botkit plan`` (one dry-run cycle) and ``botkit status``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from botkit.cli.argtypes import port_number, seconds_arg
from botkit.errors import BotkitError, Location, SettingsError, UsageError

if TYPE_CHECKING:  # the implementation is imported by the handlers, when a command runs
    from botkit.rules import Evaluation
    from botkit.runner.cycle import CycleReport
    from botkit.settings import Settings

__all__ = ["add_settings_options", "format_cycle", "register", "secrets_of", "settings_of"]

HEALTHY_AFTER_S = 600


def settings_of(args: argparse.Namespace) -> Settings:
    """The settings, with the command's --config, --strategies and --journal applied."""
    from botkit.settings import load_settings

    overrides: dict[str, Any] = {}
    if getattr(args, "strategies", None):
        overrides["strategies_dir"] = args.strategies[0]
    if getattr(args, "journal", None):
        overrides["journal"] = args.journal
    return load_settings(config=getattr(args, "config", None), **overrides)


def secrets_of(settings: Settings) -> list[str]:
    """The credentials, for the log sink and the journal to redact."""
    from botkit.app.service import secrets_of as credentials

    return credentials(settings)


def _evaluation_lines(evaluation: Evaluation) -> list[str]:
    from botkit.rules import RuleStatus

    lines = [f"strategy {evaluation.strategy} (version {evaluation.version[:12]})"]
    for result in evaluation.results:
        mark = "FIRED" if result.status is RuleStatus.FIRED else result.status.value
        why = f" — {result.reason}" if result.reason and not result.fired else ""
        lines.append(f"  rule {result.rule}: {mark}{why}")
        if result.fired or result.status is RuleStatus.CONDITION_FALSE:
            seen = ", ".join(f"{k}={v}" for k, v in result.inputs.items())
            if seen:
                lines.append(f"      saw {seen}")
    return lines


def format_cycle(report: CycleReport) -> str:
    """What a cycle decided: rules, the plan (rounding, refusals, batches) and side effects."""
    lines = [
        f"== cycle {report.cycle_id} at {report.now_ms} ms"
        + (" (dry run)" if report.execution and report.execution.dry else "")
    ]
    if report.error:
        lines.append(f"error: {report.error}")
    if report.orphans is not None:
        lines.extend(report.orphans.lines())
    for name, error in report.strategy_errors.items():
        lines.append(f"strategy {name}: {error}")
    for evaluation in report.evaluations:
        lines.extend(_evaluation_lines(evaluation))
    if report.desired:
        lines.append("kept orders (keep: rules), declared against resting:")
        lines.extend(f"  {line}" for diff in report.desired for line in diff.lines())
    for effect in report.effects:
        lines.append(f"{effect.action} {effect.strategy}/{effect.rule}: {effect.detail}")
    if report.plan is not None:
        lines.append(report.plan.render())
    execution = report.execution
    if execution is not None and not execution.dry:
        by: dict[str, int] = {}
        for outcome in execution.outcomes:
            key = outcome.outcome.value + (
                f" {outcome.code}" if outcome.code not in (None, 200) else ""
            )
            by[key] = by.get(key, 0) + 1
        if by:
            lines.append("outcomes: " + ", ".join(f"{k}: {v}" for k, v in sorted(by.items())))
    return "\n".join(lines)


def _run(args: argparse.Namespace) -> int:
    from loguru import logger

    from botkit.app.control import run_requests
    from botkit.app.notifications import CycleNotes, journal_owner
    from botkit.app.service import assemble, install_signal_handlers, reload_guards, service_loop
    from botkit.clock import Stop
    from botkit.service.logs import configure_logging
    from botkit.service.metrics import Metrics
    from botkit.service.notifications import Notifications, apprise_targets
    from botkit.service.notify import Notifier

    if args.once and args.cycles is not None:
        raise UsageError("botkit run: --once and --cycles N exclude each other (pick one)")
    if args.cycles is not None and args.cycles < 1:
        raise UsageError(f"botkit run: --cycles must be 1 or more, got {args.cycles}")
    settings = settings_of(args)
    configure_logging(
        level="DEBUG" if args.debug else settings.log_level,
        fmt=args.log_format or settings.log_format,
        secrets=secrets_of(settings),
    )
    metrics = Metrics()
    port = args.metrics_port if args.metrics_port is not None else settings.metrics_port
    if port:
        try:
            metrics.serve(port)
        except OSError as exc:  # in use, or not ours to bind
            raise SettingsError(
                f"cannot serve metrics on 127.0.0.1:{port}: {exc.strerror or exc}",
                where=Location(field="--metrics-port"),
                hint="pick a free port above 1024, or leave metrics off",
            ) from None
        logger.info("metrics on http://127.0.0.1:{}/metrics", port)
    dry = True if args.dry_run else None
    # a URL Apprise refuses stops start-up with one line, before anything is sent
    worker = Notifications(
        apprise_targets(settings.notify), metrics=metrics, queue_size=settings.notify_queue
    )
    notifier = Notifier()
    stop = Stop()  # one stop for every wait: the loop's, and each backoff / retry / grace
    with assemble(settings, dry_run=dry, metrics=metrics, sleep=stop.sleep) as parts:
        mode = ("dry run, " if parts.dry else "") + (
            "live exchange" if settings.exchange == "live" else "embedded simulator (paper)"
        )
        logger.info(
            "botkit starting: {}; strategies from {}; journal {}",
            mode,
            settings.strategies_dir,
            settings.journal,
        )

        notes = CycleNotes(
            worker,
            owner=journal_owner(parts.journal),
            fills=parts.client.fills,
            guards=lambda: parts.runner.guards,
            now_ms=parts.runner.now_ms,
            instruments=lambda: parts.runner.reader.instruments(parts.runner.now_ms()),
        )

        def reload_settings() -> None:
            try:
                fresh = settings_of(args)
            except BotkitError as exc:  # a bad edit must not stop the service
                logger.error("settings not reloaded: {}", exc)
                notes.reload_failed(f"settings not reloaded: {exc}")
                return
            reload_guards(parts, fresh)
            logger.info(
                "settings reloaded (guards, kill switch and halt); other changes need a restart"
            )

        def show(report: CycleReport) -> None:
            if parts.dry:
                print(format_cycle(report), flush=True)
            notes.after_cycle(report)
            run_requests(parts, settings)  # cancel / flatten filed through botkit serve

        loop = service_loop(
            parts, notifier=notifier, stop=stop, on_reload=reload_settings, on_cycle=show
        )
        undo = install_signal_handlers(loop)
        code = 1
        try:
            notes.started(mode)
            cycles = 1 if args.once else args.cycles
            code = loop.run(cycles)
            if loop.failures:  # a bounded run: one line saying why it exits non-zero
                print(f"error: {_failed(args, loop.failures, loop.cycles_run)}", file=sys.stderr)
            return code
        finally:
            undo()
            notifier.close()
            notes.stopped(code)
            worker.close()


def _failed(args: argparse.Namespace, failures: list[str], cycles_run: int) -> str:
    """The one line a bounded run that failed ends with."""
    command = "botkit run --once" if args.once else f"botkit run --cycles {args.cycles}"
    last = failures[-1]
    if last.startswith("start-up failed"):
        return f"{command}: {last} (a bounded run does not retry; the service does)"
    if cycles_run <= 1:
        return f"{command}: {last}"
    return f"{command}: {len(failures)} of {cycles_run} cycles failed; the last: {last}"


def _plan(args: argparse.Namespace) -> int:
    from botkit.app.service import assemble
    from botkit.service.logs import configure_logging

    settings = settings_of(args)
    if not settings.strategies_dir.exists():  # a one-off plan has nothing to wait for
        raise UsageError(
            f"botkit plan: {settings.strategies_dir}: no such file or directory — name a strategy"
            " file or a folder of *.yaml files (--strategies, or strategies_dir in the settings)"
        )
    configure_logging(level="WARNING", fmt="text", secrets=secrets_of(settings))
    with assemble(settings, dry_run=True, command="botkit plan") as parts:
        runner = parts.runner
        parts.client.clock.maybe_resync()
        report = runner.run_cycle()
        if report.reload is not None:
            for error in report.reload.errors:
                print(f"error: {error}", file=sys.stderr)
        if report.cycle_id is None:
            if report.orphans is not None and not args.json:
                print("\n".join(report.orphans.lines()))
            print("no strategy loaded: nothing to plan", file=sys.stderr)
            return 1
        if args.json:
            print(json.dumps(_plan_json(report, parts.journal), indent=2))
        else:
            print(format_cycle(report))
        return 1 if report.error else 0


def _plan_json(report: CycleReport, journal: Any) -> dict[str, Any]:
    """``botkit plan --json``: the shapes of ``/api/strategies`` (each strategy's evaluation)
    and ``/api/decisions`` (each order with its rounding, refusals and outcome, as journaled)."""
    from botkit.app.api_read import evaluation_json, order_json
    from botkit.journal import OrderFilter

    orders = journal.orders(OrderFilter(cycle_id=report.cycle_id))
    return {
        "cycle_id": report.cycle_id,
        "now_ms": report.now_ms,
        "dry": True,
        "error": report.error or None,
        "strategy_errors": dict(report.strategy_errors),
        "evaluations": [evaluation_json(e, report.cycle_id) for e in report.evaluations],
        "orders": [order_json(o) for o in orders],
        "batches": None if report.plan is None else len(report.plan.batches),
    }


def _status(args: argparse.Namespace) -> int:
    from botkit.app.service import read_journal
    from botkit.app.status import health

    settings = settings_of(args)
    if args.json:  # the answer of /api/status
        from botkit.app.api_read import status_json

        body = status_json(settings, args.max_age)
        print(json.dumps(body, indent=2))
        return 0 if body["healthy"] else 1
    now = health(settings, args.max_age)
    ctl = now.controls
    if ctl.engaged:  # first, whatever the journal says: the operator must see it
        print("HALTED: nothing is sent" if ctl.halt else "KILL SWITCH ENGAGED: no new risk")
        for line in ctl.lines():
            print(line)
    if now.problem:
        print(f"unhealthy: {now.problem}")
        return 1
    print(
        f"{'healthy' if now.healthy else 'unhealthy'}: last cycle {now.last_cycle}"
        f" {now.age_s or 0:.0f}s ago"
        + (f" failed: {now.last_cycle_error}" if now.last_cycle_error else " ok")
    )
    print(
        f"last error: {now.last_error} (cycle {now.last_error_cycle})"
        if now.last_error
        else "last error: none in the last 50 cycles"
    )
    print(
        f"orders today (UTC, of the last 50 cycles): {now.orders_today}; unsettled: {now.unsettled}"
    )
    print(f"journal: {now.journal}")
    if not ctl.engaged:
        print("controls: halt off, kill switch off")
    with read_journal(settings) as journal:
        _print_not_owned(journal)
    return 0 if now.healthy else 1


def _print_not_owned(journal: Any) -> None:
    """The open orders no loaded strategy owns, as the service last saw them (informational:
    health does not depend on them)."""
    from datetime import UTC, datetime

    from botkit.runner.orphans import NOT_OWNED_EVENT

    event = journal.last_event(NOT_OWNED_EVENT)
    if event is None:
        return
    orders = event.detail.get("orders", [])
    seen = datetime.fromtimestamp(event.ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    print(f"open orders no loaded strategy owns (seen {seen}): {len(orders) or 'none'}")
    for item in orders:
        print(f"  {item.get('text', '?')}: {item.get('why', '?')}")


def add_settings_options(parser: argparse.ArgumentParser) -> None:
    """--config, --strategies and --journal (read by :func:`settings_of`)."""
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="settings file (default: BOTKIT_CONFIG or configs/botkit.toml)",
    )
    parser.add_argument(
        "--strategies",
        metavar="PATH",
        nargs=1,
        help="strategy folder or file (default: the strategies_dir setting)",
    )
    parser.add_argument("--journal", metavar="FILE", help="journal database (default: setting)")


def register(sub: Any) -> None:
    run = sub.add_parser(
        "run",
        help="run the service loop (live, paper on the embedded simulator, or dry run)",
        description="Run strategies every cycle until stopped (SIGTERM/SIGINT: finish the cycle "
        "in flight and exit 0; SIGHUP: reload strategies and settings).",
    )
    add_settings_options(run)
    run.add_argument("--once", action="store_true", help="run a single cycle and exit")
    run.add_argument("--cycles", type=int, metavar="N", help="run N cycles and exit")
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="read the account, send nothing, print and journal each cycle's plan",
    )
    run.add_argument(
        "--metrics-port",
        type=port_number,
        metavar="PORT",
        help="serve Prometheus metrics on 127.0.0.1:PORT (off by default)",
    )
    run.add_argument(
        "--log-format",
        choices=["auto", "text", "json"],
        help="log lines: text on a terminal, JSON otherwise (auto)",
    )
    run.add_argument("--debug", action="store_true", help="log at DEBUG level")
    run.set_defaults(handler=_run)

    plan = sub.add_parser(
        "plan",
        help="one dry-run cycle: what each rule would do, rounding, refusals, batches",
        description="Evaluate every strategy once against the real account and print the orders "
        "it would place, how they were rounded, which were refused and why, and the batches. "
        "Nothing is sent; the plan is journaled as a dry run.",
    )
    add_settings_options(plan)
    plan.add_argument(
        "--json", action="store_true", help="print JSON (the shapes of the status API)"
    )
    plan.set_defaults(handler=_plan)

    status = sub.add_parser(
        "status",
        help="is the service healthy and trading? (last cycle, last error, orders today,"
        " halt and kill switch)",
    )
    add_settings_options(status)
    status.add_argument(
        "--max-age",
        type=seconds_arg,
        default=HEALTHY_AFTER_S,
        metavar="SECONDS",
        help=f"a last cycle older than this is unhealthy (default {HEALTHY_AFTER_S})",
    )
    status.add_argument("--json", action="store_true", help="print JSON (what /api/status answers)")
    status.set_defaults(handler=_status)
