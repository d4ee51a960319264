"""Declared orders against resting orders: what to keep, place, cancel and replace, and why. Pure.

A ``keep:`` rule declares the orders that should rest now (:class:`~botkit.intents.KeepIntent`;
none while its condition is false). :func:`reconcile` compares them, rung by rung, with the
rule's resting orders (found by their client order ids) and decides:

* **keep** — a resting order within the tolerance of its declared order (price within
  ``tolerance`` bps or ticks of the declared price rounded to the tick; same size, side and
  flags), or one that drifted but rested less than ``min_rest`` or would break
  ``max_replacements``;
* **replace** — a resting order that drifted: cancel it, then place the declared order under a
  new client order id (the next generation of the rung);
* **place** — a declared order with nothing resting (first time, gone, or refilled after a
  fill as ``refill`` says);
* **cancel** — a resting order no longer declared, or a second order of one rung;
* **wait** — a declared order whose last order filled and whose refill is not due.

Every decision carries its reason (``price drifted 0.31 % > tolerance 0.10 %``). Time comes in
as ``now_ms``; the facts about the past (the rule's orders sent, from the journal; fills, from
the exchange) come in as values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal
from enum import StrEnum

from botkit.exchange.models import Instrument, OpenOrder, OrderSide
from botkit.frozen import quick_init
from botkit.intents import DeclaredOrder, KeepPolicy, OrderIntent
from botkit.rules.durations import format_duration
from botkit.rules.ids import kept_order_id, parse_client_order_id

__all__ = ["Action", "Decision", "FillFact", "RuleDiff", "keeps_all", "reconcile"]

MINUTE_MS = 60_000


class Action(StrEnum):
    KEEP = "keep"
    PLACE = "place"
    CANCEL = "cancel"
    REPLACE = "replace"
    WAIT = "wait"


@quick_init
@dataclass(frozen=True, slots=True)
class FillFact:
    """The fill of an order that is no longer resting: when, and at what price."""

    time_ms: int
    px: Decimal | None = None


@quick_init
@dataclass(frozen=True, slots=True)
class Decision:
    """One decision about one rung (``rung`` None: an order of the rule that is not a rung)."""

    action: Action
    rung: int | None
    reason: str
    resting: OpenOrder | None = None
    """The order kept, cancelled or replaced."""
    intent: OrderIntent | None = None
    """The order placed (place, replace)."""

    def line(self) -> str:
        """The decision in one line (``botkit plan``, the journal)."""
        old = self.resting.clOrdId if self.resting is not None else ""
        new = self.intent.cl_ord_id if self.intent is not None else ""
        what = {
            Action.KEEP: f"keep {old}",
            Action.PLACE: f"place {new} {_order_text(self.intent)}",
            Action.CANCEL: f"cancel {old}",
            Action.REPLACE: f"replace {old} by {new} {_order_text(self.intent)}",
            Action.WAIT: "wait",
        }[self.action]
        rung = f"rung {self.rung}: " if self.rung is not None else ""
        return f"{rung}{what}: {self.reason}"


def _order_text(intent: OrderIntent | None) -> str:
    if intent is None:
        return ""
    px = f" @ {intent.px:f}" if intent.px is not None else ""
    return f"({intent.side.value} {intent.sz:f}{px})"


_SUMMARY_WORDS = {
    Action.KEEP: "kept",
    Action.PLACE: "to place",
    Action.REPLACE: "to replace",
    Action.CANCEL: "to cancel",
    Action.WAIT: "waiting",
}
"""The actions a rule's summary counts, in its order, with their words."""


@quick_init
@dataclass(frozen=True, slots=True)
class RuleDiff:
    """Everything :func:`reconcile` decided for one rule in one cycle."""

    strategy: str
    rule: str
    decisions: tuple[Decision, ...] = ()
    held: str = ""
    """Why nothing was decided (the rule's evaluation failed), or empty."""

    def count(self, action: Action) -> int:
        return sum(1 for d in self.decisions if d.action is action)

    @property
    def cancels(self) -> tuple[OpenOrder, ...]:
        """The orders to cancel before anything is placed (cancels and replacements)."""
        return tuple(
            d.resting
            for d in self.decisions
            if d.action in (Action.CANCEL, Action.REPLACE) and d.resting is not None
        )

    @property
    def changes(self) -> tuple[Decision, ...]:
        """The decisions that do something (all but keep)."""
        return tuple(d for d in self.decisions if d.action is not Action.KEEP)

    def summary(self) -> str:
        tally = dict.fromkeys(_SUMMARY_WORDS, 0)  # each action's count, in one pass
        for d in self.decisions:
            if d.action in tally:
                tally[d.action] += 1
        counts = ", ".join(
            f"{tally[a]} {word}"
            for a, word in _SUMMARY_WORDS.items()
            if tally[a] or a is Action.KEEP
        )
        return f"{self.strategy}/{self.rule}: {counts}" + (f" ({self.held})" if self.held else "")

    def lines(self) -> list[str]:
        """The summary, then one line per decision that does something."""
        return [self.summary(), *(f"  {d.line()}" for d in self.changes)]


@dataclass(slots=True)
class _Rung:
    """What the facts say about one rung."""

    resting: list[tuple[int, OpenOrder]] = field(default_factory=list)
    last_gen: int = -1
    last_id: str = ""

    def saw(self, generation: int, cl_ord_id: str) -> None:
        if generation > self.last_gen:
            self.last_gen, self.last_id = generation, cl_ord_id


def _pct(value: Decimal) -> str:
    return f"{value.quantize(Decimal('0.01')):f} %"


def _passive(px: Decimal, side: OrderSide, instrument: Instrument | None) -> Decimal:
    if instrument is None:
        return px
    rounding = ROUND_FLOOR if side is OrderSide.BUY else ROUND_CEILING
    return (px / instrument.tSz).to_integral_value(rounding) * instrument.tSz


def _size(sz: Decimal, instrument: Instrument | None) -> Decimal:
    """``sz`` floored to the instrument's lot: the last answer kept by the identity of the two
    amounts (a ladder's rungs share one size, a constant, and every keep check of a strategy
    asks its rungs again with it: one division for all of them)."""
    global _SIZED
    if instrument is None:
        return sz
    lot = instrument.lotSz
    last = _SIZED
    if last[0] is sz and last[1] is lot:
        return last[2]
    sized = (sz / lot).to_integral_value(ROUND_FLOOR) * lot
    _SIZED = (sz, lot, sized)
    return sized


_SIZED: tuple[object, object, Decimal] = (None, None, Decimal(0))
"""(size, lot, the size floored to the lot) of :func:`_size`'s last answer (a new tuple each
time: a reader sees one whole answer)."""


def drift(
    declared: DeclaredOrder,
    order: OpenOrder,
    policy: KeepPolicy,
    instrument: Instrument | None,
    *,
    explain: bool = True,
) -> tuple[bool, str]:
    """Whether ``order`` no longer stands for ``declared`` (beyond tolerance or different), and
    the reason either way (without ``explain``: the same answer, the reason of an order within
    its tolerance left empty)."""
    if (
        declared.side != order.side
        or declared.type != order.type
        or declared.reduce_only != order.reduceOnly
        or declared.time_in_force != order.timeInForce
        or declared.pos_side != (order.posSide or declared.pos_side)
    ):  # the first that differs, named (the usual order differs in none: no tuples built)
        for name, want, have in (
            ("side", declared.side, order.side),
            ("type", declared.type, order.type),
            ("reduce_only", declared.reduce_only, order.reduceOnly),
            ("time_in_force", declared.time_in_force, order.timeInForce),
            ("pos_side", declared.pos_side, order.posSide or declared.pos_side),
        ):
            if want != have:
                return True, f"{name} changed: {_word(have)} → {_word(want)}"
    size = _size(declared.sz, instrument)
    if order.sz is not None and size != order.sz:
        return True, f"size changed: {order.sz:f} → {size:f}"
    if declared.px is None or order.px is None or order.px <= 0:
        return False, "same order"
    px = _passive(declared.px, declared.side, instrument)
    moved = abs(px - order.px)
    if policy.tolerance_ticks and instrument is not None:
        ticks = moved / instrument.tSz
        beyond = ticks > policy.tolerance
        if not beyond and not explain:
            return False, ""
        amount = f"{ticks.normalize():f} tick(s)"
    else:
        bps = moved / order.px * 10_000
        beyond = bps > policy.tolerance
        if not beyond and not explain:
            return False, ""
        amount = _pct(bps / 100)
    tolerance = policy.describe_tolerance()
    if beyond:
        return True, f"price drifted {amount} > tolerance {tolerance} ({order.px:f} → {px:f})"
    return False, f"within tolerance: {amount} ≤ {tolerance}"


def _word(value: object) -> str:
    text = getattr(value, "value", value)
    return str(text).lower() if isinstance(text, bool) else str(text)


def _facts(
    resting: Iterable[OpenOrder],
    sent: Sequence[tuple[int, str]],
    now_ms: int,
    wanted: Iterable[int],
    count_recent: bool,
) -> tuple[dict[int, _Rung], list[OpenOrder], int]:
    """Per rung: its resting orders and the last generation sent; the rule's resting orders
    that are not declared ones; the re-placements sent within the last minute (when
    ``count_recent``).

    ``sent`` is oldest first. A rung's generations only grow, so its newest order sent is its
    last generation: the orders are read newest first, and only as far back as needed (the
    rungs wanted or resting found; for the count, an older order of each rung sent in the last
    minute) — a cycle reads a few, not the day's."""
    rungs: dict[int, _Rung] = {}
    strays: list[OpenOrder] = []
    for order in resting:
        parsed = parse_client_order_id(order.clOrdId)
        if parsed is None or not parsed.kept:
            strays.append(order)
            continue
        entry = rungs.get(parsed.leg)
        if entry is None:  # (``setdefault`` would build a rung each time)
            entry = rungs[parsed.leg] = _Rung()
        entry.resting.append((parsed.slot, order))
        entry.saw(parsed.slot, order.clOrdId)
    missing = set(wanted) | set(rungs)
    since = now_ms - MINUTE_MS
    in_minute: dict[int, int] = {}
    before: set[int] = set()
    for time_ms, cl_ord_id in reversed(sent):
        if time_ms <= since and not missing and before.issuperset(in_minute):
            break
        parsed = parse_client_order_id(cl_ord_id)
        if parsed is None or not parsed.kept:
            continue
        rung = parsed.leg
        entry = rungs.get(rung)
        if entry is None:
            entry = rungs[rung] = _Rung()
        entry.saw(parsed.slot, cl_ord_id)
        missing.discard(rung)
        if not count_recent:
            continue
        if time_ms > since:
            in_minute[rung] = in_minute.get(rung, 0) + 1
        else:
            before.add(rung)
    recent = sum(n if rung in before else n - 1 for rung, n in in_minute.items())
    return rungs, strays, recent


@dataclass(slots=True)
class _Reconcile:
    strategy: str
    rule: str
    symbol: str
    policy: KeepPolicy
    now_ms: int
    slot: int
    instrument: Instrument | None
    filled: Callable[[str], FillFact | None]
    inputs: dict[str, str]
    recent: int
    budget: int | None
    explain: bool = True
    cancels: list[Decision] = field(default_factory=list)
    places: list[Decision] = field(default_factory=list)
    others: list[Decision] = field(default_factory=list)

    def intent(self, want: DeclaredOrder, entry: _Rung | None) -> OrderIntent:
        """The order of ``want`` under the rung's next generation (never below the slot)."""
        generation = max(self.slot, (entry.last_gen + 1) if entry is not None else 0)
        # positional, in OrderIntent's field order (keywords cost a fifth of the construction)
        return OrderIntent(
            self.strategy,  # strategy
            self.rule,  # rule
            generation,  # slot
            want.rung,  # leg
            kept_order_id(self.strategy, self.rule, generation, want.rung),  # cl_ord_id
            self.symbol,  # symbol
            want.side,  # side
            want.type,  # type
            want.sz,  # sz
            want.px,  # px
            want.mgn_mode,  # mgn_mode
            want.pos_side,  # pos_side
            want.reduce_only,  # reduce_only
            want.time_in_force,  # time_in_force
            want.stp_mode,  # stp_mode
            self.inputs,  # inputs
        )

    def undeclared(self, rungs: dict[int, _Rung], wanted: Mapping[int, DeclaredOrder]) -> None:
        """Cancel what rests for a rung no longer declared, and a rung's extra orders."""
        for rung, entry in sorted(rungs.items()):
            if entry.resting and rung not in wanted:
                reason = (
                    "no longer declared (the condition is false)"
                    if not wanted
                    else f"no longer declared (the rule declares {len(wanted)} order(s))"
                )
                self.cancels.extend(
                    Decision(Action.CANCEL, rung, reason, o) for _g, o in entry.resting
                )
            elif len(entry.resting) > 1:
                entry.resting.sort(key=lambda item: item[0], reverse=True)
                self.cancels.extend(
                    Decision(Action.CANCEL, rung, "the rung rests twice: the newest is kept", o)
                    for _g, o in entry.resting[1:]
                )
                del entry.resting[1:]

    def resting(self, want: DeclaredOrder, entry: _Rung, order: OpenOrder) -> None:
        """A declared order with an order resting: keep it, or replace it if it drifted (and
        churn allows)."""
        beyond, why = drift(want, order, self.policy, self.instrument, explain=self.explain)
        age = self.now_ms - order.cTime if order.cTime is not None else None
        policy = self.policy
        if not beyond:
            self.others.append(Decision(Action.KEEP, want.rung, why, order))
        elif policy.min_rest_ms and age is not None and age < policy.min_rest_ms:
            rested = (
                f"{format_duration(max(age, 0))} < min_rest {format_duration(policy.min_rest_ms)}"
            )
            self.others.append(
                Decision(Action.KEEP, want.rung, f"{why}, but it rested {rested}", order)
            )
        elif self.budget is not None and self.budget <= 0:
            self.others.append(
                Decision(
                    Action.KEEP,
                    want.rung,
                    f"{why}, but {self.recent} re-placement(s) in the last minute reach"
                    f" max_replacements {policy.max_replacements}",
                    order,
                )
            )
        else:
            if self.budget is not None:
                self.budget -= 1
            self.places.append(
                Decision(Action.REPLACE, want.rung, why, order, self.intent(want, entry))
            )

    def missing(self, want: DeclaredOrder, entry: _Rung | None) -> None:
        """A declared order with nothing resting: place it, unless its last order filled and
        the refill policy says to wait."""
        last = entry.last_id if entry is not None else ""
        refill = self.policy.refill_ms
        if last and refill == 0:  # placed again whether it filled or not: nothing to look up
            why = f"declared; its last order {last} no longer rests (filled or cancelled)"
            self.places.append(
                Decision(Action.PLACE, want.rung, why, None, self.intent(want, entry))
            )
            return
        fill = self.filled(last) if last else None
        if fill is None:
            why = (
                f"declared; its last order {last} no longer rests and did not fill"
                if last
                else "declared, nothing rests"
            )
            self.places.append(
                Decision(Action.PLACE, want.rung, why, None, self.intent(want, entry))
            )
            return
        ago = format_duration(max(self.now_ms - fill.time_ms, 0))
        if refill is None:
            self.others.append(
                Decision(Action.WAIT, want.rung, f"{last} filled {ago} ago; refill: never")
            )
        elif self.now_ms - fill.time_ms < refill:
            due = format_duration(fill.time_ms + refill - self.now_ms)
            why = f"{last} filled {ago} ago; refill after {format_duration(refill)}: due in {due}"
            self.others.append(Decision(Action.WAIT, want.rung, why))
        else:
            why = f"refill: {last} filled {ago} ago"
            self.places.append(
                Decision(Action.PLACE, want.rung, why, None, self.intent(want, entry))
            )


def reconcile(
    *,
    strategy: str,
    rule: str,
    symbol: str,
    declared: Sequence[DeclaredOrder],
    policy: KeepPolicy,
    resting: Iterable[OpenOrder],
    sent: Sequence[tuple[int, str]],
    now_ms: int,
    slot: int,
    instrument: Instrument | None = None,
    filled: Callable[[str], FillFact | None] = lambda _id: None,
    inputs: dict[str, str] | None = None,
    explain: bool = True,
) -> RuleDiff:
    """The decisions that bring ``rule``'s resting orders to its ``declared`` set.

    ``resting``: the open orders of the rule (by client order id); ``sent``: (time, client order
    id) of the orders the rule sent recently, oldest first (the journal's activity); ``slot``:
    the evaluation slot, the least generation a new order gets; ``filled``: the fill of an
    order no longer resting, or None. Cancels come first in the result, then places, then
    keeps and waits. Without ``explain`` the decisions are the same, but an order kept within
    its tolerance carries no reason (for a caller that only asks whether anything changes).
    """
    limit = policy.max_replacements
    rungs, strays, recent = _facts(
        resting, sent, now_ms, (d.rung for d in declared), limit is not None
    )
    work = _Reconcile(
        strategy, rule, symbol, policy, now_ms, slot, instrument, filled,
        inputs if inputs is not None else {}, recent, None if limit is None else limit - recent,
        explain,
    )  # fmt: skip
    work.cancels.extend(
        Decision(Action.CANCEL, None, "not a declared order (placed by an earlier place: rule)", o)
        for o in strays
    )
    wanted = {d.rung: d for d in declared}
    work.undeclared(rungs, wanted)
    for rung, want in sorted(wanted.items()):
        entry = rungs.get(rung)
        if entry is not None and entry.resting:
            work.resting(want, entry, entry.resting[0][1])
        else:
            work.missing(want, entry)
    return RuleDiff(strategy, rule, (*work.cancels, *work.places, *work.others))


def keeps_all(
    declared: Sequence[DeclaredOrder],
    policy: KeepPolicy,
    resting: Iterable[OpenOrder],
    now_ms: int,
    instrument: Instrument | None = None,
) -> bool | None:
    """Whether :func:`reconcile` over the same ``declared``, ``policy``, ``resting``,
    ``now_ms`` and ``instrument`` would decide nothing but keeps (``not diff.changes``),
    whatever its ``sent``, ``slot`` and ``filled`` — or None when that depends on them (a rung
    drifted past its ``min_rest`` under ``max_replacements``: the re-placements of the last
    minute decide). Answers without the rule's orders sent or a decision built: a resting
    order that is not a rung, a rung not declared, a rung resting twice, a declared rung with
    nothing resting (placed, or waiting for its refill) and a rung drifted past its
    ``min_rest`` without ``max_replacements`` (replaced) are changes; a rung within its
    tolerance, or drifted but younger than ``min_rest``, is kept.
    ``tests/pipeline/test_keeps_all.py`` compares it with :func:`reconcile`."""
    by_rung: dict[int, OpenOrder] = {}
    for order in resting:
        parsed = parse_client_order_id(order.clOrdId)
        if parsed is None or not parsed.kept or parsed.leg in by_rung:
            return False  # cancelled: not a rung, or the rung's second order
        by_rung[parsed.leg] = order
    wanted = {d.rung: d for d in declared}
    if len(wanted) != len(by_rung):
        return False  # a rung declared with nothing resting, or one resting not declared
    min_rest = policy.min_rest_ms
    answer: bool | None = True
    for rung, want in wanted.items():
        rests = by_rung.get(rung)
        if rests is None:
            return False
        if not drift(want, rests, policy, instrument, explain=False)[0]:
            continue
        created = rests.cTime
        if min_rest and created is not None and now_ms - created < min_rest:
            continue  # drifted, but kept until it has rested min_rest
        if policy.max_replacements is None:
            return False  # replaced
        answer = None  # replaced, or kept when the minute's re-placements reach the limit
    return answer
