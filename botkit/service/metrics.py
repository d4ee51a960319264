"""Optional Prometheus metrics (the standard ``prometheus_client``), off unless a port is given.

:class:`Metrics` is the service's :class:`~botkit.ports.observer.CycleObserver`: the runner tells
it each cycle's figures (:meth:`Metrics.cycle_done`); only :meth:`Metrics.serve` opens a port.
Each instance has its own registry, so tests and several runners in one process do not collide.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from botkit.ports.observer import CycleFigures

__all__ = ["Metrics"]


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.cycle_seconds = Histogram(
            "botkit_cycle_duration_seconds",
            "Wall time of one cycle of the loop (reads, evaluation, submission, journal).",
            registry=self.registry,
            buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
        )
        self.orders = Counter(
            "botkit_orders_total",
            "Orders by final outcome (accepted, rejected, rejected_local, failed, ...).",
            ["outcome"],
            registry=self.registry,
        )
        self.exchange_errors = Counter(
            "botkit_exchange_errors_total",
            "Exchange error codes seen, per order and per request.",
            ["code"],
            registry=self.registry,
        )
        self.retries = Counter(
            "botkit_retries_total",
            "Requests re-sent after a transient error, by reason.",
            ["reason"],
            registry=self.registry,
        )
        self.clock_offset_ms = Gauge(
            "botkit_clock_offset_milliseconds",
            "Offset of the exchange clock to the local clock.",
            registry=self.registry,
        )
        self.last_success = Gauge(
            "botkit_last_successful_cycle_timestamp_seconds",
            "Unix time of the last cycle that completed without a failing read.",
            registry=self.registry,
        )

        self.notify_sent = Counter(
            "botkit_notifications_sent_total",
            "Notification messages a target accepted, by target (notify[i] (scheme)).",
            ["target"],
            registry=self.registry,
        )
        self.notify_failed = Counter(
            "botkit_notifications_failed_total",
            "Notification messages a target failed to take, by target (notify[i] (scheme)).",
            ["target"],
            registry=self.registry,
        )
        self.notify_dropped = Counter(
            "botkit_notifications_dropped_total",
            "Notifications dropped because the queue was full (a slow or failing target).",
            registry=self.registry,
        )

    def cycle_done(self, figures: CycleFigures) -> None:
        """Count one cycle: its duration, the clock offset, its orders by outcome and the
        exchange's error codes, and its time when it completed."""
        self.cycle_seconds.observe(figures.seconds)
        if figures.clock_offset_ms is not None:
            self.clock_offset_ms.set(figures.clock_offset_ms)
        for outcome in figures.outcomes:
            self.orders.labels(outcome=outcome.outcome.value).inc()
            if outcome.code not in (None, 200):
                self.exchange_errors.labels(code=str(outcome.code)).inc()
        if figures.refused:
            self.orders.labels(outcome="rejected_local").inc(figures.refused)
        if figures.ok:
            self.last_success.set(figures.now_ms / 1000)

    def serve(self, port: int, addr: str = "127.0.0.1") -> None:
        """Expose ``/metrics`` on ``addr:port`` from a daemon thread."""
        start_http_server(port, addr=addr, registry=self.registry)
