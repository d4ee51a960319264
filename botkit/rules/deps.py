"""What can change a rule's outcome, from its compiled expressions — and until when it cannot.

Pure: no I/O, no clock. A compiled condition (:class:`~botkit.rules.expr.Expr`) is a function
of the environment values it reads (each a flattened context access such as ``position.qty``
or a series such as ``ema(close('15m'), 20)``) and of nothing else: its operators and functions
are Decimal arithmetic, its time is the ``now`` value. Each value belongs to one **input**:

- ``constant`` — ``instrument.*`` (the instrument's limits); ``params`` are folded at load;
- ``book`` — what only an order placed, cancelled or filled (or a setting changed) moves: the
  position's size, side, entry, leverage, realized PnL and fees (``position.qty``, ``.size``,
  ``.is_open``, ``.is_long``, ``.is_short``, ``.availQty``, ``.openAvgPx``, ``.lever``,
  ``.pnl``, ``.fee``, the same under ``positions.long|short|net``, ``positions.count``), and the
  resting orders counted (``strategy.open_orders|open_buys|open_sells``, ``rule.open_orders``);
- ``candles`` — a candle series or indicator, of its ``(symbol, interval)``: it moves only
  when a candle of that interval closes;
- ``market`` — prices, the account's figures, unrealized PnL and margins (``price.*``,
  ``account.*``, ``position.upl``, ``.markPx``, ``.im``, …): they may move with every mark;
- ``time`` — ``now``, ages and windows (``position.age``, ``rule.*``, ``history.*``,
  ``strategy.oldest_open_ago``), and other symbols (``symbols.*``).

A value of the last two is **unbounded**: it may differ at every evaluation.

:func:`dependencies` lists, for each rule, the inputs its condition reads and the gates that can
hold it (``enabled``, ``keep_open``, ``cooldown``, ``max_fires``) — the static answer.
:func:`quiet_until` is the dynamic one the backtest's skip uses: given a rule's status at an
evaluation and the values it read then, either "this status cannot change until the book
changes, a candle of these intervals closes or this time comes" (:class:`Quiet`) or ``None``
(evaluate it again). A cooldown or ``max_fires`` gate holds until a time the rule's fires
say. For a condition that was false it evaluates the condition again over **only** the
bounded values it read (``constant``, ``book``, ``candles``, and the rule's own
``rule.fires('W')`` while its activity explains it: the count stands until the oldest fire it
counts leaves the window, as the rule fires no more), refusing every other read: when
that evaluation gives false, the real one gives false too for as long as those values stay the
same — the same function of the same values, whatever the prices do. So ``position.qty == 0
and price.mark < x`` is quiet while a position is held (the first operand decides), and needs
evaluating every time while flat (the price decides).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Any

from botkit.intents import RuleActivity
from botkit.rules.durations import parse_duration
from botkit.rules.firing import RuleStatus
from botkit.rules.model import Rule, Strategy
from botkit.rules.series import INTERVALS, SERIES_FUNCTIONS

__all__ = [
    "FOREVER",
    "RECHECKED",
    "Fresh",
    "Input",
    "Quiet",
    "Recheck",
    "RuleDeps",
    "dependencies",
    "fires_window_ms",
    "input_of",
    "quiet_until",
    "reads_orders",
    "rechecked",
]


class Input(StrEnum):
    """Where a value an expression reads comes from, by how often it can change."""

    CONSTANT = "constant"
    BOOK = "book"
    CANDLES = "candles"
    MARKET = "market"
    TIME = "time"

    @property
    def bounded(self) -> bool:
        """Whether the value stays the same until an event the replay can see (an order,
        fill or setting change; a candle closing)."""
        return self in _BOUNDED


_BOUNDED = frozenset({Input.CONSTANT, Input.BOOK, Input.CANDLES})

_POSITION_BOOK = frozenset(
    {"qty", "size", "is_open", "is_long", "is_short", "availQty", "openAvgPx", "lever",
     "pnl", "fee"}
)  # fmt: skip
"""Position fields that only an execution (or a leverage change) moves."""
_ORDER_COUNTS = frozenset({"open_orders", "open_buys", "open_sells"})
_QUOTED = re.compile(r"""['"]([^'"]*)['"]""")


@functools.lru_cache(maxsize=4096)
def input_of(key: str) -> tuple[Input, frozenset[str]]:
    """The input an environment key (as the compiler names it: ``position.qty@BOTH``,
    ``price.mark``, ``ema(close('15m'), 20)``) reads, and for ``candles`` the intervals it
    names. An unknown key is ``time`` (unbounded): never assumed to stand still."""
    display = key.split("@", 1)[0]
    head = display.split("(", 1)[0]
    if head in SERIES_FUNCTIONS:  # a series value: its intervals are quoted literals
        intervals = frozenset(w for w in _QUOTED.findall(display) if w in INTERVALS)
        return (Input.CANDLES, intervals) if intervals else (Input.TIME, frozenset())
    path = head.split(".")
    root, rest = path[0], path[1:]
    if root == "instrument":
        return Input.CONSTANT, frozenset()
    if root == "positions" and rest and rest[0] in ("long", "short", "net"):
        root, rest = "position", rest[1:]
    if root == "position":
        kind = Input.BOOK if len(rest) == 1 and rest[0] in _POSITION_BOOK else Input.MARKET
        return kind, frozenset()
    if root == "positions":
        return (Input.BOOK if rest == ["count"] else Input.MARKET), frozenset()
    if root == "strategy" and len(rest) == 1 and rest[0] in _ORDER_COUNTS:
        return Input.BOOK, frozenset()
    if root == "rule" and rest == ["open_orders"]:
        return Input.BOOK, frozenset()
    if root in ("price", "account"):
        return Input.MARKET, frozenset()
    return Input.TIME, frozenset()


@functools.lru_cache(maxsize=4096)
def reads_orders(key: str) -> bool:
    """Whether the ``book`` value ``key`` moves with the resting orders as well as with the
    fills and settings (an open order count; a position's ``availQty``, which the closing
    orders resting hold back): a verdict that read none of them holds while only orders come
    and go (:attr:`Quiet.orders`)."""
    path = _unscoped(key).split(".")
    if path == ["position", "availQty"] or path == ["rule", "open_orders"]:
        return True
    return len(path) == 2 and path[0] == "strategy" and path[1] in _ORDER_COUNTS


@dataclass(frozen=True, slots=True)
class RuleDeps:
    """A rule's condition's inputs (environment key → input), the intervals of the candle
    series it reads, and the gates besides the condition that can hold it back."""

    rule: str
    inputs: Mapping[str, Input]
    intervals: frozenset[str]
    gates: tuple[str, ...]

    @property
    def bounded(self) -> bool:
        """Whether every value the condition can read is bounded (see :class:`Input`)."""
        return all(i.bounded for i in self.inputs.values())


def dependencies(strategy: Strategy) -> tuple[RuleDeps, ...]:
    """Each rule's :class:`RuleDeps`, in rule order."""
    out = []
    for rule in strategy.rules:
        names: Iterable[str] = rule.when.names if rule.when is not None else ()
        inputs: dict[str, Input] = {}
        intervals: set[str] = set()
        for key in names:
            kind, words = input_of(key)
            inputs[key] = kind
            intervals |= words
        gates = tuple(
            name
            for name, on in (
                ("enabled", not rule.enabled),
                ("keep_open", rule.keep_open),
                ("cooldown", rule.cooldown_ms > 0),
                ("max_fires", rule.max_fires is not None),
            )
            if on
        )
        out.append(RuleDeps(rule.name, inputs, frozenset(intervals), gates))
    return tuple(out)


RECHECKED = frozenset(
    {
        *(f"price.{name}" for name in (
            "mark", "last", "index", "bid", "ask", "mid", "open_24h", "high_24h", "low_24h",
            "volume_24h", "change_24h", "buy_limit", "sell_limit",
        )),
        *(f"position.{name}" for name in (
            "markPx", "liqPx", "im", "mm", "mgn", "upl", "uplRatio", "mgnRatio",
        )),
        *(f"account.{name}" for name in ("eq", "isoEq", "availMgn", "im", "mm", "mmr", "upl")),
    }
)  # fmt: skip
"""Market values of the strategy's own symbol and account that the backtest's skip reads
again at each cycle, through the very resolvers and reads a cycle's expression context uses
(the ticker's prices, the price band, the position's and the account's figures: a few reads
of the simulator), so that a condition false for a price (an ATR stop under the entry, a take
profit on the unrealized PnL) is checked against the new figures alone instead of running the
whole cycle. Keys are named without their scope (``position.upl@BOTH`` is ``position.upl``;
``positions.long.upl`` too): see :func:`rechecked`."""


@functools.lru_cache(maxsize=4096)
def rechecked(key: str) -> bool:
    """Whether the environment key ``key`` is one of :data:`RECHECKED`."""
    return _unscoped(key) in RECHECKED


def _unscoped(key: str) -> str:
    """``key`` without its scope: ``position.upl@BOTH`` and ``positions.long.upl`` are
    ``position.upl``."""
    display = key.split("@", 1)[0]
    parts = display.split(".")
    if len(parts) == 3 and parts[0] == "positions" and parts[1] in ("long", "short", "net"):
        return f"position.{parts[2]}"
    return display


class Recheck:
    """A condition to evaluate again at each cycle over its bounded values ``known`` (which the
    verdict's book and candle terms keep the same) and the fresh :data:`RECHECKED` values; any
    other read, or an error, counts as "may have changed"."""

    __slots__ = ("fn", "known")

    def __init__(self, fn: Callable[[Mapping[str, Any]], Any], known: Mapping[str, Any]) -> None:
        self.fn = fn
        self.known = dict(known)

    def still_false(self, fresh: Mapping[str, Any]) -> bool:
        """Whether the condition is still false with the :data:`RECHECKED` values read from
        ``fresh`` (a mapping that reads them now, e.g. a cycle's environment)."""
        try:
            return not self.fn(Fresh(self.known, fresh))
        except Exception:  # an unknown value, or a failing expression: evaluate it
            return False

    def false_over(self, bounds: Mapping[str, Any]) -> bool:
        """Whether the condition is false for **every** value of the :data:`RECHECKED` values
        within ``bounds`` (key → an :class:`~botkit.rules.interval.Interval`, or a Decimal that
        stays as it is; a key it cannot bound raises): evaluated once over the intervals, an
        answer is the plain one at every point (see :mod:`botkit.rules.interval`). False when
        that is not proven: a comparison undecided, a key not bounded, an error."""
        try:
            return not self.fn(Fresh(self.known, bounds))
        except Exception:  # undecided, unbounded or failing: not proven
            return False


class Fresh(dict[str, Any]):
    """The bounded values ``known`` of a verdict, and each :data:`RECHECKED` value read from
    ``fresh`` when first asked for (then kept); any other read raises (an unknown value)."""

    __slots__ = ("_fresh",)

    def __init__(self, known: Mapping[str, Any], fresh: Mapping[str, Any]) -> None:
        super().__init__(known)
        self._fresh = fresh

    def __missing__(self, key: str) -> Any:
        if not rechecked(key):
            raise _Unknown(key)
        value = self._fresh[key]
        self[key] = value
        return value


@dataclass(frozen=True, slots=True)
class Quiet:
    """A rule's status stays the same until the book changes (``book``), a candle of one of
    ``intervals_ms`` closes, the time reaches ``until_ms`` (a cooldown or max_fires gate
    opens), or one of ``rechecks`` turns true at the prices of a cycle; none of them: for good
    (a disabled rule, a constant false condition)."""

    book: bool = False
    intervals_ms: frozenset[int] = frozenset()
    until_ms: int | None = None
    rechecks: tuple[Recheck, ...] = ()
    orders: bool = False
    """With ``book``: the status also depends on the resting orders (it read an open order
    count or a position's ``availQty``, or waits on its orders: ``keep_open``); without it only
    a fill or a setting changes it, whatever orders come and go."""

    def __or__(self, other: Quiet) -> Quiet:
        until = self.until_ms
        if until is None or (other.until_ms is not None and other.until_ms < until):
            until = other.until_ms
        return Quiet(
            self.book or other.book,
            self.intervals_ms | other.intervals_ms,
            until,
            self.rechecks + other.rechecks,
            self.orders or other.orders,
        )


FOREVER = Quiet()


class _Unknown(Exception):
    """A value the partial evaluation does not know (unbounded, or not read last time)."""


class _Known(dict[str, Any]):
    """The bounded values of the last evaluation; any other read raises :class:`_Unknown`.
    Records the keys read, in order."""

    __slots__ = ("read",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.read: list[str] = []

    def __getitem__(self, key: str) -> Any:
        self.read.append(key)
        return super().__getitem__(key)

    def __missing__(self, key: str) -> Any:
        raise _Unknown(key)


def quiet_until(
    rule: Rule,
    status: RuleStatus,
    values: Mapping[str, Any],
    activity: RuleActivity | None = None,
    now_ms: int = 0,
    *,
    recheck: bool = False,
) -> Quiet | None:
    """Until when ``rule`` keeps ``status`` (its status at an evaluation at ``now_ms`` that read
    ``values``, environment key → value, with the rule's ``activity``), or None when it may
    change at the next evaluation.

    Sound because, with no fire of the rule in between (a fire needs an evaluation):
    ``disabled`` is fixed by the loaded file; ``keep_open`` holds while the rule's orders rest,
    which only the book changes; ``cooldown`` holds until the last fire plus the cooldown, and
    ``max_fires`` until enough fires have left its window (the gates before them were open and
    stay so: keep_open needs an order of the rule, same_slot a fire); after ``condition_false``
    every gate was open and none can close without a fire (max_fires' window only lets fires
    out), so the status is the condition's, which is the same function of the same values. Any
    other status (fired, declared, nothing to do, an error, warming up) is evaluated again.

    With ``recheck`` a false condition may also have read :data:`RECHECKED` prices: it is then
    quiet on the condition that a :class:`Recheck` over the same bounded values and the new
    prices stays false at each cycle."""
    if status is RuleStatus.DISABLED:
        return FOREVER
    if status is RuleStatus.KEEP_OPEN:
        return Quiet(book=True, orders=True)
    if status is RuleStatus.COOLDOWN:
        last = activity.last_fire_ms if activity is not None else None
        if last is None or not rule.cooldown_ms or last + rule.cooldown_ms <= now_ms:
            return None
        return Quiet(until_ms=last + rule.cooldown_ms)
    if status is RuleStatus.MAX_FIRES:
        limit = rule.max_fires
        if limit is None or activity is None:
            return None
        since = now_ms - limit.per_ms
        fires = activity.fires_within(since, now_ms)
        if len(fires) < limit.count:
            return None
        # the gate holds while the oldest of the newest `count` fires is inside the window
        until = fires[len(fires) - limit.count] + limit.per_ms
        return Quiet(until_ms=until) if until > now_ms else None
    if status is not RuleStatus.CONDITION_FALSE or rule.when is None:
        return None
    when = rule.when
    if when.const is not None:
        return None if when.const else FOREVER
    return _false_condition_quiet(when.fn, values, recheck, activity, now_ms)


_FIRES = re.compile(r"""^rule\.fires\((['"])([^'"]+)\1\)$""")


@functools.lru_cache(maxsize=4096)
def fires_window_ms(key: str) -> int | None:
    """The window of a ``rule.fires('W')`` value (``None`` for any other key)."""
    matched = _FIRES.match(key.split("@", 1)[0])
    if matched is None:
        return None
    try:
        return parse_duration(matched.group(2))
    except ValueError:
        return None


def _fires_until(
    key: str, value: Any, activity: RuleActivity | None, now_ms: int
) -> tuple[bool, int | None]:
    """Whether ``key`` is a ``rule.fires('W')`` value the rule's ``activity`` explains (its
    count of the fires at or after ``now_ms - W`` is ``value``), and until when that count
    stands while the rule does not fire: the oldest of those fires leaves the window after
    ``t + W`` (``None``: none counted, it stands until the rule fires)."""
    window = fires_window_ms(key)
    if window is None or activity is None:
        return False, None
    counted = activity.fires_within(now_ms - window - 1, now_ms)  # at or after now - W
    if value != len(counted):
        return False, None
    return True, (counted[0] + window if counted else None)


def _false_condition_quiet(
    fn: Callable[[Mapping[str, Any]], Any],
    values: Mapping[str, Any],
    recheck: bool,
    activity: RuleActivity | None = None,
    now_ms: int = 0,
) -> Quiet | None:
    """:func:`quiet_until` of a condition that was false over ``values``. A ``rule.fires('W')``
    value the rule's activity explains counts as known until the oldest fire it counts leaves
    the window (the rule fires no more while its condition stays false).

    When every value is bounded the answer is a function of the condition and those values
    alone (no activity, no time, no price): it is kept, by the condition's identity and each
    value with its type (:func:`_bounded_key`), and given again for the same ones (a flat
    position's exits, a held position's entry: the same few values at every cycle that acts)."""
    memo = _bounded_key(fn, values)
    if memo is not None:
        try:
            kept = _BOUNDED_QUIET.get(memo, _MISS)
        except TypeError:  # a value that does not hash: worked out each time
            return _condition_quiet(fn, values, recheck, activity, now_ms)
        if kept is not _MISS:
            return kept  # type: ignore[return-value]
        found = _condition_quiet(fn, values, recheck, activity, now_ms)
        if len(_BOUNDED_QUIET) >= _BOUNDED_QUIET_MAX:
            _BOUNDED_QUIET.clear()
        _BOUNDED_QUIET[memo] = found
        return found
    return _condition_quiet(fn, values, recheck, activity, now_ms)


_BOUNDED_QUIET: dict[tuple[Any, ...], Quiet | None] = {}
""":func:`_false_condition_quiet`'s answers over bounded values only, by :func:`_bounded_key`
(emptied when it reaches :data:`_BOUNDED_QUIET_MAX`: a few per rule and position size)."""
_BOUNDED_QUIET_MAX = 4096
_MISS = object()


def _bounded_key(
    fn: Callable[[Mapping[str, Any]], Any], values: Mapping[str, Any]
) -> tuple[Any, ...] | None:
    """The key of :data:`_BOUNDED_QUIET` for a condition ``fn`` false over ``values``: the
    condition and each (key, type, value, sign), or None when a value is not bounded (a price,
    a ``rule.fires`` count: the answer depends on more than the values). Equal values of one
    type and sign read the same in any expression (Decimal arithmetic and comparisons depend on
    the numbers, not on how they are written; only a zero's sign, which equality ignores, can
    change a power's result), and the answer holds no value."""
    parts: list[Any] = [fn]
    for key, value in values.items():
        if not input_of(key)[0].bounded:
            return None
        parts.append((key, type(value), value, _signed(value)))
    return tuple(parts)


def _signed(value: object) -> bool:
    """Whether ``value`` carries a minus sign: ``-0`` equals ``0``, but a power tells them
    apart (``0 ** -1`` is Infinity, ``-0 ** -1`` -Infinity)."""
    if isinstance(value, Decimal):
        return value.is_signed()
    return isinstance(value, float) and math.copysign(1.0, value) < 0


def _condition_quiet(
    fn: Callable[[Mapping[str, Any]], Any],
    values: Mapping[str, Any],
    recheck: bool,
    activity: RuleActivity | None,
    now_ms: int,
) -> Quiet | None:
    """:func:`_false_condition_quiet`, worked out."""
    known: dict[str, Any] = {}
    prices: dict[str, Any] = {}
    intervals: dict[str, frozenset[str]] = {}
    until: int | None = None
    for key, value in values.items():
        kind, words = input_of(key)
        if kind.bounded:
            known[key] = value
            intervals[key] = words
            continue
        explained, leaves = _fires_until(key, value, activity, now_ms)
        if explained:
            known[key] = value
            intervals[key] = frozenset()
            if leaves is not None and (until is None or leaves < until):
                until = leaves
        elif recheck and rechecked(key):
            prices[key] = value
            intervals[key] = frozenset()
    env = _Known({**known, **prices})
    try:
        holds = bool(fn(env))
    except Exception:  # an unknown value, or a failing expression: evaluate it
        return None
    if holds:  # cannot happen with the same values; never trust it
        return None
    book = orders = False
    read: set[str] = set()
    for key in env.read:
        book = book or input_of(key)[0] is Input.BOOK
        orders = orders or reads_orders(key)
        read |= intervals[key]
    rechecks: tuple[Recheck, ...] = ()
    if prices.keys() & set(env.read):
        # at another price the condition may take another path over the bounded values: the
        # verdict then guards every one of them, not only those this evaluation read
        rechecks = (Recheck(fn, known),)
        for key in known:
            book = book or input_of(key)[0] is Input.BOOK
            orders = orders or reads_orders(key)
            read |= intervals[key]
    return Quiet(
        book,
        frozenset(INTERVALS[w] for w in read),
        until,
        rechecks=rechecks,
        orders=book and orders,
    )
