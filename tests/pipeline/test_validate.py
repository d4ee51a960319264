"""Rounding and pre-validation: one case per rule and side, boundaries included."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from botkit.exchange.models import (
    InstrumentStatus,
    LimitPrice,
    OrderSide,
    OrderType,
    PositionMode,
    PosSide,
)
from botkit.pipeline import OffTick, floor_to_lot, price_band, round_price_passive, validate_intent
from tests.pipeline.helpers import SYMBOL, instrument, intent

D = Decimal
BUY, SELL = OrderSide.BUY, OrderSide.SELL
LIMIT, MARKET, MAKER = OrderType.LIMIT, OrderType.MARKET, OrderType.LIMIT_MAKER


@pytest.mark.parametrize(
    ("px", "tick", "side", "expected"),
    [
        ("100.05", "0.1", BUY, "100.0"),
        ("100.05", "0.1", SELL, "100.1"),
        ("100.09", "0.1", BUY, "100.0"),
        ("100.01", "0.1", SELL, "100.1"),
        ("100.1", "0.1", BUY, "100.1"),
        ("100.1", "0.1", SELL, "100.1"),
        ("100.74", "0.5", BUY, "100.5"),
        ("100.26", "0.5", SELL, "100.5"),
        ("12.3456", "0.01", BUY, "12.34"),
        ("12.3401", "0.01", SELL, "12.35"),
        ("1234", "5", BUY, "1230"),
        ("1231", "5", SELL, "1235"),
    ],
)
def test_price_rounds_to_tick_in_the_passive_direction(
    px: str, tick: str, side: OrderSide, expected: str
) -> None:
    assert round_price_passive(D(px), D(tick), side) == D(expected)


@pytest.mark.parametrize(
    ("sz", "lot", "expected"),
    [
        ("2.5", "1", "2"),
        ("2", "1", "2"),
        ("0.999", "1", "0"),
        ("1.239", "0.01", "1.23"),
        ("1.23", "0.01", "1.23"),
        ("17", "5", "15"),
    ],
)
def test_size_floors_to_lot(sz: str, lot: str, expected: str) -> None:
    assert floor_to_lot(D(sz), D(lot)) == D(expected)


def test_price_band_from_range_around_mark_narrowed_by_limit_price() -> None:
    inst = instrument(ordPxRange=D("0.05"))
    assert price_band(inst, mark=D(100), limit_price=None) == (D(95), D(105))
    narrowed = LimitPrice(symbol=SYMBOL, buyLmt=D(104), sellLmt=D(96))
    assert price_band(inst, mark=D(100), limit_price=narrowed) == (D(96), D(104))
    assert price_band(inst, mark=None, limit_price=narrowed) == (D(96), D(104))
    assert price_band(inst, mark=None, limit_price=None) == (None, None)


# One row per rule and side: (id, intent kwargs, instrument overrides, context kwargs,
# expected reason codes, expected px, expected sz)
NO_BAND: dict[str, Any] = {"mark": None}
Case = tuple[str, dict[str, Any], dict[str, Any], dict[str, Any], set[str], str | None, str]
CASES: list[Case] = [
    ("limit_buy_ok", {}, {}, {}, set(), "100", "1"),
    ("limit_sell_ok", {"side": SELL}, {}, {}, set(), "100", "1"),
    # instrument status
    ("paused_buy", {}, {"status": InstrumentStatus.PAUSED}, {}, {"instrument_not_open"},
     "100", "1"),
    ("closed_sell", {"side": SELL}, {"status": InstrumentStatus.CLOSED}, {},
     {"instrument_not_open"}, "100", "1"),
    ("cancel_only_buy", {}, {"status": InstrumentStatus.CANCEL_ONLY}, {},
     {"instrument_not_open"}, "100", "1"),
    ("close_only_buy_opening", {}, {"status": InstrumentStatus.CANCEL_CLOSE_ONLY}, {},
     {"instrument_close_only"}, "100", "1"),
    ("close_only_sell_reduce_only", {"side": SELL, "reduce_only": True},
     {"status": InstrumentStatus.CANCEL_CLOSE_ONLY}, {}, set(), "100", "1"),
    ("close_only_buy_reduce_only", {"reduce_only": True},
     {"status": InstrumentStatus.CANCEL_CLOSE_ONLY}, {}, set(), "100", "1"),
    # price presence by type
    ("limit_without_px", {"px": None}, {}, {}, {"px_missing"}, None, "1"),
    ("limit_maker_without_px", {"px": None, "type": MAKER, "side": SELL}, {}, {},
     {"px_missing"}, None, "1"),
    ("market_with_px", {"type": MARKET}, {}, {}, {"px_on_market"}, "100", "1"),
    ("market_buy_ok", {"type": MARKET, "px": None}, {}, {}, set(), None, "1"),
    ("market_sell_ok", {"type": MARKET, "px": None, "side": SELL}, {}, {}, set(), None, "1"),
    ("px_zero", {"px": "0"}, {}, {}, {"px_not_positive"}, "0", "1"),
    # off tick
    ("off_tick_buy_rounds_down", {"px": "100.05"}, {}, {}, set(), "100.0", "1"),
    ("off_tick_sell_rounds_up", {"px": "100.05", "side": SELL}, {}, {}, set(), "100.1", "1"),
    ("off_tick_buy_refused", {"px": "100.05"}, {}, {"off_tick": OffTick.REFUSE},
     {"px_off_tick"}, "100.05", "1"),
    ("off_tick_sell_refused", {"px": "100.05", "side": SELL}, {}, {"off_tick": OffTick.REFUSE},
     {"px_off_tick"}, "100.05", "1"),
    ("on_tick_refuse_mode_ok", {"px": "100.1"}, {}, {"off_tick": OffTick.REFUSE}, set(),
     "100.1", "1"),
    ("buy_px_rounds_to_zero", {"px": "0.05"}, {"minPx": D(0)}, NO_BAND,
     {"px_rounds_to_zero"}, "0.0", "1"),
    # size: lot, zero, min, max by type
    ("buy_size_floored", {"sz": "2.7"}, {}, {}, set(), "100", "2"),
    ("sell_size_floored", {"sz": "2.7", "side": SELL}, {}, {}, set(), "100", "2"),
    ("size_rounds_to_zero", {"sz": "0.5"}, {}, {}, {"sz_rounds_to_zero"}, "100", "0"),
    ("size_zero", {"sz": "0"}, {}, {}, {"sz_not_positive"}, "100", "0"),
    ("size_negative", {"sz": "-1", "side": SELL}, {}, {}, {"sz_not_positive"}, "100", "-1"),
    ("buy_below_min_size", {"sz": "1"}, {"minSz": D(2)}, {}, {"sz_below_min"}, "100", "1"),
    ("sell_at_min_size", {"sz": "2", "side": SELL}, {"minSz": D(2)}, {}, set(), "100", "2"),
    ("limit_at_max", {"sz": "1000"}, {}, {}, set(), "100", "1000"),
    ("limit_over_max", {"sz": "1001", "side": SELL}, {}, {}, {"sz_above_max"}, "100", "1001"),
    ("market_at_max", {"type": MARKET, "px": None, "sz": "500"}, {}, {}, set(), None, "500"),
    ("market_over_max", {"type": MARKET, "px": None, "sz": "501", "side": SELL}, {}, {},
     {"sz_above_max"}, None, "501"),
    ("limit_uses_limit_max_not_market_max", {"sz": "501"}, {}, {}, set(), "100", "501"),
    ("max_zero_means_no_check", {"sz": "5000"}, {"limitMaxQty": D(0)}, {}, set(), "100", "5000"),
    # hard price bounds (no band)
    ("buy_at_min_px", {"px": "1"}, {}, NO_BAND, set(), "1", "1"),
    ("sell_below_min_px", {"px": "0.9", "side": SELL}, {}, NO_BAND, {"px_below_min"}, "0.9", "1"),
    ("buy_at_max_px", {"px": "1000000"}, {}, NO_BAND, set(), "1000000", "1"),
    ("buy_above_max_px", {"px": "1000000.1"}, {}, NO_BAND, {"px_above_max"}, "1000000.1", "1"),
    # band from ordPxRange around the mark (mark 100, range 0.05 → 95..105)
    ("buy_at_band_high", {"px": "105"}, {}, {}, set(), "105", "1"),
    ("buy_above_band", {"px": "105.1"}, {}, {}, {"px_above_band"}, "105.1", "1"),
    ("sell_at_band_low", {"px": "95", "side": SELL}, {}, {}, set(), "95", "1"),
    ("sell_below_band", {"px": "94.9", "side": SELL}, {}, {}, {"px_below_band"}, "94.9", "1"),
    ("buy_below_band", {"px": "94.9"}, {}, {}, {"px_below_band"}, "94.9", "1"),
    ("sell_above_band", {"px": "105.1", "side": SELL}, {}, {}, {"px_above_band"}, "105.1", "1"),
    ("off_tick_sell_rounded_out_of_band", {"px": "105.01", "side": SELL}, {}, {},
     {"px_above_band"}, "105.1", "1"),
    # band from /v3/market/limitPrice
    ("buy_at_buy_limit", {"px": "103"}, {},
     {"limit_price": LimitPrice(symbol=SYMBOL, buyLmt=D(103), sellLmt=D(97))}, set(), "103", "1"),
    ("buy_above_buy_limit", {"px": "103.1"}, {},
     {"limit_price": LimitPrice(symbol=SYMBOL, buyLmt=D(103), sellLmt=D(97))},
     {"px_above_band"}, "103.1", "1"),
    ("sell_at_sell_limit", {"px": "97", "side": SELL}, {},
     {"limit_price": LimitPrice(symbol=SYMBOL, buyLmt=D(103), sellLmt=D(97))}, set(), "97", "1"),
    ("sell_below_sell_limit", {"px": "96.9", "side": SELL}, {},
     {"limit_price": LimitPrice(symbol=SYMBOL, buyLmt=D(103), sellLmt=D(97))},
     {"px_below_band"}, "96.9", "1"),
    # spec 4.3 posSide / mgnMode rules
    ("one_way_long_refused", {"pos_side": PosSide.LONG}, {}, {}, {"pos_side_one_way"}, "100", "1"),
    ("one_way_short_refused", {"pos_side": PosSide.SHORT, "side": SELL}, {}, {},
     {"pos_side_one_way"}, "100", "1"),
    ("hedge_both_refused", {}, {}, {"position_mode": PositionMode.HEDGE}, {"pos_side_hedge"},
     "100", "1"),
    ("hedge_open_long", {"pos_side": PosSide.LONG}, {}, {"position_mode": PositionMode.HEDGE},
     set(), "100", "1"),
    ("hedge_open_short", {"pos_side": PosSide.SHORT, "side": SELL}, {},
     {"position_mode": PositionMode.HEDGE}, set(), "100", "1"),
    ("hedge_close_long", {"pos_side": PosSide.LONG, "side": SELL, "reduce_only": True}, {},
     {"position_mode": PositionMode.HEDGE}, set(), "100", "1"),
    ("hedge_close_short", {"pos_side": PosSide.SHORT, "reduce_only": True}, {},
     {"position_mode": PositionMode.HEDGE}, set(), "100", "1"),
    ("hedge_reduce_only_open_long", {"pos_side": PosSide.LONG, "reduce_only": True}, {},
     {"position_mode": PositionMode.HEDGE}, {"reduce_only_opens"}, "100", "1"),
    ("hedge_reduce_only_open_short", {"pos_side": PosSide.SHORT, "side": SELL,
     "reduce_only": True}, {}, {"position_mode": PositionMode.HEDGE}, {"reduce_only_opens"},
     "100", "1"),
    # client order id
    ("cl_ord_id_too_long", {"cl_ord_id": "x" * 33}, {}, {}, {"cl_ord_id_invalid"}, "100", "1"),
    ("cl_ord_id_bad_char", {"cl_ord_id": "a.b"}, {}, {}, {"cl_ord_id_invalid"}, "100", "1"),
    ("cl_ord_id_at_32", {"cl_ord_id": "x" * 32}, {}, {}, set(), "100", "1"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("kwargs", "inst", "ctx", "codes", "px", "sz"),
    [pytest.param(*case[1:], id=case[0]) for case in CASES],
)
def test_validation_rule(
    kwargs: dict[str, Any],
    inst: dict[str, Any],
    ctx: dict[str, Any],
    codes: set[str],
    px: str | None,
    sz: str,
) -> None:
    context: dict[str, Any] = {"mark": D(100)}
    context.update(ctx)
    checked = validate_intent(intent(**kwargs), instrument(**inst), **context)
    assert {r.code for r in checked.reasons} == codes
    assert checked.ok is (not codes)
    assert checked.px == (None if px is None else D(px))
    assert checked.sz == D(sz)
    if checked.ok:
        assert checked.request is not None
        assert checked.request.px == checked.px
        assert checked.request.sz == checked.sz
    else:
        assert checked.request is None


def test_unknown_symbol_is_refused() -> None:
    checked = validate_intent(intent(symbol="NOPE_PERP"), None)
    assert [r.code for r in checked.reasons] == ["unknown_symbol"]
    assert "NOPE_PERP" in checked.reasons[0].message


def test_every_failing_rule_gives_its_own_reason() -> None:
    bad = intent(px="100.05", sz="0.5", pos_side=PosSide.LONG, cl_ord_id="bad id!")
    checked = validate_intent(
        bad,
        instrument(status=InstrumentStatus.PAUSED),
        mark=D(200),
        off_tick=OffTick.REFUSE,
    )
    assert [r.code for r in checked.reasons] == [
        "instrument_not_open",
        "pos_side_one_way",
        "cl_ord_id_invalid",
        "px_off_tick",
        "sz_rounds_to_zero",
    ]
    assert all(" — " in r.message for r in checked.reasons), "each reason says what to do"


def test_rounding_notes_say_what_changed() -> None:
    checked = validate_intent(intent(side=SELL, px="100.05", sz="2.5"), instrument(), mark=D(100))
    assert [str(n) for n in checked.notes] == [
        "px 100.05 -> 100.1 (step 0.1)",
        "sz 2.5 -> 2 (step 1)",
    ]
    assert checked.request is not None
    assert checked.request.to_wire()["px"] == "100.1"
    assert checked.request.to_wire()["sz"] == "2"
