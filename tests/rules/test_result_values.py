"""A rule result's ``values`` (and ``inputs``) are what the rule had read when it was done.

Results read their values off the evaluation's environment only when asked, after every rule
has run. Later rules may have read more by then; an earlier result must still show exactly
what it had read — the same tuple as the rule evaluated last (nothing read after it), whenever
and in whatever order the results are read. Reading the values never reads the snapshot; a
deferred snapshot part that cannot be read while the rules run raises out of ``evaluate``.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.errors import ReadFailed, ServerUnavailable
from botkit.intents import OrderIntent
from botkit.rules import RuleResult, RuleStatus, evaluate
from botkit.rules.model import Strategy
from botkit.snapshot import Part, Snapshot
from tests.reads import SnapshotReads
from tests.rules.helpers import NOW, position, snapshot, strategy

D = Decimal

TERMS = [
    "position.qty == 0",
    "position.qty != 0",
    "price.mark > 1",
    "price.mark < 1",
    "account.availMgn > 100",
    "price.high_24h > price.mark",
    "strategy.open_buys > 0",
    "price.buy_limit > 0",  # not in the snapshot: the rule's result is an error
    "rule.last_fire_ago > 0",
]
ACTIONS = [
    "    cancel: {}\n",
    "    place:\n      ladder: {side: BUY, count: 2, from_px: 10, step_px: 1,"
    " sz: 1 + i + account.eq * 0}\n",
]


@st.composite
def rules(draw: st.DrawFn) -> str:
    text = ""
    for k in range(draw(st.integers(1, 5))):
        terms = draw(st.lists(st.sampled_from(TERMS), min_size=1, max_size=3))
        when = f" {draw(st.sampled_from(['and', 'or']))} ".join(terms)
        text += f"  - name: r{k}\n    when: {when}\n{draw(st.sampled_from(ACTIONS))}"
    return text


def alone(s: Strategy, k: int) -> RuleResult:
    """Rule ``k``'s result when it is the last rule evaluated (nothing read after it)."""
    last = dataclasses.replace(s, rules=s.rules[: k + 1])
    return evaluate(last, snapshot(positions=held), {}, NOW).results[k]


held = [position("2")]


@settings(max_examples=200, deadline=None)
@given(text=rules(), data=st.data())
def test_each_result_shows_what_its_rule_had_read_whatever_came_after(
    text: str, data: st.DataObject
) -> None:
    s = strategy(text)
    results = evaluate(s, snapshot(positions=held), {}, NOW).results
    order = data.draw(st.permutations(range(len(results))))
    for k in order:
        expected = alone(s, k)
        assert results[k].values == expected.values
        assert results[k].inputs == expected.inputs
        assert results[k] == expected


def test_a_result_read_after_later_rules_read_more_shows_only_its_own_reads() -> None:
    s = strategy(
        "  - name: a\n    when: position.qty == 0 and price.mark > 1\n    cancel: {}\n"
        "  - name: b\n    when: price.mark < 1 and account.availMgn > 0\n    cancel: {}\n"
        "  - name: c\n    when: position.qty == 0 or price.mark < 1\n    cancel: {}\n"
    )
    a, b, c = evaluate(s, snapshot(positions=held), {}, NOW).results
    assert c.values == (("position.qty", D(2)), ("price.mark", D(60000)))
    assert b.values == (("price.mark", D(60000)),)
    assert a.values == (("position.qty", D(2)),)  # price.mark was read later, by b
    assert a.inputs == {"position.qty": "2"}


def test_a_ladder_index_is_no_input_and_what_a_rung_reads_is() -> None:
    s = strategy(
        "  - name: l\n    when: position.qty == 0\n    place:\n"
        "      ladder: {side: BUY, count: 2, from_px: 10, step_px: 1, sz: i + account.eq / 1000}\n"
        "  - name: after\n    when: account.eq < 0\n    cancel: {}\n"
    )
    fired, after = evaluate(s, snapshot(avail="2000"), {}, NOW).results
    assert fired.status is RuleStatus.FIRED
    assert [o.sz for o in fired.intents if isinstance(o, OrderIntent)] == [D(2), D(3)]
    assert fired.inputs == {"position.qty": "0", "account.eq": "2000"}
    assert after.values == (("account.eq", D(2000)),)


def test_deferred_values_make_the_same_value_as_the_constructor() -> None:
    s = strategy(
        "  - name: a\n    when: price.mark < 1\n    cancel: {}\n"
        "  - name: b\n    when: price.buy_limit > 0\n    cancel: {}\n"
    )
    for result in evaluate(s, snapshot(), {}, NOW).results:
        made = RuleResult(result.rule, result.status, result.reason, result.intents, result.values)
        assert type(result) is RuleResult
        assert result.values is result.values  # read once, then kept
        for other in (
            made,
            pickle.loads(pickle.dumps(result)),  # noqa: S301 - our own bytes
            copy.copy(result),
            copy.deepcopy(result),
        ):
            assert other == result
            assert hash(other) == hash(result)
            assert repr(other) == repr(result)
        with pytest.raises(AttributeError):
            result.values = ()  # type: ignore[misc]
        with pytest.raises(AttributeError, match="'RuleResult' object has no attribute 'x'"):
            result.x  # type: ignore[attr-defined]  # noqa: B018


def test_values_first_read_through_equality_pickling_or_a_copy_are_the_same() -> None:
    s = strategy("  - name: a\n    when: position.qty == 0 and price.mark < 1\n    cancel: {}\n")
    ways: list[Callable[[RuleResult], object]] = [
        lambda r: r == RuleResult(r.rule, r.status, r.reason, r.intents, ()),
        hash,
        lambda r: pickle.loads(pickle.dumps(r)).values,  # noqa: S301 - our own bytes
        lambda r: copy.copy(r).values,
        lambda r: copy.deepcopy(r).values,
        lambda r: r.inputs,
    ]
    for first in ways:
        (result,) = evaluate(s, snapshot(), {}, NOW).results
        first(result)
        assert result.values == (("position.qty", D(0)), ("price.mark", D(60000)))


@pytest.mark.parametrize("failing", ["positions", "tickers", "balance"])
def test_a_deferred_part_that_cannot_be_read_raises_out_of_evaluate(failing: str) -> None:
    s = strategy(
        "  - name: a\n    when: position.qty == 0 or price.mark > 1\n    cancel: {}\n"
        "  - name: b\n    when: account.availMgn < 0\n    cancel: {}\n"
    )
    parts = SnapshotReads(
        snapshot(positions=held), Part(failing), ServerUnavailable(f"{failing}: 503")
    )
    deferred = Snapshot.deferred(NOW, snapshot().instruments, parts)
    with pytest.raises(ReadFailed, match=f"{failing}: 503") as raised:
        evaluate(s, deferred, {}, NOW)
    assert raised.value.part == failing
    assert parts.calls[-1] == failing
