"""What an operator's ``botkit cancel`` and ``botkit flatten`` do, through the runner's pipeline.

The choice (:class:`Selection`) and the close orders (:func:`close_intents`) are pure values;
:class:`ManualRun` carries them out with the same parts a cycle uses — the
:class:`~botkit.runner.execution.Execution` adapter (cancels, and orders through the executor:
intent journaled before its request leaves, outcomes settled, unknown outcomes looked up), the
snapshot reader and :func:`~botkit.pipeline.build_plan` (rounding and validation per lot). There
is no second submit path.

Close orders belong to the pseudo-strategy :data:`OPERATOR` (``@operator``, which no strategy
file can be named), rule ``flatten``, slot = the exchange time in ms, so ``botkit journal show
--strategy @operator`` lists what operators did by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal

from botkit.exchange.models import (
    Instrument,
    MarginMode,
    OpenOrder,
    OrderSide,
    OrderType,
    Position,
    PosSide,
)
from botkit.exchange.port import AccountReads
from botkit.intents import OrderIntent
from botkit.pipeline import Plan, build_plan, floor_to_lot
from botkit.pipeline.risk import signed_position
from botkit.ports.journal import ManualJournal, OrderRecord
from botkit.rules.ids import belongs_to, client_order_id
from botkit.runner.execution import Execution, SideEffect
from botkit.runner.orders import ExecutionReport
from botkit.runner.reader import SnapshotReader

__all__ = [
    "OPERATOR",
    "ManualRun",
    "Selection",
    "close_intents",
]

OPERATOR = "@operator"
"""The strategy name of what an operator does by hand (no strategy file can have it)."""

_ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class Selection:
    """Which open orders (and, for flatten, positions) a command acts on: one strategy's, one
    symbol's, or all. A strategy's positions are those of the symbols it trades (``symbols``):
    the exchange keeps one position per symbol and leg, shared by every strategy on it."""

    strategy: str | None = None
    symbol: str | None = None
    symbols: frozenset[str] | None = None
    """For ``strategy``: the symbols it trades (``None``: not known, orders only)."""

    def __str__(self) -> str:
        if self.strategy is not None:
            return f"strategy {self.strategy}"
        if self.symbol is not None:
            return f"symbol {self.symbol}"
        return "all symbols"

    def order(self, order: OpenOrder) -> bool:
        if self.symbol is not None and order.symbol != self.symbol:
            return False
        return self.strategy is None or belongs_to(order.clOrdId, self.strategy)

    def position(self, position: Position) -> bool:
        if self.symbol is not None:
            return position.symbol == self.symbol
        if self.strategy is not None:
            return self.symbols is not None and position.symbol in self.symbols
        return True


def _market_max(instrument: Instrument | None) -> Decimal | None:
    """The largest size one MARKET order may carry on ``instrument`` (a lot multiple)."""
    if instrument is None:
        return None
    cap = instrument.marketMaxQty
    if cap is None or cap <= _ZERO:
        return None
    floored = floor_to_lot(cap, instrument.lotSz)
    return floored if floored > _ZERO else None


def close_intents(
    positions: Iterable[Position],
    instruments: Mapping[str, Instrument],
    *,
    slot: int,
    rule: str = "flatten",
) -> list[OrderIntent]:
    """Reduce-only MARKET orders that close ``positions`` entirely: the opposite side, the
    position's own leg and margin mode, split into orders of at most the instrument's
    ``marketMaxQty``. Sizes are those of the positions; the planner rounds them per lot like
    any order's (a remainder below one lot cannot be sent and is refused with its reason)."""
    out: list[OrderIntent] = []
    leg = 0
    for position in sorted(positions, key=lambda p: (p.symbol, p.posSide.value)):
        qty = signed_position(position)
        if qty == _ZERO:
            continue
        side = OrderSide.SELL if qty > _ZERO else OrderSide.BUY
        left = abs(qty)
        cap = _market_max(instruments.get(position.symbol))
        while left > _ZERO:
            sz = left if cap is None else min(left, cap)
            out.append(
                OrderIntent(
                    strategy=OPERATOR,
                    rule=rule,
                    slot=slot,
                    leg=leg,
                    cl_ord_id=client_order_id(OPERATOR, rule, slot, leg),
                    symbol=position.symbol,
                    side=side,
                    type=OrderType.MARKET,
                    sz=sz,
                    mgn_mode=position.mgnMode or MarginMode.CROSS,
                    pos_side=position.posSide,
                    reduce_only=True,
                    inputs={"position.qty": format(qty, "f")},
                )
            )
            leg += 1
            left -= sz
    return out


def _order_line(order: OpenOrder) -> str:
    px = f" @ {order.px}" if order.px is not None else ""
    left = (order.sz or _ZERO) - (order.execQty or _ZERO)
    pos = f" {order.posSide.value}" if order.posSide not in (None, PosSide.BOTH) else ""
    return (
        f"  cancel {order.clOrdId or order.ordId} {order.symbol} {order.side.value} {left}{px}{pos}"
    )


def _position_line(position: Position) -> str:
    qty = signed_position(position)
    side = "SELL" if qty > _ZERO else "BUY"
    leg = "" if position.posSide is PosSide.BOTH else f" {position.posSide.value}"
    return f"  close {position.symbol}{leg} position {qty}: {side} {abs(qty)} MARKET reduce-only"


@dataclass(frozen=True, slots=True)
class Preview:
    """What a command will do, before anything is sent."""

    orders: tuple[OpenOrder, ...]
    positions: tuple[Position, ...]

    @property
    def empty(self) -> bool:
        return not (self.orders or self.positions)

    def lines(self) -> list[str]:
        lines = [_order_line(o) for o in self.orders]
        if self.orders and self.positions:
            lines.append("  then, with the positions as read again after the cancels:")
        return lines + [_position_line(p) for p in self.positions]


@dataclass(frozen=True, slots=True)
class Result:
    """What a command did, read back from the exchange and the journal afterwards."""

    cancel: SideEffect | None
    execution: ExecutionReport | None
    plan: Plan | None
    rows: tuple[OrderRecord, ...]
    still_open: tuple[OpenOrder, ...]
    still_held: tuple[Position, ...]

    @property
    def ok(self) -> bool:
        refused = self.plan is not None and bool(self.plan.refused)
        done = not (self.still_open or self.still_held or refused)
        return done and (self.cancel is None or self.cancel.ok)


class ManualRun:
    """Cancel and flatten on ``port``, journaled in ``journal`` through ``execution``."""

    def __init__(
        self,
        *,
        port: AccountReads,
        journal: ManualJournal,
        execution: Execution,
        reader: SnapshotReader,
        now_ms: Callable[[], int],
    ) -> None:
        self.port = port
        self.journal = journal
        self.execution = execution
        self.reader = reader
        self.now_ms = now_ms

    def preview(self, selection: Selection, *, positions: bool) -> Preview:
        """The open orders (and with ``positions`` the open positions) the command acts on."""
        orders = tuple(o for o in self.port.open_orders() if selection.order(o))
        return Preview(orders, self._held(selection) if positions else ())

    def _held(self, selection: Selection) -> tuple[Position, ...]:
        """The selection's open positions now."""
        return tuple(
            p
            for p in self.port.open_positions()
            if selection.position(p) and signed_position(p) != _ZERO
        )

    def _cancel(self, command: str, orders: Sequence[OpenOrder]) -> SideEffect | None:
        if not orders:
            return None
        ids = ", ".join(o.clOrdId or o.ordId for o in orders)
        self.journal.record_event(
            "operator",
            f"{command}: cancelling {len(orders)} open order(s): {ids}",
            strategy=OPERATOR,
            rule=command,
        )
        return self.execution.cancel(OPERATOR, command, orders, None)

    def _read_back(self, command: str, result: Result) -> Result:
        """Journal what the account holds of the selection after the command (the lookup that
        settles a cancel whose answer was lost)."""
        left = [f"order {o.clOrdId or o.ordId}" for o in result.still_open]
        left += [f"position {p.symbol} {p.posSide.value} {p.qty}" for p in result.still_held]
        self.journal.record_event(
            "operator",
            f"{command}: read back — "
            + (f"still there: {', '.join(left)}" if left else "nothing of the selection left"),
            strategy=OPERATOR,
            rule=command,
        )
        return result

    def cancel(self, selection: Selection, preview: Preview) -> Result:
        """Cancel the previewed orders; read back which of them are still open."""
        effect = self._cancel("cancel", preview.orders)
        if self.execution.dry:
            return Result(effect, None, None, (), (), ())
        wanted = {o.ordId for o in preview.orders}
        still = tuple(o for o in self.port.open_orders() if o.ordId in wanted)
        return self._read_back("cancel", Result(effect, None, None, (), still, ()))

    def flatten(self, selection: Selection, preview: Preview) -> Result:
        """Cancel the previewed orders, then close the selection's positions (as they are
        after the cancels) with reduce-only MARKET orders; read back what is left."""
        effect = self._cancel("flatten", preview.orders)
        now = self.now_ms()
        positions = self._held(selection)
        snapshot = self.reader.read(now, {p.symbol for p in positions})
        intents = close_intents(positions, snapshot.instruments, slot=now)
        plan = build_plan(intents, snapshot)
        report = self.execution.orders(plan, None)
        if report.unsettled:  # unknown outcomes: looked up (after the in-flight grace)
            self.execution.reconcile()
        rows = tuple(
            row for row in (self.journal.order(i.cl_ord_id) for i in intents) if row is not None
        )
        if self.execution.dry:
            return Result(effect, report, plan, rows, (), ())
        wanted = {o.ordId for o in preview.orders}
        still_open = tuple(o for o in self.port.open_orders() if o.ordId in wanted)
        held = self._held(selection)
        return self._read_back("flatten", Result(effect, report, plan, rows, still_open, held))
