"""``keeps_all`` (the quiet skip's keep check, answered without the rule's orders sent or a
decision built) says what :func:`reconcile` says of the same rung facts: nothing but keeps, or
a change — or None, only when the re-placements of the last minute decide."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.exchange.models import OpenOrder
from botkit.intents import DeclaredOrder, KeepPolicy
from botkit.pipeline.desired import FillFact, keeps_all, reconcile
from tests.pipeline.test_desired import SLOT, kid, want
from tests.rules.helpers import BTC, NOW, SYMBOL, open_order


def _changes(
    declared: list[DeclaredOrder],
    resting: list[OpenOrder],
    policy: KeepPolicy,
    sent: tuple[tuple[int, str], ...] = (),
    filled: FillFact | None = None,
) -> bool:
    diff = reconcile(
        strategy="test", rule="r", symbol=SYMBOL, declared=declared, policy=policy,
        resting=resting, sent=sent, now_ms=NOW, slot=SLOT, instrument=BTC,
        filled=lambda _id: filled, explain=False,
    )  # fmt: skip
    return bool(diff.changes)


_SENT = st.lists(
    st.tuples(st.integers(0, 90_000), st.integers(0, 5), st.integers(0, 8)), max_size=6
).map(lambda rows: tuple(sorted((NOW - ago, kid(rung, SLOT - 9 + gen)) for ago, rung, gen in rows)))


@given(
    wanted=st.lists(st.tuples(st.integers(0, 5), st.integers(-300, 300)), max_size=5),
    rested=st.lists(
        st.tuples(
            st.integers(0, 6),
            st.integers(-300, 300),
            st.integers(-5_000, 120_000),
            st.sampled_from(["kept", "placed", "foreign", "sell", "size"]),
        ),
        max_size=6,
    ),
    tolerance=st.sampled_from([Decimal(0), Decimal(2), Decimal(10), Decimal(25)]),
    ticks=st.booleans(),
    min_rest=st.sampled_from([0, 1, 30_000, 60_000]),
    max_replacements=st.sampled_from([None, 0, 1, 3]),
    refill=st.sampled_from([None, 0, 30_000]),
    sent=_SENT,
    fill_ago=st.sampled_from([None, 10_000, 90_000]),
)
def test_keeps_all_says_what_reconcile_decides(
    wanted: list[tuple[int, int]],
    rested: list[tuple[int, int, int, str]],
    tolerance: Decimal,
    ticks: bool,
    min_rest: int,
    max_replacements: int | None,
    refill: int | None,
    sent: tuple[tuple[int, str], ...],
    fill_ago: int | None,
) -> None:
    policy = KeepPolicy(
        tolerance, tolerance_ticks=ticks, refill_ms=refill, min_rest_ms=min_rest,
        max_replacements=max_replacements,
    )  # fmt: skip
    declared = [want(rung, str(Decimal(59000) + Decimal(d) / 10)) for rung, d in wanted]
    resting = []
    for rung, d, age, kind in rested:
        cl_ord_id = {
            "placed": f"bk-test-placed-{rung}",  # not a botkit id: a stray
            "foreign": "x" * 8,
        }.get(kind, kid(rung))
        fields: dict[str, Any] = {"side": "SELL"} if kind == "sell" else {}
        if kind == "size":
            fields["sz"] = Decimal(2)
        px = str(Decimal(59000) + Decimal(d) / 10)
        resting.append(open_order(cl_ord_id, px=px, cTime=NOW - age, **fields))
    filled = None if fill_ago is None else FillFact(NOW - fill_ago, Decimal(59000))
    known = keeps_all(declared, policy, resting, NOW, BTC)
    changes = _changes(declared, resting, policy, sent, filled)
    if known is None:  # only the minute's re-placements may decide
        assert max_replacements is not None
    else:
        assert known is not changes
    # whatever was sent and filled: the same answer with none of it
    assert known in (None, not _changes(declared, resting, policy))


def _ladder(*drifted: int) -> list[OpenOrder]:
    """Three rungs resting at their declared prices, ``drifted`` ones 0.17 % off."""
    return [
        open_order(kid(r), px="59100" if r in drifted else "59000", cTime=NOW - 30_000)
        for r in range(3)
    ]


_DECLARED = [want(r, "59000") for r in range(3)]


def test_every_rung_within_tolerance_is_kept() -> None:
    assert keeps_all(_DECLARED, KeepPolicy(), _ladder(), NOW, BTC) is True
    assert not _changes(_DECLARED, _ladder(), KeepPolicy())


@pytest.mark.parametrize(
    ("min_rest", "kept"),
    [(30_001, True), (30_000, False), (29_999, False), (0, False)],
)
def test_a_drifted_rung_is_kept_only_while_younger_than_min_rest(min_rest: int, kept: bool) -> None:
    # the rung rested exactly 30 s: younger than min_rest only when min_rest is over 30 s
    policy = KeepPolicy(min_rest_ms=min_rest)
    assert keeps_all(_DECLARED, policy, _ladder(1), NOW, BTC) is kept
    assert _changes(_DECLARED, _ladder(1), policy) is not kept


def test_the_re_placements_of_the_minute_decide_under_max_replacements() -> None:
    policy = KeepPolicy(max_replacements=1)
    assert keeps_all(_DECLARED, policy, _ladder(1), NOW, BTC) is None
    # a change elsewhere decides at once
    assert keeps_all(_DECLARED, policy, _ladder(1)[:2], NOW, BTC) is False


@pytest.mark.parametrize(
    "resting",
    [
        _ladder()[:2],  # a declared rung with nothing resting: placed
        [*_ladder(), open_order(kid(5))],  # a rung not declared: cancelled
        [*_ladder(), open_order(kid(2, SLOT - 2))],  # a rung resting twice
        [*_ladder(), open_order("bk-test-placed-0")],  # an order that is not a rung
        [*_ladder()[:2], open_order(kid(2), side="SELL")],  # a rung that changed side
    ],
    ids=["missing", "undeclared", "twice", "stray", "side"],
)
def test_any_change_is_seen(resting: list[OpenOrder]) -> None:
    assert keeps_all(_DECLARED, KeepPolicy(), resting, NOW, BTC) is False
    assert _changes(_DECLARED, resting, KeepPolicy())


def test_a_rung_with_nothing_resting_is_a_change_even_when_its_refill_waits() -> None:
    policy = KeepPolicy(refill_ms=None)
    filled = FillFact(NOW - 10_000, Decimal(59000))
    resting = _ladder()[:2]
    assert keeps_all(_DECLARED, policy, resting, NOW, BTC) is False
    assert _changes(_DECLARED, resting, policy, ((NOW - 20_000, kid(2)),), filled)
