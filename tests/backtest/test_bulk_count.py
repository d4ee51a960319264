"""How many candles :func:`~botkit.backtest.bulk.proven_count` proves quiet, and which one it
leaves to the per-candle check: every candle up to the first whose close no provable range of
marks holds, and only that one."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from botkit.backtest.bulk import MarkRange, proven_count
from botkit.rules.deps import Recheck
from botkit.rules.interval import Interval
from botkit.sim.figures import MarkBounds


def _above(limit: int | Decimal) -> Recheck:
    """A take profit on the mark: true once the mark is above ``limit``."""

    def fn(env: Mapping[str, Any]) -> Any:
        return env["price.mark"] > Decimal(limit)

    return Recheck(fn, {})


def _count(closes: list[float], limit: int = 100, room: int | None = None) -> tuple[int, int, bool]:
    values = [Decimal(str(c)) for c in closes]
    asked: list[tuple[Decimal, Decimal]] = []

    def bounds(lo: Decimal, hi: Decimal) -> MarkBounds:
        asked.append((lo, hi))
        return MarkBounds((lo, hi), {}, {})

    total = len(values) if room is None else room
    return proven_count(
        [_above(limit)],
        bounds,
        "BTC_USDT_PERP",
        lambda i, j: values[i:j],
        lambda k: min(k, total),
    )


@pytest.mark.parametrize(
    ("closes", "expected"),
    [
        ([90] * 20 + [101] + [90] * 40, (20, 21, True)),  # the take profit's candle alone
        ([90] * 3 + [101] + [90] * 40, (3, 4, True)),  # inside the first block
        ([101] + [90] * 40, (0, 1, True)),
        ([90, 95, 99, 92, 100, 97] * 10 + [100.5], (60, 61, True)),  # closes up to the limit
        ([90] * 50, (50, 50, True)),  # the room ends first
    ],
)
def test_every_candle_up_to_the_first_unproven_close_is_counted_and_only_it_is_left(
    closes: list[float], expected: tuple[int, int, bool]
) -> None:
    assert _count(closes) == expected


def test_a_close_back_inside_the_proven_range_after_a_wider_one_is_counted() -> None:
    """Closes wander inside [90, 99] then reach 99.5 (the range grows by it) and come back:
    all counted until the first close over 100."""
    closes = [90, 99, 95] * 10 + [99.5, 91, 93] * 5 + [100.5, 90]
    assert _count(closes) == (45, 46, True)


def _below(limit: Decimal) -> Recheck:
    """A stop on the mark: true once the mark is below ``limit``."""

    def fn(env: Mapping[str, Any]) -> Any:
        return env["price.mark"] < Decimal(limit)

    return Recheck(fn, {})


def _dip(fraction: str) -> Recheck:
    """A dip under the 24h high: true once the mark is below ``high_24h * fraction``."""

    def fn(env: Mapping[str, Any]) -> Any:
        return env["price.mark"] < env["price.high_24h"] * Decimal(fraction)

    return Recheck(fn, {})


def _unbounded_after(limit: Decimal) -> Recheck:
    """Reads a value no mark bounds (the bid) once the mark may be above ``limit``."""

    def fn(env: Mapping[str, Any]) -> Any:
        return env["price.mark"] > Decimal(limit) and env["price.bid"] > 0

    return Recheck(fn, {})


def _same(value: Interval) -> Interval:
    return value


def _plain_count(
    rechecks: list[Recheck],
    closes: list[Decimal],
    tops: list[Decimal],
    high_now: Decimal,
    room: int,
) -> tuple[int, int]:
    """The count the docstring states, one range at a time: every candle ``k`` up to the
    first whose range of closes ``0..k`` (with the 24h high up to the tops ``0..k``) is not
    proven; that one is left."""
    for k in range(room):
        lo, hi = min(closes[: k + 1]), max(closes[: k + 1])
        high = Interval(lo, max(high_now, *tops[: k + 1], lo))
        env = MarkRange(
            MarkBounds((lo, hi), {}, {}), "BTC_USDT_PERP", functools.partial(_same, high)
        )
        if not all(r.false_over(env) for r in rechecks):
            return k, k + 1
    return room, room


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(st.integers(-6, 6), min_size=1, max_size=120),
    wicks=st.lists(st.integers(0, 12), min_size=120, max_size=120),
    kinds=st.lists(st.sampled_from(["above", "below", "dip", "unbounded"]), max_size=3),
    offsets=st.lists(st.integers(1, 60), min_size=3, max_size=3),
    high_now=st.integers(1000, 1040),
    room_cut=st.integers(0, 130),
    first=st.sampled_from([1, 2, 16]),
)
def test_the_count_is_the_first_range_not_proven_whatever_the_closes(
    steps: list[int],
    wicks: list[int],
    kinds: list[str],
    offsets: list[int],
    high_now: int,
    room_cut: int,
    first: int,
) -> None:
    """Random walks of closes (tenths around 100), random tops above them and random take
    profits, stops, dips under the 24h high and rechecks reading an unbounded value near
    them: the count is every candle up to the first whose range from the start is not
    proven, that one left — whether the proofs go block by block, by bisection or one close
    at a time (the ranges only grow, so it is the count of growing them a close at a
    time)."""
    closes: list[Decimal] = []
    at = 1000
    for step in steps:
        at += step
        closes.append(Decimal(at).scaleb(-1))
    tops = [c + Decimal(w).scaleb(-1) for c, w in zip(closes, wicks, strict=False)]
    made = {
        "above": lambda off: _above(Decimal(1000 + off).scaleb(-1)),
        "below": lambda off: _below(Decimal(1000 - off).scaleb(-1)),
        "dip": lambda off: _dip(f"0.{1000 - off:03d}"),
        "unbounded": lambda off: _unbounded_after(Decimal(1000 + off).scaleb(-1)),
    }
    rechecks = [made[kind](off) for kind, off in zip(kinds, offsets, strict=False)]
    total = min(room_cut, len(closes))
    now = Decimal(high_now).scaleb(-1)

    def bounds(lo: Decimal, hi: Decimal) -> MarkBounds:
        return MarkBounds((lo, hi), {}, {})

    good, bad, bounded = proven_count(
        rechecks,
        bounds,
        "BTC_USDT_PERP",
        lambda i, j: closes[i:j],
        lambda k: min(k, total),
        first,
        high_now=now,
        tops=lambda i, j: tops[i:j],
    )
    assert (good, bad) == _plain_count(rechecks, closes, tops, now, total)
    if "unbounded" not in kinds:
        assert bounded
