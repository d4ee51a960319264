"""Actions → intents: what a fired rule asks for, as plain values for the pipeline.

Pure. Each order gets its leg index (0, 1, ... across the rule's actions) and the deterministic
client order id of (strategy, rule, slot, leg). Prices and sizes are left unrounded: rounding
and validation against the instrument is the pipeline's job. A value that can never make an
order (size or price <= 0, a rung count that is not a whole number) raises :class:`ActionError`.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from botkit.exchange.models import OrderSide
from botkit.intents import (
    CancelIntent,
    DeclaredOrder,
    Intent,
    KeepIntent,
    LeverageIntent,
    OrderIntent,
    PositionModeIntent,
)
from botkit.rules.context import Ctx
from botkit.rules.expr import Expr
from botkit.rules.ids import MAX_LENGTH, leg_id, slot_prefix
from botkit.rules.model import (
    Cancel,
    Close,
    Grid,
    Ladder,
    OrderFields,
    PlaceOrder,
    Rule,
    SetLeverage,
    SetPositionMode,
    Strategy,
)
from botkit.rules.runtime import Env, value

__all__ = ["MAX_LEGS", "ActionError", "build_intents"]

MAX_LEGS = 200
"""The most orders one rule may produce in one evaluation."""

_INDEX = "i"


class ActionError(Exception):
    """An action's values cannot make an order; the message names the field and the value."""


class _Rung(dict[str, Any]):
    """The names one rung of a ladder or grid sees: its index ``i`` here, every context value
    through the evaluation's environment (read there once and kept there, as for any other
    expression). The index never enters the environment, which so holds context values only
    (see :class:`~botkit.rules.runtime.Env`)."""

    __slots__ = ("env",)
    env: Env

    def __missing__(self, key: str) -> Any:
        return self.env[key]


class _Builder:
    def __init__(
        self,
        strategy: Strategy,
        rule: Rule,
        env: Env,
        ctx: Ctx,
        slot: int,
        inputs: dict[str, str],
    ) -> None:
        self.strategy = strategy
        self.rule = rule
        self.env = env
        self.ctx = ctx
        self.slot = slot
        self.inputs = inputs
        self.leg = 0
        self.prefix = slot_prefix(strategy.name, rule.name, slot)
        self.out: list[Intent] = []
        self.kept = rule.keep is not None
        """A ``keep:`` rule: its orders go straight into ``declared_orders`` (no intent, no id:
        the reconcile names each order it places)."""
        self.declared_orders: list[DeclaredOrder] = []
        self.long_prefix = len(self.prefix) + 2 > MAX_LENGTH  # a leg's id could be too long

    def num(self, expr: Expr, what: str, names: Mapping[str, Any] | None = None) -> Decimal:
        got = value(expr, self.env if names is None else names)
        if not isinstance(got, Decimal) or not got.is_finite():
            raise ActionError(f"{what} evaluated to {got} ({expr.text})")
        return got

    def positive(self, expr: Expr, what: str, names: Mapping[str, Any] | None = None) -> Decimal:
        value = self.num(expr, what, names)
        if value <= 0:
            raise ActionError(f"{what} evaluated to {_fmt(value)}, must be > 0 ({expr.text})")
        return value

    def count(self, expr: Expr, what: str, limit: int) -> int:
        value = self.num(expr, what)
        if value != value.to_integral_value() or value < 0 or value > limit:
            raise ActionError(
                f"{what} evaluated to {_fmt(value)}, must be a whole number 0..{limit}"
                f" ({expr.text})"
            )
        return int(value)

    def order(self, fields: OrderFields, sz: Decimal, px: Decimal | None) -> None:
        leg = self.leg
        if leg >= MAX_LEGS:
            raise ActionError(f"the rule asks for more than {MAX_LEGS} orders")
        if self.kept:
            if self.long_prefix:
                leg_id(self.prefix, leg)  # refuses an id too long, as for any other order
            # positional, in DeclaredOrder's field order
            self.declared_orders.append(
                DeclaredOrder(
                    leg,  # rung
                    fields.side,  # side
                    fields.type,  # type
                    sz,  # sz
                    px,  # px
                    fields.mgn_mode,  # mgn_mode
                    fields.pos_side,  # pos_side
                    fields.reduce_only,  # reduce_only
                    fields.time_in_force,  # time_in_force
                    fields.stp_mode,  # stp_mode
                )
            )
            self.leg = leg + 1
            return
        strategy = self.strategy
        # positional, in OrderIntent's field order (one per order of every fired rule: keywords
        # cost a fifth of the construction)
        self.out.append(
            OrderIntent(
                strategy.name,  # strategy
                self.rule.name,  # rule
                self.slot,  # slot
                leg,  # leg
                leg_id(self.prefix, leg),  # cl_ord_id
                strategy.symbol,  # symbol
                fields.side,  # side
                fields.type,  # type
                sz,  # sz
                px,  # px
                fields.mgn_mode,  # mgn_mode
                fields.pos_side,  # pos_side
                fields.reduce_only,  # reduce_only
                fields.time_in_force,  # time_in_force
                fields.stp_mode,  # stp_mode
                self.inputs,  # inputs
            )
        )
        self.leg = leg + 1

    def rung(self, k: int, expr: Expr) -> _Rung | None:
        """What ``expr`` reads for rung ``k`` (``i`` is ``k``); ``None`` (the environment)
        for a folded constant, which reads nothing."""
        if expr.const is not None:
            return None
        names = _Rung({_INDEX: Decimal(k)})
        names.env = self.env
        return names

    # --- the actions ---------------------------------------------------------------------

    def place_order(self, action: PlaceOrder) -> None:
        sz = self.positive(action.sz, "sz")
        px = None if action.px is None else self.positive(action.px, "px")
        self.order(action.fields, sz, px)

    def ladder(self, action: Ladder) -> None:
        count = self.count(action.count, "ladder count", MAX_LEGS)
        if count == 0:
            return
        start = self.positive(action.from_px, "ladder from_px")
        if action.to_px is not None:
            end = self.positive(action.to_px, "ladder to_px")
            step = (end - start) / (count - 1) if count > 1 else Decimal(0)
        else:
            assert action.step_px is not None
            step = self.positive(action.step_px, "ladder step_px")
            if action.fields.side is OrderSide.BUY:
                step = -step
        size = action.sz
        same: Decimal | None = None  # a folded constant size: checked at rung 0, then the same
        for k in range(count):
            px = start + step * k
            if px <= 0:
                raise ActionError(f"ladder rung {k}: price {_fmt(px)} is not > 0")
            sz = same
            if sz is None:
                sz = self.positive(size, f"ladder rung {k} sz", self.rung(k, size))
                if size.const is not None:
                    same = sz
            self.order(action.fields, sz, px)

    def grid(self, action: Grid) -> None:
        levels = self.count(action.levels, "grid levels", MAX_LEGS // 2)
        center = self.positive(action.center, "grid center")
        step = self.positive(action.step_px, "grid step_px")
        buys: list[tuple[Decimal, Decimal]] = []
        sells: list[tuple[Decimal, Decimal]] = []
        for k in range(levels):
            px = center - step * (k + 1)
            if px <= 0:
                raise ActionError(f"grid BUY level {k + 1}: price {_fmt(px)} is not > 0")
            buys.append(
                (self.positive(action.sz, f"grid level {k + 1} sz", self.rung(k, action.sz)), px)
            )
        for k in range(levels):
            px = center + step * (k + 1)
            sells.append(
                (self.positive(action.sz, f"grid level {k + 1} sz", self.rung(k, action.sz)), px)
            )
        if self.rule.keep is not None:  # kept: level k is legs 2k (BUY) and 2k + 1 (SELL),
            for buy, sell in zip(buys, sells, strict=True):  # whatever the number of levels
                self.order(action.buy, *buy)
                self.order(action.sell, *sell)
            return
        for sz, px in buys:
            self.order(action.buy, sz, px)
        for sz, px in sells:
            self.order(action.sell, sz, px)

    def close(self, action: Close) -> None:
        for pos_side in action.pos_sides:
            position = self.ctx.position(pos_side)
            if position.qty == 0:
                continue
            held = position.availQty if position.availQty > 0 else position.size
            sz = held if action.sz is None else min(held, self.positive(action.sz, "close sz"))
            px = None if action.px is None else self.positive(action.px, "close px")
            side = OrderSide.SELL if position.qty > 0 else OrderSide.BUY
            fields = OrderFields(
                side=side,
                type=action.type,
                pos_side=pos_side,
                mgn_mode=action.mgn_mode,
                reduce_only=True,
                time_in_force=action.time_in_force,
                stp_mode=action.stp_mode,
            )
            self.order(fields, sz, px)

    def run(self) -> list[Intent]:
        strategy, rule = self.strategy, self.rule
        for action in rule.actions:
            if isinstance(action, PlaceOrder):
                self.place_order(action)
            elif isinstance(action, Ladder):
                self.ladder(action)
            elif isinstance(action, Grid):
                self.grid(action)
            elif isinstance(action, Close):
                self.close(action)
            elif isinstance(action, Cancel):
                self.out.append(
                    CancelIntent(strategy.name, rule.name, strategy.symbol, action.only_rule)
                )
            elif isinstance(action, SetLeverage):
                self.out.append(
                    LeverageIntent(
                        strategy.name,
                        rule.name,
                        strategy.symbol,
                        action.lever,
                        action.mgn_mode,
                        action.pos_side,
                    )
                )
            elif isinstance(action, SetPositionMode):
                self.out.append(PositionModeIntent(strategy.name, rule.name, action.mode))
        if rule.keep is not None:
            return [self.declared()]
        return self.out

    def declared(self) -> KeepIntent:
        """A ``keep:`` rule's orders as its declared set: rung k is its k-th order."""
        strategy, rule = self.strategy, self.rule
        assert rule.keep is not None
        orders = tuple(self.declared_orders)
        return KeepIntent(strategy.name, rule.name, strategy.symbol, orders, rule.keep, self.inputs)


def build_intents(
    strategy: Strategy,
    rule: Rule,
    env: Env,
    ctx: Ctx,
    slot: int,
    inputs: dict[str, str],
) -> list[Intent]:
    """The intents of a rule whose condition held. Raises ActionError or EvalError.

    Every order intent shares ``inputs``; the caller fills it once all values are known."""
    return _Builder(strategy, rule, env, ctx, slot, inputs).run()


def _fmt(value: Decimal) -> str:
    return format(value, "f")
