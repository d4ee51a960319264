"""botkit.journal: the SQLite record of what the bot evaluated, decided, sent and heard back.

``Journal(path, clock=...)`` opens (and migrates) the database; the pipeline writes intents before
requests leave and outcomes after; ``botkit journal`` reads it. ``group_rows=N`` groups the
per-cycle bookkeeping rows into fewer commits (same rows; see :class:`Journal`). A process that
writes a journal holds it first (:func:`lock_journal`, passed as ``Journal(..., lock=...)``): one
process per journal. See docs/journal.md.
"""

from botkit.journal.db import Journal, Synchronous, TripLike
from botkit.journal.lock import JournalLock, lock_journal
from botkit.journal.records import (
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
from botkit.journal.schema import SCHEMA_VERSION
from botkit.journal.views import EvaluationRecord

__all__ = [
    "SCHEMA_VERSION",
    "CycleSummary",
    "Evaluated",
    "EvaluationRecord",
    "EventRecord",
    "Journal",
    "JournalLock",
    "NewOrder",
    "OrderFilter",
    "OrderOutcome",
    "OrderRecord",
    "OrderState",
    "Outcome",
    "PruneReport",
    "StrategyRecord",
    "Synchronous",
    "TripLike",
    "TripRecord",
    "lock_journal",
]
