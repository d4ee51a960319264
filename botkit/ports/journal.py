"""The journal's port: what the engine needs of a journal, and the values that cross it.

One small protocol per role, so each part of the engine names only the calls it makes:

* :class:`JournalPort`: the executor and reconcile (:mod:`botkit.runner.orders`) and the two
  execution adapters — write intents before requests leave, note sends and unknown fates,
  settle outcomes, log events, read what is unsettled;
* :class:`EventLog`: a free note in the running log (every role below writes some);
* :class:`ActivityReads`: what each rule did recently (:mod:`botkit.runner.activity`);
* :class:`StrategyBook`: the strategies this journal knows (:mod:`botkit.runner.ownership`);
* :class:`SharedIdReads`: the ``ordId`` this journal holds per client order id
  (:mod:`botkit.runner.shared`);
* :class:`ManualJournal`: an operator's cancel and flatten (:mod:`botkit.runner.manual`);
* :class:`RunnerJournal`: the cycle's own records (cycles, rule evaluations) and everything
  the :class:`~botkit.runner.cycle.Runner` hands the parts it builds.

:class:`botkit.journal.Journal` (SQLite) implements them all, structurally (no base class, no
wrapper: the composition root hands the journal in). The values are plain frozen dataclasses
with no database code, so the engine, the journal and the CLI share them
(:mod:`botkit.journal.records` re-exports them).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import Any, NamedTuple, Protocol

from botkit.frozen import quick_init
from botkit.intents import Activity, OrderIntent

__all__ = [
    "ActivityNote",
    "ActivityReads",
    "ActivitySink",
    "CycleSummary",
    "Evaluated",
    "EventLog",
    "EventRecord",
    "JournalPort",
    "ManualJournal",
    "NewOrder",
    "OrderFilter",
    "OrderOutcome",
    "OrderRecord",
    "OrderState",
    "Outcome",
    "PruneReport",
    "RunnerJournal",
    "SharedIdReads",
    "StrategyBook",
    "StrategyRecord",
    "TripLike",
    "TripRecord",
]


class Outcome(StrEnum):
    """The one final outcome of an order. An order without one is *unsettled*."""

    REJECTED_LOCAL = "rejected_local"
    """Refused before it left: validation or a guard; ``reasons`` says why."""
    ACCEPTED = "accepted"
    """The exchange has it: ``ord_id`` (``resolved`` when learnt by looking it up)."""
    REJECTED = "rejected"
    """The exchange refused it: ``code`` and ``msg``."""
    FAILED = "failed"
    """Never placed: retries exhausted, or not found at the exchange on reconcile; ``error``."""
    DRY_RUN = "dry_run"
    """Planned in a dry run: never sent."""


class OrderState(StrEnum):
    """Where an order is on its way: intent written, request sent, fate unknown, or settled."""

    INTENT = "intent"
    SENT = "sent"
    UNKNOWN = "unknown"
    FINAL = "final"


@quick_init
@dataclass(frozen=True, slots=True)
class Evaluated:
    """One rule's evaluation in a cycle: did it fire, why not, and the inputs it saw."""

    rule: str
    fired: bool
    reason: str = ""
    inputs: dict[str, str] = field(default_factory=dict)


@quick_init
@dataclass(frozen=True, slots=True)
class NewOrder:
    """An order the journal learns about: an intent about to be sent, or refused locally."""

    intent: OrderIntent
    px: Decimal | None
    sz: Decimal | None
    notes: tuple[str, ...] = ()
    """How the pipeline rounded it (``px 100.05 -> 100.0 (step 0.1)``)."""
    wire: Mapping[str, Any] | None = None
    """The order as it goes into the request body (no headers, no secrets): read, never
    changed; ``None`` with ``request`` given (the executor's orders) or without a request."""
    reasons: tuple[str, ...] = ()
    outcome: Outcome | None = None
    """Set for orders settled at once (refused locally, dry run)."""
    request: str | None = None
    """``wire`` as the journal stores it (JSON, compact, keys sorted), when the caller has it
    written already (the executor: :meth:`OrderRequest.journal_text`, made with the request's
    body text): the journal stores it as it is, and ``wire`` is not read (it may be ``None``)."""


@quick_init
@dataclass(frozen=True, slots=True)
class OrderOutcome:
    """The final outcome of one order."""

    cl_ord_id: str
    outcome: Outcome
    ord_id: str = ""
    code: int | None = None
    msg: str = ""
    error: str = ""
    resolved: bool = False
    """True when the outcome was learnt by looking the order up after an ambiguous send."""
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class OrderRecord:
    """One order as the journal holds it: why it was sent and what happened to it."""

    id: int
    cycle_id: int | None
    ts_ms: int
    dry: bool
    strategy: str
    rule: str
    slot: int
    leg: int
    cl_ord_id: str
    symbol: str
    side: str
    type: str
    pos_side: str
    mgn_mode: str
    reduce_only: bool
    intent_px: str | None
    intent_sz: str
    px: str | None
    sz: str | None
    notes: tuple[str, ...]
    inputs: dict[str, str]
    request: dict[str, Any] | None
    state: OrderState
    outcome: Outcome | None
    ord_id: str
    code: int | None
    msg: str
    reasons: tuple[str, ...]
    error: str
    resolved: bool
    attempts: int
    sent_ms: int | None
    outcome_ms: int | None

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (amounts stay decimal strings)."""
        return {
            "id": self.id,
            "cycle_id": self.cycle_id,
            "ts_ms": self.ts_ms,
            "dry": self.dry,
            "strategy": self.strategy,
            "rule": self.rule,
            "slot": self.slot,
            "leg": self.leg,
            "cl_ord_id": self.cl_ord_id,
            "symbol": self.symbol,
            "side": self.side,
            "type": self.type,
            "pos_side": self.pos_side,
            "mgn_mode": self.mgn_mode,
            "reduce_only": self.reduce_only,
            "intent_px": self.intent_px,
            "intent_sz": self.intent_sz,
            "px": self.px,
            "sz": self.sz,
            "notes": list(self.notes),
            "inputs": dict(self.inputs),
            "request": self.request,
            "state": self.state.value,
            "outcome": self.outcome.value if self.outcome else None,
            "ord_id": self.ord_id,
            "code": self.code,
            "msg": self.msg,
            "reasons": list(self.reasons),
            "error": self.error,
            "resolved": self.resolved,
            "attempts": self.attempts,
            "sent_ms": self.sent_ms,
            "outcome_ms": self.outcome_ms,
        }


@dataclass(frozen=True, slots=True)
class OrderFilter:
    """Which orders to read; every field narrows, ``None`` means any."""

    strategy: str | None = None
    rule: str | None = None
    symbol: str | None = None
    outcome: str | None = None
    """An :class:`Outcome` value, or ``unsettled``."""
    since_ms: int | None = None
    until_ms: int | None = None
    cycle_id: int | None = None
    cl_ord_id: str | None = None
    include_dry: bool = True
    limit: int | None = None


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One line of the journal's running log (what ``botkit journal tail`` prints)."""

    id: int
    ts_ms: int
    cycle_id: int | None
    kind: str
    strategy: str
    rule: str
    cl_ord_id: str
    text: str
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TripRecord:
    id: int
    cycle_id: int | None
    ts_ms: int
    dry: bool
    guard: str
    scope: str
    strategy: str
    cl_ord_id: str
    limit: str | None
    value: str | None
    message: str


@dataclass(frozen=True, slots=True)
class CycleSummary:
    """What one cycle did, in counts."""

    id: int
    started_ms: int
    finished_ms: int | None
    dry: bool
    clock_offset_ms: int | None
    evaluations: int
    fired: int
    orders: int
    by_outcome: dict[str, int]
    trips: int
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started_ms": self.started_ms,
            "finished_ms": self.finished_ms,
            "dry": self.dry,
            "clock_offset_ms": self.clock_offset_ms,
            "evaluations": self.evaluations,
            "fired": self.fired,
            "orders": self.orders,
            "by_outcome": dict(self.by_outcome),
            "trips": self.trips,
            "error": self.error,
        }


@dataclass(frozen=True, slots=True)
class PruneReport:
    """What a prune removed, and how many unsettled orders it kept whatever their age."""

    orders: int
    events: int
    evaluations: int
    trips: int
    cycles: int
    kept_unsettled: int


@dataclass(frozen=True, slots=True)
class StrategyRecord:
    """A strategy the bot has run: its last loaded version and what its file's deletion does
    to its resting orders (``on_delete``; ``""`` when unknown: only its orders were journaled,
    by a botkit older than this record). ``removed_ms``: when its file was seen gone."""

    name: str
    tag: str
    version: str
    source: str
    on_delete: str
    loaded_ms: int
    removed_ms: int | None = None


class TripLike(Protocol):
    """What the journal reads of a guard trip (:class:`botkit.pipeline.risk.GuardTrip`)."""

    @property
    def guard(self) -> str: ...
    @property
    def scope(self) -> str: ...
    @property
    def strategy(self) -> str | None: ...
    @property
    def cl_ord_id(self) -> str | None: ...
    @property
    def limit(self) -> Decimal | None: ...
    @property
    def value(self) -> Decimal | None: ...
    @property
    def message(self) -> str: ...


class EventLog(Protocol):
    """The journal's running log (what ``botkit journal tail`` prints)."""

    def record_event(
        self,
        kind: str,
        text: str,
        *,
        cl_ord_id: str = "",
        detail: dict[str, Any] | None = None,
        cycle_id: int | None = None,
        strategy: str = "",
        rule: str = "",
    ) -> None:
        """A free note in the running log."""
        ...


class JournalPort(EventLog, Protocol):
    """What the executor and reconcile (:mod:`botkit.runner.orders`) and the execution adapters
    need of a journal; see :class:`botkit.journal.Journal` for the contract of each call
    (intents are written before their request leaves; settling an order twice is an error)."""

    @property
    def clock(self) -> Callable[[], int]:
        """The journal's clock (Unix ms)."""
        ...

    def add_orders(
        self,
        cycle_id: int | None,
        orders: Sequence[NewOrder],
        *,
        dry: bool,
        reserve_ms: int = 0,
    ) -> None:
        """Write intents (and orders settled at once) in one commit, before any request
        (``reserve_ms``: the intents' sends reserved in it for that long, their marks then
        held; see :meth:`release_sends`). A live client order id already held, or named twice,
        is a :class:`~botkit.errors.DuplicateOrderId` and nothing is written."""
        ...

    def record_trips(
        self, cycle_id: int | None, trips: Sequence[TripLike], *, dry: bool = False
    ) -> None: ...

    def mark_sent(self, cl_ord_ids: Sequence[str], *, note: str = "") -> None:
        """A request carrying these orders is about to leave (or has left)."""
        ...

    def mark_unknown(self, cl_ord_ids: Sequence[str], error: str) -> None:
        """The fate of these orders is unknown (the request left, no answer came)."""
        ...

    def release_sends(self) -> None:
        """The reserved sends are over: the orders never sent are written back unsent."""
        ...

    def settle(self, outcomes: Sequence[OrderOutcome], *, hold: bool = False) -> None:
        """Record final outcomes in one commit (``hold``: with the journal's next write, e.g.
        the cycle's end; a crash before it leaves them for reconcile)."""
        ...

    def repair(self, cl_ord_id: str, ord_id: str, why: str) -> bool:
        """Correct an order settled failed/rejected but found at the exchange to accepted."""
        ...

    def has_unsettled(self) -> bool:
        """Whether a live order may lack its final outcome (without a query)."""
        ...

    def unsettled(self) -> list[OrderRecord]:
        """Live orders without a final outcome, oldest first."""
        ...

    def known_ids(self, ids: Collection[str]) -> set[str]:
        """Which of ``ids`` the journal already holds as live orders."""
        ...

    def orders(self, flt: OrderFilter | None = None) -> list[OrderRecord]: ...


class ActivityNote(NamedTuple):
    """One write the rules' activity may see, as the journal hands it to its watchers
    (:meth:`ActivityReads.watch_activity`) once it is committed (or pending in group commit).

    A fire: ``cl_ord_id`` is ``""``. An order: its client order id, ``counted`` when activity
    counts it (its fate open, accepted or a dry run). A settle with an outcome activity does not
    count (rejected, failed): ``counted`` False, only ``cl_ord_id`` set."""

    strategy: str
    rule: str
    ts_ms: int
    cl_ord_id: str
    dry: bool
    counted: bool


ActivitySink = Callable[[Sequence[ActivityNote]], None]
"""Receives the journal's activity notes, in the order the writes were made."""


class ActivityReads(Protocol):
    """What the rules' activity cache reads (:class:`~botkit.runner.activity.ActivityCache`):
    the window once per strategy, then what the journal says it wrote."""

    @property
    def clock(self) -> Callable[[], int]:
        """The journal's clock (Unix ms)."""
        ...

    def activity(self, strategy: str, since_ms: int, *, include_dry: bool = False) -> Activity:
        """What each rule of ``strategy`` did since ``since_ms``."""
        ...

    def watch_activity(self, sink: ActivitySink) -> None:
        """Call ``sink`` with the notes of every later write :meth:`activity` would see."""
        ...


class StrategyBook(EventLog, Protocol):
    """The strategies this journal knows, and their ``on_delete``
    (:class:`~botkit.runner.ownership.Ownership`)."""

    def record_strategies(self, loaded: Sequence[StrategyRecord]) -> None:
        """Remember strategies as loaded now."""
        ...

    def mark_strategies_removed(self, names: Sequence[str]) -> None:
        """Note that these strategies' files are gone."""
        ...

    def strategies(self, tag_of: Callable[[str], str]) -> list[StrategyRecord]:
        """Every strategy this journal knows (``tag_of``: a name's client-order-id tag)."""
        ...


class SharedIdReads(EventLog, Protocol):
    """What the watch for another bot under the same client order ids reads
    (:class:`~botkit.runner.shared.SharedIdWatch`)."""

    def ord_ids(self, ids: Collection[str]) -> dict[str, str]:
        """clOrdId → ordId (``""`` while unsettled) of each of ``ids`` journaled as live."""
        ...


class ManualJournal(EventLog, Protocol):
    """What an operator's cancel and flatten read back (:class:`~botkit.runner.manual.ManualRun`;
    their orders are journaled through the execution adapter's :class:`JournalPort`)."""

    def order(self, cl_ord_id: str) -> OrderRecord | None:
        """The live order with this client order id (else the latest dry-run one)."""
        ...


class RunnerJournal(ActivityReads, StrategyBook, SharedIdReads, Protocol):
    """What the :class:`~botkit.runner.cycle.Runner` needs of a journal: a cycle's records (its
    start and end, the rule evaluations, events) and what it hands the parts it builds
    (:class:`ActivityReads`, :class:`StrategyBook`, :class:`SharedIdReads`)."""

    @property
    def exclusive(self) -> bool:
        """Whether this journal is held by this process (its lock)."""
        ...

    def begin_cycle(
        self, *, dry: bool = False, clock_offset_ms: int | None = None, note: str = ""
    ) -> int:
        """A new cycle; its id."""
        ...

    def end_cycle(self, cycle_id: int, *, error: str = "") -> None: ...

    def record_evaluations(
        self,
        cycle_id: int | None,
        *,
        strategy: str,
        version: str,
        rules: Sequence[Evaluated],
        dry: bool = False,
    ) -> None:
        """What a strategy's rules saw and decided this cycle (file ``version``)."""
        ...

    def record_cycle_evaluations(
        self,
        cycle_id: int | None,
        evaluated: Sequence[tuple[str, str, Sequence[Evaluated]]],
        *,
        dry: bool = False,
    ) -> None:
        """What the rules of several strategies saw and decided this cycle, each as
        ``(strategy, file version, rules)``, in one commit."""
        ...
