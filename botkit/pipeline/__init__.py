"""botkit.pipeline: from order intents to orders at the exchange, every outcome journaled.

Pure core: :func:`validate_intent` (rounding + checks returning reasons), :class:`RiskBook`
(guards), :func:`make_batches` / :func:`match_results`, :func:`build_plan` (intents and a
snapshot → Plan).
Edges: :func:`controls` (the halt and kill switch files), the submitter (tenacity retries), the
executor (live: journal + submit), :func:`record_dry_run` (a dry run: journal only), both through
the journal's port (:mod:`botkit.ports.journal`), and :func:`reconcile` (settle unknown outcomes by
looking orders up).
"""

from botkit.pipeline.batching import MAX_BATCH, make_batches, match_results, order_key
from botkit.pipeline.execute import ExecutionReport, Executor, record_dry_run
from botkit.pipeline.killswitch import Controls, controls, halt_reason, kill_switch_reason
from botkit.pipeline.lookup import find_order
from botkit.pipeline.plan import Plan, PlannedOrder, Refusal, build_plan
from botkit.pipeline.reconcile import ReconcileReport, reconcile
from botkit.pipeline.risk import (
    GuardSettings,
    GuardTrip,
    RiskBook,
    RiskLimits,
    StrategyPolicy,
    notional,
    reduces_only,
)
from botkit.pipeline.submit import (
    DUPLICATE_CODE,
    BatchReport,
    Observer,
    RateLimiter,
    RetryPolicy,
    Submitter,
)
from botkit.pipeline.validate import (
    Checked,
    OffTick,
    Reason,
    RoundingNote,
    floor_to_lot,
    price_band,
    round_price_passive,
    validate_intent,
)

__all__ = [
    "DUPLICATE_CODE",
    "MAX_BATCH",
    "BatchReport",
    "Checked",
    "Controls",
    "ExecutionReport",
    "Executor",
    "GuardSettings",
    "GuardTrip",
    "Observer",
    "OffTick",
    "Plan",
    "PlannedOrder",
    "RateLimiter",
    "Reason",
    "ReconcileReport",
    "Refusal",
    "RetryPolicy",
    "RiskBook",
    "RiskLimits",
    "RoundingNote",
    "StrategyPolicy",
    "Submitter",
    "build_plan",
    "controls",
    "find_order",
    "floor_to_lot",
    "halt_reason",
    "kill_switch_reason",
    "make_batches",
    "match_results",
    "notional",
    "order_key",
    "price_band",
    "reconcile",
    "record_dry_run",
    "reduces_only",
    "round_price_passive",
    "validate_intent",
]
