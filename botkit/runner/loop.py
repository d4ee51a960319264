"""The long-running loop: cycles, waiting for the next due strategy, signals and systemd.

The loop only exits when asked (SIGTERM / SIGINT, ``--once``, ``--cycles N``). SIGTERM lets the
cycle in flight finish and record its outcomes, then exits 0. SIGHUP reloads the strategies now
(and the caller's settings hook). It tells its supervisor
(:class:`~botkit.ports.observer.Supervisor`: under systemd the service's notifier, which sends
READY=1, WATCHDOG=1, STATUS=, STOPPING=1) that it is ready after the first successful sync, feeds
the watchdog every cycle and while it waits, gives a status line after each cycle and says it is
stopping on the way out.
Waiting is a dependency (:class:`~botkit.clock.Waiter`): wall time for the service, a manual clock
for the demo.

Waits are bounded: the runner never schedules a strategy more than one period ahead of now (a
clock that jumped back is caught there), and :class:`~botkit.clock.RealTimeWaiter` never waits
longer than the distance to the target it was given, measured on the monotonic clock, so a clock
that steps back while it waits cannot stretch the wait. A stop request (:class:`~botkit.clock.Stop`)
ends every wait: the loop's own, and each backoff, retry and reconcile grace inside a cycle
(:class:`~botkit.errors.StopRequested`).
"""

from __future__ import annotations

import gc
import signal
import threading
import time
from collections.abc import Callable

from loguru import logger

from botkit.clock import MAX_NAP_S, Waiter
from botkit.errors import AuthFailed, ExchangeError, JournalError, StopRequested
from botkit.ports.journal import Outcome
from botkit.ports.observer import Supervisor, Unsupervised
from botkit.runner.cycle import CycleReport, Runner
from botkit.signals import relay_signals

__all__ = [
    "LIVE_GC_THRESHOLDS",
    "Loop",
    "cycle_failure",
    "freeze_start_up",
    "install_signal_handlers",
    "status_line",
]


def status_line(report: CycleReport) -> str:
    """One line for systemd's STATUS= and the terminal: what became of the cycle's orders, each
    outcome counted (accepted, rejected by the exchange, unknown, failed, refused locally)."""
    if report.cycle_id is None:
        return "idle: no strategy due"
    if report.error:
        return f"cycle {report.cycle_id}: {report.error}"
    execution = report.execution
    head = f"cycle {report.cycle_id}: {len(report.due)} strategies, "
    if execution is None:
        orders = "no orders"
    elif execution.dry:
        planned = report.plan.accepted if report.plan is not None else ()
        orders = f"{len(planned)} orders planned (dry run), {execution.refused} refused locally"
    else:
        orders = (
            f"orders: {execution.count(Outcome.ACCEPTED)} accepted, "
            f"{execution.count(Outcome.REJECTED)} rejected, {len(execution.unsettled)} unknown, "
            f"{execution.count(Outcome.FAILED)} failed, {execution.refused} refused locally"
        )
    return (
        head
        + orders
        + f"; {len(report.effects)} cancels/changes"
        + (f", {len(report.strategy_errors)} strategy errors" if report.strategy_errors else "")
    )


def cycle_failure(report: CycleReport) -> str:
    """Why a cycle failed ("" when it did not): its reads failed, a strategy file did not load
    or a strategy's evaluation failed, or orders failed or were left with an unknown outcome.
    Orders the exchange rejected or that were refused locally are decisions, not failures."""
    if report.error:
        return report.error
    parts = []
    if report.reload is not None and report.reload.errors:
        files = sorted({p.where.file or "?" for e in report.reload.errors for p in e.problems})
        parts.append(f"{len(files)} strategy file(s) did not load ({', '.join(files)})")
    if report.strategy_errors:
        parts.append(f"strategy {', '.join(sorted(report.strategy_errors))} failed to evaluate")
    execution = report.execution
    if execution is None:
        return ", ".join(parts)
    if failed := execution.count(Outcome.FAILED):
        parts.append(f"{failed} order(s) failed")
    if execution.unsettled:
        parts.append(f"{len(execution.unsettled)} order(s) with an unknown outcome")
    return ", ".join(parts)


def freeze_start_up() -> tuple[int, int, int]:
    """Collect what start-up left behind, then freeze the rest (``gc.freeze``): the modules,
    settings, client, simulator and journal that live as long as the process. The cyclic
    collector's full collections no longer scan them at every cycle (10-22 µs an order in
    ``python -m bench runner``'s cycle of 100 orders, 3-4 µs once frozen). Reference counting
    still frees them; only a reference cycle among them that became garbage later would wait
    for the process's end. Called once, after the service's first cycle that ran.

    Then the young generation is collected at :data:`LIVE_GC_THRESHOLDS` instead of every 700
    net allocations: a cycle of 100 orders allocates thousands of short-lived containers that
    reference counting frees, and the collector's passes over the survivors (the cycle's rows,
    reports and the activity the rules keep) cost ~2 µs an order in ``bench runner`` (~0.5
    after; cyclic garbage is still collected, a little later). Returns the thresholds before,
    for the caller to restore (:meth:`Loop.run` does when it ends)."""
    gc.collect()
    gc.freeze()
    before = gc.get_threshold()
    gc.set_threshold(*LIVE_GC_THRESHOLDS)
    return before


LIVE_GC_THRESHOLDS = (10_000, 10, 10)
"""The cyclic collector's thresholds while the service runs (:func:`freeze_start_up`): the
young generation collected every 10,000 net allocations of containers (Python's default:
700), the older ones as by default (every 10 collections of the one below)."""


class Loop:
    """Drives a :class:`Runner` until stopped.

    A bounded run (``cycles`` given: ``--once``, ``--cycles N``) does not retry a start-up it
    cannot complete, counts a cycle that failed (:func:`cycle_failure`, or an unexpected
    error) and returns 1 when any did, :attr:`failures` saying why; the service (unbounded)
    retries start-up and goes on after a failed cycle."""

    def __init__(
        self,
        runner: Runner,
        waiter: Waiter,
        *,
        notifier: Supervisor | None = None,
        sync: Callable[[], object] = lambda: None,
        on_reload: Callable[[], None] = lambda: None,
        on_cycle: Callable[[CycleReport], None] = lambda _r: None,
        retry_sync_s: float = 5.0,
        sleep: Callable[[float], None] = time.sleep,
        stop: threading.Event | None = None,
    ) -> None:
        self.runner = runner
        self.waiter = waiter
        self.notifier: Supervisor = notifier if notifier is not None else Unsupervised()
        self.sync = sync
        self.on_reload = on_reload
        self.on_cycle = on_cycle
        self.retry_sync_s = retry_sync_s
        self._sleep = sleep
        self.stop = stop if stop is not None else threading.Event()
        """Set to stop: after the request in flight, cutting short any wait (the service's
        :class:`~botkit.clock.Stop` event, shared with the pipeline's sleeps)."""
        self.wake = threading.Event()
        """Set to end a wait early (stop or reload)."""
        self.reload_requested = threading.Event()
        self.stop_signal = ""
        """The name of the signal that asked to stop, for the log."""
        self.cycles_run = 0
        self.last_report: CycleReport | None = None
        self.failures: list[str] = []
        """Why each failed cycle (or the start-up) of a bounded run failed."""
        self._gc_before: tuple[int, int, int] | None = None
        """The collector's thresholds before :func:`freeze_start_up` (restored at the end)."""

    def request_stop(self) -> None:
        self.stop.set()
        self.wake.set()

    def request_reload(self) -> None:
        self.reload_requested.set()
        self.wake.set()

    def _start(self, bounded: bool) -> bool:
        """Sync the clock and settle what an earlier run left unsettled; True when ready.
        The service retries until it gets there; a bounded run gives up at the first failure."""
        while not self.stop.is_set():
            try:
                self.sync()
                self.runner.execution.reconcile()
                self.runner.reader.instruments(self.runner.now_ms())
            except AuthFailed:
                raise  # wrong credentials: retrying cannot help; stop with the one-line error
            except StopRequested:
                logger.info("stop requested during start-up: exiting before the first cycle")
                return False
            except ExchangeError as exc:
                if bounded:
                    logger.error("start-up sync failed: {}", exc)
                    self.failures.append(f"start-up failed: {exc}")
                    return False
                logger.error("start-up sync failed, retrying in {}s: {}", self.retry_sync_s, exc)
                self.notifier.status(f"waiting for the exchange: {exc}")
                self.notifier.watchdog()
                self.stop.wait(self.retry_sync_s)  # not `wake`: a SIGHUP must not make this spin
                continue
            self.notifier.ready("synced with the exchange")
            return True
        return False

    def _loaded(self) -> bool:
        return self.runner.next_due_ms() is not None

    def _ran(self) -> None:
        """Count a cycle that ran; after the first, freeze what start-up made."""
        self.cycles_run += 1
        if self.cycles_run == 1:
            self._gc_before = freeze_start_up()

    def _restore_gc(self) -> None:
        """The collector's thresholds as they were before the loop ran (a service's loop ends
        with its process; a bounded run, a test's, leaves the process as it found it)."""
        if self._gc_before is not None:
            gc.set_threshold(*self._gc_before)
            self._gc_before = None

    def run(self, cycles: int | None = None) -> int:
        """Run ``cycles`` cycles (forever when None) or until stopped. Returns the exit code:
        0, or 1 when a bounded run finds no strategy to run or a cycle (or the start-up) of it
        failed (:attr:`failures` says why)."""
        bounded = cycles is not None
        try:
            if not self._start(bounded):
                return 1 if self.failures else 0
            while not self.stop.is_set():
                self.wake.clear()  # a signal from here on ends the coming wait early
                if self.reload_requested.is_set():
                    self.reload_requested.clear()
                    logger.info("reload requested: reloading strategies and settings")
                    self.notifier.reloading()
                    self.on_reload()
                    self.runner.force_due()
                try:
                    self.sync()
                except ExchangeError as exc:
                    logger.warning("clock re-sync failed (keeping the old offset): {}", exc)
                try:
                    report = self.runner.run_cycle()
                except JournalError:
                    raise  # trading on without a journal could send an order twice
                except StopRequested:
                    logger.warning(
                        "stop requested during a wait of the cycle: cut short; orders still"
                        " open are looked up at the next start"
                    )
                    break
                except Exception as exc:  # a bug must not end the service: log it, wait, go on
                    logger.exception("cycle failed unexpectedly; the next one will be tried")
                    if cycles is not None:  # a bounded run counts it (and does not try forever)
                        self.cycles_run += 1
                        self.failures.append(f"unexpected {type(exc).__name__}: {exc}")
                        if self.cycles_run >= cycles or self.stop.is_set():
                            break
                    self.waiter.wait_until(self.runner.now_ms() + int(MAX_NAP_S * 1000), self.wake)
                    continue
                self.last_report = report
                if cycles is not None and report.cycle_id is None and not self._loaded():
                    logger.error(
                        "no strategy loaded: nothing to run (see 'botkit check' and the"
                        " strategies folder)"
                    )
                    return 1  # a bounded run would otherwise wait for a cycle forever
                if report.cycle_id is not None:
                    self._ran()
                    if bounded and (why := cycle_failure(report)):
                        self.failures.append(f"cycle {report.cycle_id}: {why}")
                    line = status_line(report)
                    self.notifier.status(line)
                    logger.info(line)
                    self.on_cycle(report)
                self.notifier.watchdog()
                if cycles is not None and self.cycles_run >= cycles:
                    break
                if self.stop.is_set():
                    break
                target = self.runner.next_due_ms()
                if target is None:  # nothing loaded: look for files again in a while
                    target = self.runner.now_ms() + int(MAX_NAP_S * 1000)
                self.waiter.wait_until(target, self.wake)
            return 1 if self.failures else 0
        finally:
            self._restore_gc()
            if self.stop_signal:
                logger.info("{} received: the cycle in flight finished; exiting", self.stop_signal)
            self.notifier.stopping()


def install_signal_handlers(loop: Loop) -> Callable[[], None]:
    """SIGTERM / SIGINT stop after the cycle in flight; SIGHUP reloads. Returns an undo.

    The signals are acted on by a relay thread (:func:`botkit.signals.relay_signals`), not in
    a handler: setting the loop's events takes their locks, which the main thread holds while
    it enters and leaves its waits on them (a handler there would hang the service). Nothing
    logs from a handler either; the loop logs what it was asked."""

    def stop(sig: signal.Signals) -> None:
        loop.stop_signal = sig.name
        loop.request_stop()

    def reload(_sig: signal.Signals) -> None:
        loop.request_reload()

    return relay_signals({signal.SIGTERM: stop, signal.SIGINT: stop, signal.SIGHUP: reload})
