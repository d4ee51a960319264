"""A validated file (:class:`~botkit.rules.schema.StrategySpec`) → a compiled :class:`Strategy`.

Compiles every expression with its scope, applies defaults, and checks what the schema cannot:
duplicate rule names, actions that cannot work (a MARKET order with a price, a ladder without a
step), position sides against the position mode, cancel targets, and — when instruments are
known — the symbol and ladders whose every price is outside the instrument's limits. Every
problem is collected with its file position; nothing stops at the first.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from botkit.errors import ConfigError, Location
from botkit.exchange.models import (
    Instrument,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
    StpMode,
    TimeInForce,
)
from botkit.intents import AMOUNT_LIMIT, KeepPolicy
from botkit.rules.actions import MAX_LEGS
from botkit.rules.context import BOOL, NUM
from botkit.rules.durations import parse_duration
from botkit.rules.expr import Expr, ExprError, Scope, compile_expr
from botkit.rules.ids import rule_tag
from botkit.rules.limits import ladder_problem
from botkit.rules.messages import did_you_mean
from botkit.rules.model import (
    Action,
    Cancel,
    Close,
    Grid,
    Ladder,
    MaxFires,
    OrderFields,
    PlaceOrder,
    RiskLimits,
    Rule,
    SetLeverage,
    SetPositionMode,
    Strategy,
)
from botkit.rules.runtime import Resolver
from botkit.rules.schema import (
    TOLERANCE_PATTERN,
    CloseSpec,
    GridSpec,
    KeepSpec,
    LadderSpec,
    OrderSpec,
    PlaceSpec,
    RuleSpec,
    StrategySpec,
)
from botkit.rules.series import Spec
from botkit.rules.yamlsrc import Path, SourceMap

__all__ = ["compile_strategy"]

_POSITIVE = frozenset({"sz", "px", "from_px", "to_px", "center"})
"""The amounts that must be above zero (a constant one at or below it is refused at load)."""

MIN_PERIOD_MS = 1_000
DAY_MS = 86_400_000
_PRICED = (OrderType.LIMIT, OrderType.LIMIT_MAKER)


class _Compiler:
    def __init__(
        self, spec: StrategySpec, smap: SourceMap, instruments: Mapping[str, Instrument] | None
    ) -> None:
        self.spec = spec
        self.smap = smap
        self.instruments = instruments
        self.problems: list[ConfigError] = []
        self.resolvers: dict[str, Resolver] = {}
        self.windows: dict[str, int] = {}
        self.series: set[Spec] = set()
        self.others: set[str] = set()
        self.hedge = spec.margin.position_mode is PositionMode.HEDGE

    def problem(self, where: Location, message: str, hint: str = "") -> None:
        self.problems.append(ConfigError(message, where=where, hint=hint))

    def at(self, path: Path, message: str, hint: str = "") -> None:
        self.problem(self.smap.value_at(path), message, hint)

    def expr(
        self, path: Path, source: str, kind: str, scope: Scope, inputs: dict[str, str]
    ) -> Expr:
        try:
            compiled = compile_expr(source, kind, scope)
        except ExprError as exc:
            self.problem(self.smap.inside(path, exc.offset), f"{path[-1]}: {exc.message}", exc.hint)
            return _DUMMY_BOOL if kind == BOOL else _DUMMY_NUM
        self.resolvers.update(compiled.resolvers)
        inputs.update(compiled.display)
        for root, window in compiled.windows.items():
            self.windows[root] = max(self.windows.get(root, 0), window)
        self.series.update(compiled.series)
        self.others.update(compiled.symbols)
        if self.instruments is not None:
            for symbol, offset in compiled.symbols.items():
                if symbol not in self.instruments:
                    self.problem(
                        self.smap.inside(path, offset),
                        f"{path[-1]}: unknown symbol '{symbol}'",
                        did_you_mean(symbol, sorted(self.instruments)),
                    )
        return compiled

    def amount(self, path: Path, source: str, scope: Scope, inputs: dict[str, str]) -> Expr:
        """A size or price expression; a constant one must be a sane amount (the pipeline
        refuses any amount at or beyond ``AMOUNT_LIMIT`` at run time as well)."""
        compiled = self.expr(path, source, NUM, scope, inputs)
        const = compiled.const
        if isinstance(const, Decimal) and abs(const) >= AMOUNT_LIMIT:
            self.at(
                path,
                f"{path[-1]}: {const.normalize():.6g} is beyond any order"
                f" (at most {AMOUNT_LIMIT:.0e})",
                f"write a sane {path[-1]}",
            )
        elif isinstance(const, Decimal) and const <= 0 and path[-1] in _POSITIVE:
            what = "size" if path[-1] == "sz" else "price"
            self.at(path, f"{path[-1]}: {const} is not above zero", f"write a {what} above 0")
        return compiled

    # --- the strategy ------------------------------------------------------------------------

    def run(self, version: str, source: str) -> Strategy:
        spec = self.spec
        period = parse_duration(spec.every)
        if period < MIN_PERIOD_MS:
            self.at(("every",), "every: shorter than 1s", "use 1s or more")
        if self.instruments is not None and spec.symbol not in self.instruments:
            self.problem(
                self.smap.value_at(("symbol",)),
                f"unknown symbol '{spec.symbol}'",
                did_you_mean(spec.symbol, sorted(self.instruments)),
            )
        names: dict[str, int] = {}
        tags: dict[str, str] = {}
        for index, rule in enumerate(spec.rules):
            where = self.smap.value_at(("rules", index, "name"))
            if rule.name in names:
                first = self.smap.value_at(("rules", names[rule.name], "name"))
                self.problem(
                    where,
                    f"duplicate rule name '{rule.name}' (first at line {first.line})",
                    "give every rule its own name",
                )
                continue
            names[rule.name] = index
            tag = rule_tag(rule.name)
            if tag in tags:
                self.problem(
                    where, f"rule names '{tags[tag]}' and '{rule.name}' hash alike", "rename one"
                )
            tags[tag] = rule.name
        rules = tuple(self.rule(i, r, names) for i, r in enumerate(spec.rules))
        risk = spec.risk
        return Strategy(
            name=spec.strategy,
            symbol=spec.symbol,
            period_ms=max(period, MIN_PERIOD_MS),
            rules=rules,
            mgn_mode=spec.margin.mode,
            position_mode=spec.margin.position_mode,
            enabled=spec.enabled,
            off_tick=spec.off_tick,
            on_delete=spec.on_delete,
            risk=RiskLimits(
                risk.max_orders_per_cycle,
                risk.max_notional_per_order,
                risk.max_notional_per_cycle,
                risk.max_position,
            ),
            params=dict(spec.params),
            description=spec.description or "",
            version=version,
            source=source,
            resolvers=self.resolvers,
            activity_window_ms=max(
                DAY_MS,
                self.windows.get("rule", 0),
                *(r.cooldown_ms for r in rules),
                *(r.max_fires.per_ms for r in rules if r.max_fires),
                # kept rules: the generations of their orders are read from the activity
                *(3 * period for r in rules if r.keep is not None),
            ),
            history_window_ms=self.windows.get("history", 0),
            series=frozenset(self.series),
            other_symbols=frozenset(self.others - {spec.symbol}),
        )

    # --- one rule ----------------------------------------------------------------------------

    def rule(self, index: int, spec: RuleSpec, names: Mapping[str, int]) -> Rule:
        base: Path = ("rules", index)
        inputs: dict[str, str] = {}
        pos_side = spec.pos_side
        if pos_side is not None and self.hedge and pos_side is PosSide.BOTH:
            self.at(
                (*base, "pos_side"),
                "pos_side: BOTH is the one-way side",
                "in hedge mode use LONG or SHORT",
            )
        if pos_side is not None and not self.hedge and pos_side is not PosSide.BOTH:
            self.at(
                (*base, "pos_side"),
                f"pos_side: {pos_side.value} needs hedge mode",
                "set margin: {position_mode: HEDGE} or remove pos_side",
            )
        scope = self.scope(spec.name, pos_side)
        when = None
        if spec.when is not None:
            when = self.expr((*base, "when"), spec.when, BOOL, scope, inputs)
        actions: list[Action] = []
        if spec.place is not None:
            self.place((*base, "place"), spec.place, spec, inputs, actions)
        keep = None
        if spec.keep is not None:
            keep = self.keep((*base, "keep"), spec.keep, spec)
            self.place((*base, "keep"), spec.keep, spec, inputs, actions)
        if spec.close is not None:
            actions.append(self.close((*base, "close"), spec.close, spec, inputs))
        if spec.cancel is not None:
            target = spec.cancel.rule
            if target is not None and target not in names:
                self.at(
                    (*base, "cancel", "rule"),
                    f"cancel: no rule named '{target}'",
                    did_you_mean(target, list(names)),
                )
            actions.append(Cancel(target))
        if spec.set_leverage is not None:
            side = spec.set_leverage.pos_side or pos_side or PosSide.BOTH
            actions.append(SetLeverage(spec.set_leverage.lever, self.spec.margin.mode, side))
        if spec.set_position_mode is not None:
            actions.append(SetPositionMode(spec.set_position_mode))
        if not actions:
            self.at(
                base,
                f"rule '{spec.name}' does nothing",
                "add place:, close:, cancel:, set_leverage: or set_position_mode:",
            )
        max_fires = None
        if spec.max_fires is not None:
            max_fires = MaxFires(spec.max_fires.count, parse_duration(spec.max_fires.per))
        return Rule(
            name=spec.name,
            when=when,
            actions=tuple(actions),
            enabled=spec.enabled,
            pos_side=pos_side,
            cooldown_ms=parse_duration(spec.cooldown) if spec.cooldown else 0,
            max_fires=max_fires,
            keep_open=spec.keep_open,
            keep=keep,
            line=self.smap.value_at(base).line or 0,
            inputs=inputs,
        )

    def place(
        self,
        path: Path,
        place: PlaceSpec,
        spec: RuleSpec,
        inputs: dict[str, str],
        actions: list[Action],
    ) -> None:
        key = path[-1]
        if place.order is None and not place.orders and place.ladder is None and place.grid is None:
            self.at(path, f"{key}: nothing to place", "add order:, orders:, ladder: or grid:")
        if place.order is not None:
            actions.append(self.order((*path, "order"), place.order, spec, inputs))
        for k, order in enumerate(place.orders or ()):
            actions.append(self.order((*path, "orders", k), order, spec, inputs))
        if place.ladder is not None:
            actions.append(self.ladder((*path, "ladder"), place.ladder, spec, inputs))
        if place.grid is not None:
            actions.append(self.grid((*path, "grid"), place.grid, spec, inputs))

    def keep(self, path: Path, keep: KeepSpec, spec: RuleSpec) -> KeepPolicy:
        """The keeping policy of a ``keep:`` rule; what cannot go with it is a problem."""
        base = path[:-1]
        others = [
            name
            for name, value in (
                ("place", spec.place),
                ("close", spec.close),
                ("cancel", spec.cancel),
                ("set_leverage", spec.set_leverage),
                ("set_position_mode", spec.set_position_mode),
            )
            if value is not None
        ]
        if others:
            self.problem(
                self.smap.key_at((*base, others[0])),
                f"{others[0]}: a keep: rule only declares orders",
                f"move {others[0]}: to a rule of its own",
            )
        for name, value in (
            ("cooldown", spec.cooldown),
            ("max_fires", spec.max_fires),
            ("keep_open", spec.keep_open or None),
        ):
            if value is not None:
                self.problem(
                    self.smap.key_at((*base, name)),
                    f"{name}: a keep: rule never fires, it is kept every cycle",
                    f"remove {name} (use keep: min_rest / max_replacements to limit churn)",
                )
        placed: list[tuple[Path, OrderSpec]] = []
        if keep.order is not None:
            placed.append((("order",), keep.order))
        placed += [(("orders", k), o) for k, o in enumerate(keep.orders or ())]
        for where, order in placed:
            if order.px is None or order.type is OrderType.MARKET:
                self.at(
                    (*path, *where),
                    "a kept order must rest: a MARKET order cannot",
                    "give it a px (LIMIT or LIMIT_MAKER), or use place: for a market order",
                )
        match = re.fullmatch(TOLERANCE_PATTERN, keep.tolerance)
        assert match is not None  # the schema checked the pattern
        digits, ticks = match[1], match[3].startswith("tick")
        refill = keep.refill
        refill_ms: int | None = 0
        if refill == "never":
            refill_ms = None
        elif refill.startswith("after "):
            refill_ms = parse_duration(refill[len("after ") :])
        return KeepPolicy(
            tolerance=Decimal(digits),
            tolerance_ticks=ticks,
            refill_ms=refill_ms,
            min_rest_ms=parse_duration(keep.min_rest) if keep.min_rest else 0,
            max_replacements=keep.max_replacements,
        )

    def scope(self, rule: str, pos_side: PosSide | None, allow_index: bool = False) -> Scope:
        side: str | None = "BOTH"
        hint = ""
        if self.hedge:
            side = pos_side.value if pos_side in (PosSide.LONG, PosSide.SHORT) else None
            hint = "set the rule's pos_side: LONG or SHORT, or use positions.long / positions.short"
        return Scope(self.spec.params, rule, side, hint, allow_index)

    def fields(
        self, path: Path, spec: Any, side: OrderSide, rule: RuleSpec, kind: OrderType
    ) -> OrderFields:
        defaults = self.spec.defaults
        pos_side = spec.pos_side or rule.pos_side
        if self.hedge and pos_side not in (PosSide.LONG, PosSide.SHORT):
            self.at(
                path,
                "in hedge mode every order needs pos_side LONG or SHORT",
                "set pos_side on the order or on the rule",
            )
        if not self.hedge and pos_side not in (None, PosSide.BOTH):
            self.at(
                (*path, "pos_side"),
                "pos_side LONG/SHORT needs hedge mode",
                "set margin: {position_mode: HEDGE} or remove pos_side",
            )
        return OrderFields(
            side=side,
            type=kind,
            pos_side=pos_side or PosSide.BOTH,
            mgn_mode=spec.mgn_mode or self.spec.margin.mode,
            reduce_only=_first(spec.reduce_only, defaults.reduce_only, False),
            time_in_force=_first(spec.time_in_force, defaults.time_in_force, _GTC),
            stp_mode=_first(spec.stp_mode, defaults.stp_mode, _STP_NONE),
        )

    def order(
        self, path: Path, spec: OrderSpec, rule: RuleSpec, inputs: dict[str, str]
    ) -> PlaceOrder:
        kind = (
            spec.type
            or self.spec.defaults.type
            or (OrderType.LIMIT if spec.px is not None else OrderType.MARKET)
        )
        if kind in _PRICED and spec.px is None:
            self.problem(
                self.smap.value_at(path),
                f"a {kind.value} order needs px",
                "add px: ... or use type: MARKET",
            )
        if kind is OrderType.MARKET and spec.px is not None:
            self.at((*path, "px"), "a MARKET order takes no px", "remove px or set type: LIMIT")
        scope = self.scope(rule.name, spec.pos_side or rule.pos_side)
        fields = self.fields(path, spec, spec.side, rule, kind)
        sz = self.amount((*path, "sz"), spec.sz, scope, inputs)
        px = None if spec.px is None else self.amount((*path, "px"), spec.px, scope, inputs)
        return PlaceOrder(fields, sz, px)

    def ladder(
        self, path: Path, spec: LadderSpec, rule: RuleSpec, inputs: dict[str, str]
    ) -> Ladder:
        kind = spec.type or OrderType.LIMIT
        if kind not in _PRICED:
            self.at(
                (*path, "type"), "a ladder places priced orders", "use type: LIMIT or LIMIT_MAKER"
            )
        if (spec.step_px is None) == (spec.to_px is None):
            self.at(
                path,
                "a ladder needs exactly one of step_px and to_px",
                "step_px: distance between rungs, or to_px: the last rung's price",
            )
        scope = self.scope(rule.name, spec.pos_side or rule.pos_side)
        rung = self.scope(rule.name, spec.pos_side or rule.pos_side, allow_index=True)
        fields = self.fields(path, spec, spec.side, rule, kind)
        count = self.expr((*path, "count"), spec.count, NUM, scope, inputs)
        ladder = Ladder(
            fields,
            count,
            self.amount((*path, "from_px"), spec.from_px, scope, inputs),
            None
            if spec.step_px is None
            else self.amount((*path, "step_px"), spec.step_px, scope, inputs),
            None
            if spec.to_px is None
            else self.amount((*path, "to_px"), spec.to_px, scope, inputs),
            self.amount((*path, "sz"), spec.sz, rung, inputs),
        )
        if isinstance(count.const, Decimal) and not (
            1 <= count.const <= MAX_LEGS and count.const % 1 == 0
        ):
            self.problem(
                self.smap.value_at((*path, "count")),
                f"count: {count.const} is not a whole number 1..{MAX_LEGS}",
            )
        instrument = (self.instruments or {}).get(self.spec.symbol)
        if instrument is not None:
            found = ladder_problem(ladder, instrument)
            if found is not None:
                self.at(path, found[0], found[1])
        return ladder

    def grid(self, path: Path, spec: GridSpec, rule: RuleSpec, inputs: dict[str, str]) -> Grid:
        kind = spec.type or OrderType.LIMIT
        if kind not in _PRICED:
            self.at(
                (*path, "type"), "a grid places priced orders", "use type: LIMIT or LIMIT_MAKER"
            )
        scope = self.scope(rule.name, spec.pos_side or rule.pos_side)
        rung = self.scope(rule.name, spec.pos_side or rule.pos_side, allow_index=True)
        return Grid(
            self.fields(path, spec, OrderSide.BUY, rule, kind),
            self.fields(path, spec, OrderSide.SELL, rule, kind),
            self.amount((*path, "center"), spec.center, scope, inputs),
            self.amount((*path, "step_px"), spec.step_px, scope, inputs),
            self.expr((*path, "levels"), spec.levels, NUM, scope, inputs),
            self.amount((*path, "sz"), spec.sz, rung, inputs),
        )

    def close(self, path: Path, spec: CloseSpec, rule: RuleSpec, inputs: dict[str, str]) -> Close:
        side = spec.pos_side or rule.pos_side
        sides: tuple[PosSide, ...]
        if self.hedge:
            if side is PosSide.BOTH:
                self.at(
                    (*path, "pos_side"),
                    "close: BOTH is the one-way side",
                    "use LONG or SHORT, or leave pos_side out to close both legs",
                )
            sides = (
                (side,) if side in (PosSide.LONG, PosSide.SHORT) else (PosSide.LONG, PosSide.SHORT)
            )
        else:
            if side not in (None, PosSide.BOTH):
                self.at(
                    (*path, "pos_side"),
                    "close: LONG/SHORT needs hedge mode",
                    "set margin: {position_mode: HEDGE} or remove pos_side",
                )
            sides = (PosSide.BOTH,)
        kind = spec.type or (OrderType.LIMIT if spec.px is not None else OrderType.MARKET)
        if kind in _PRICED and spec.px is None:
            self.problem(
                self.smap.value_at(path),
                f"a {kind.value} close needs px",
                "add px: ... or leave type out",
            )
        if kind is OrderType.MARKET and spec.px is not None:
            self.problem(
                self.smap.value_at((*path, "px")),
                "a MARKET close takes no px",
                "remove px or set type: LIMIT",
            )
        scope = self.scope(rule.name, sides[0] if len(sides) == 1 else None)
        defaults = self.spec.defaults
        return Close(
            pos_sides=sides,
            mgn_mode=self.spec.margin.mode,
            type=kind,
            sz=None if spec.sz is None else self.amount((*path, "sz"), spec.sz, scope, inputs),
            px=None if spec.px is None else self.amount((*path, "px"), spec.px, scope, inputs),
            time_in_force=_first(spec.time_in_force, defaults.time_in_force, _GTC),
            stp_mode=_first(spec.stp_mode, defaults.stp_mode, _STP_NONE),
        )


def _first(*values: Any) -> Any:
    return next(v for v in values if v is not None)


_GTC = TimeInForce.GTC
_STP_NONE = StpMode.NONE
_SCOPE = Scope({}, "", None)
_DUMMY_NUM = compile_expr("0", NUM, _SCOPE)
_DUMMY_BOOL = compile_expr("False", BOOL, _SCOPE)


def compile_strategy(
    spec: StrategySpec,
    smap: SourceMap,
    *,
    version: str,
    source: str,
    instruments: Mapping[str, Instrument] | None = None,
) -> tuple[Strategy, list[ConfigError]]:
    """The compiled strategy and every problem found (the strategy is unusable if any)."""
    compiler = _Compiler(spec, smap, instruments)
    strategy = compiler.run(version, source)
    problems = sorted(compiler.problems, key=lambda p: (p.where.line or 0, p.where.column or 0))
    return strategy, problems
