"""botkit.pipeline: from order intents to a plan of orders, values in and values out (pure core).

:func:`validate_intent` (rounding + checks returning reasons), :class:`RiskBook` (guards),
:func:`make_batches` / :func:`match_results`, :func:`build_plan` (intents and a snapshot → Plan),
the price band (:mod:`botkit.pipeline.band`). Carrying a plan out at the exchange (the executor,
submission, lookups, reconcile) and the halt and kill switch files are the engine's:
:mod:`botkit.runner.orders`, :mod:`botkit.runner.killswitch`.
"""

from botkit.pipeline.batching import MAX_BATCH, make_batches, match_results, order_key
from botkit.pipeline.plan import Plan, PlannedOrder, Refusal, build_plan
from botkit.pipeline.risk import (
    GuardSettings,
    GuardTrip,
    RiskBook,
    RiskLimits,
    StrategyPolicy,
    notional,
    reduces_only,
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
    "MAX_BATCH",
    "Checked",
    "GuardSettings",
    "GuardTrip",
    "OffTick",
    "Plan",
    "PlannedOrder",
    "Reason",
    "Refusal",
    "RiskBook",
    "RiskLimits",
    "RoundingNote",
    "StrategyPolicy",
    "build_plan",
    "floor_to_lot",
    "make_batches",
    "match_results",
    "notional",
    "order_key",
    "price_band",
    "reduces_only",
    "round_price_passive",
    "validate_intent",
]
