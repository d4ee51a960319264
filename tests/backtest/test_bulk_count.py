"""How many candles :func:`~botkit.backtest.bulk.proven_count` proves quiet, and which one it
leaves to the per-candle check: every candle up to the first whose close no provable range of
marks holds, and only that one."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest

from botkit.backtest.bulk import proven_count
from botkit.rules.deps import Recheck
from botkit.sim.figures import MarkBounds


def _above(limit: int) -> Recheck:
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
