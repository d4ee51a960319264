"""botkit.runner.orders: carrying a plan out at the exchange, every outcome journaled.

The engine's I/O half of the pipeline (time, retries, logs): the executor
(:class:`Executor`: journal, then send; :func:`record_dry_run`: journal only), the submission of
one batch with its safe retries (:class:`Submitter`), looking an order up by client order id
(:func:`find_order`) and reconcile (:func:`reconcile`: settle unknown outcomes by looking orders
up). They reach the exchange and the journal through their ports (:mod:`botkit.exchange.port`,
:mod:`botkit.ports.journal`); the plan they carry out is the pure core's
(:func:`botkit.pipeline.build_plan`).
"""

from botkit.runner.orders.execute import ExecutionReport, Executor, record_dry_run
from botkit.runner.orders.lookup import find_order
from botkit.runner.orders.reconcile import ReconcileReport, reconcile
from botkit.runner.orders.submit import (
    DUPLICATE_CODE,
    BatchReport,
    Observer,
    RateLimiter,
    RetryPolicy,
    Submitter,
)

__all__ = [
    "DUPLICATE_CODE",
    "BatchReport",
    "ExecutionReport",
    "Executor",
    "Observer",
    "RateLimiter",
    "ReconcileReport",
    "RetryPolicy",
    "Submitter",
    "find_order",
    "reconcile",
    "record_dry_run",
]
