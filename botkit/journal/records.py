"""The journal's values, re-exported from :mod:`botkit.ports.journal` where they live (beside the
journal's port, so the pipeline reaches them without importing the journal)."""

from botkit.ports.journal import (
    ActivityNote,
    ActivitySink,
    CycleSummary,
    Evaluated,
    EventRecord,
    NewOrder,
    OrderFilter,
    OrderOutcome,
    OrderRecord,
    OrderState,
    Outcome,
    PruneReport,
    StrategyRecord,
    TripRecord,
)

__all__ = [
    "ActivityNote",
    "ActivitySink",
    "CycleSummary",
    "Evaluated",
    "EventRecord",
    "NewOrder",
    "OrderFilter",
    "OrderOutcome",
    "OrderRecord",
    "OrderState",
    "Outcome",
    "PruneReport",
    "StrategyRecord",
    "TripRecord",
]
