""":func:`~botkit.backtest.bulk.proven_count` with ``least``: a count the caller has no use for
is not searched for.

The driver steps through the candles of a stretch when fewer than ``MIN_BULK`` of them are
proven (a position closed within a few candles of its opening). With ``least``, a first block
that does not prove is followed by one proof of the first ``least`` closes' range; when that
fails too, the answer is ``(n < least, least)`` without the search for the first unproven
close. Otherwise the answer is the one without ``least``.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.backtest.bulk import proven_count
from botkit.rules.deps import Recheck
from botkit.sim.figures import MarkBounds


def _outside(low: Decimal, high: Decimal) -> Recheck:
    """A stop under ``low`` and a take profit over ``high`` on the mark."""

    def fn(env: Mapping[str, Any]) -> Any:
        mark = env["price.mark"]
        return mark < low or mark > high

    return Recheck(fn, {})


def _count(
    closes: list[Decimal], low: Decimal, high: Decimal, least: int, first: int = 16
) -> tuple[tuple[int, int, bool], int]:
    """The answer and the number of ranges proved."""
    asked: list[tuple[Decimal, Decimal]] = []

    def bounds(lo: Decimal, hi: Decimal) -> MarkBounds:
        asked.append((lo, hi))
        return MarkBounds((lo, hi), {}, {})

    found = proven_count(
        [_outside(low, high)],
        bounds,
        "BTC_USDT_PERP",
        lambda i, j: closes[i:j],
        lambda k: min(k, len(closes)),
        first,
        least=least,
    )
    return found, len(asked)


def _tenths(values: list[int]) -> list[Decimal]:
    return [Decimal(v).scaleb(-1) for v in values]


def test_a_stretch_that_ends_within_least_candles_costs_two_proofs_and_no_search() -> None:
    closes = _tenths([1000, 1001, 999, 1002, 1012, *[1000] * 40])  # the take profit at 4
    plain, plain_proofs = _count(closes, Decimal(90), Decimal(101), 0)
    assert plain == (4, 5, True)
    assert plain_proofs > 2  # the search
    found, proofs = _count(closes, Decimal(90), Decimal(101), 8)
    assert found == (0, 8, True)
    assert proofs == 2  # the first block, then the first 8 closes


def test_a_stretch_proven_past_least_is_searched_as_without_it() -> None:
    closes = _tenths([1000, 1001, 999, 1002, 1003, 1000, 1001, 1000, 1004, 1000, 1012, 1000])
    assert _count(closes, Decimal(90), Decimal(101), 8)[0] == (10, 11, True)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    steps=st.lists(st.integers(-6, 6), min_size=1, max_size=80),
    below=st.integers(1, 40),
    above=st.integers(1, 40),
    least=st.integers(1, 20),
    first=st.sampled_from([1, 2, 16]),
)
def test_the_answer_is_the_plain_one_unless_fewer_than_least_are_proven(
    steps: list[int], below: int, above: int, least: int, first: int
) -> None:
    at, values = 1000, []
    for step in steps:
        at += step
        values.append(at)
    closes = _tenths(values)
    low, high = Decimal(1000 - below).scaleb(-1), Decimal(1000 + above).scaleb(-1)
    plain, _ = _count(closes, low, high, 0, first)
    found, _ = _count(closes, low, high, least, first)
    if found != plain:  # fewer than ``least`` proven, by either
        assert found[0] <= plain[0] < least
        assert found[1:] == (least, True)
