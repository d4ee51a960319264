"""Client order ids: deterministic, exchange-safe, attributable."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.rules import belongs_to, client_order_id, parse_client_order_id

_ALLOWED = re.compile(r"[A-Za-z0-9_-]{1,32}")
_names = st.text(min_size=1, max_size=64)


@given(_names, _names, st.integers(0, 10**12), st.integers(0, 199))
def test_id_is_short_safe_and_parses_back(strategy: str, rule: str, slot: int, leg: int) -> None:
    cl = client_order_id(strategy, rule, slot, leg)
    assert _ALLOWED.fullmatch(cl)
    parsed = parse_client_order_id(cl)
    assert parsed is not None
    assert (parsed.slot, parsed.leg) == (slot, leg)
    assert belongs_to(cl, strategy)
    assert belongs_to(cl, strategy, rule)


def test_same_decision_gives_same_id() -> None:
    assert client_order_id("s", "r", 123, 4) == client_order_id("s", "r", 123, 4)


@pytest.mark.parametrize(
    ("other"),
    [("s2", "r", 123, 4), ("s", "r2", 123, 4), ("s", "r", 124, 4), ("s", "r", 123, 5)],
)
def test_any_part_changes_the_id(other: tuple[str, str, int, int]) -> None:
    assert client_order_id("s", "r", 123, 4) != client_order_id(*other)


def test_order_of_another_strategy_or_rule_does_not_belong() -> None:
    cl = client_order_id("alpha", "buy", 10, 0)
    assert not belongs_to(cl, "beta")
    assert not belongs_to(cl, "alpha", "sell")


@pytest.mark.parametrize("foreign", ["", "manual-order-1", "123456789012345678", "bkXYZ"])
def test_foreign_ids_do_not_parse(foreign: str) -> None:
    assert parse_client_order_id(foreign) is None
    assert not belongs_to(foreign, "alpha")


@pytest.mark.parametrize(("slot", "leg", "word"), [(-1, 0, "slot"), (0, -1, "leg")])
def test_negative_slot_or_leg_is_refused(slot: int, leg: int, word: str) -> None:
    with pytest.raises(ValueError, match=word):
        client_order_id("s", "r", slot, leg)


def test_id_shape_is_documented() -> None:
    # bk + 6 (strategy hash) + 4 (rule hash) + "-" + slot in base 36 + "-" + leg in base 36
    cl = client_order_id("btc-dip-ladder", "ladder-on-dip", 28_333_333, 11)
    assert cl == "bklmfrzw2l7e-gva51-b"


def _base36(value: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        value, digit = divmod(value, 36)
        out = digits[digit] + out
        if not value:
            return out


@given(
    st.sampled_from(["btc-dip-ladder", "s", "x" * 40]),
    st.sampled_from(["rungs", "r"]),
    st.integers(min_value=0, max_value=36**7),
    st.integers(min_value=0, max_value=400),
)
def test_a_kept_id_is_its_plain_formula_whatever_was_asked_before(
    strategy: str, rule: str, generation: int, rung: int
) -> None:
    """The kept ids' parts are kept per strategy, rule and generation: the id is still the
    formula's, for a generation or rung asked before or not, and it parses back."""
    from botkit.rules.ids import kept_order_id, rule_tag, strategy_tag

    plain = f"bk{strategy_tag(strategy)}{rule_tag(rule)}_{_base36(generation)}_{_base36(rung)}"
    for _ in range(2):  # the second time from what was kept
        if len(plain) > 32:
            with pytest.raises(ValueError, match="longer than 32"):
                kept_order_id(strategy, rule, generation, rung)
            continue
        assert kept_order_id(strategy, rule, generation, rung) == plain
        parsed = parse_client_order_id(plain)
        assert parsed is not None
        assert parsed.kept
        assert (parsed.slot, parsed.leg) == (generation, rung)
