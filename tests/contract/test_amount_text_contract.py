"""The simulator reads an order's amounts as a strict exchange does: the *text* of ``sz`` and
``px`` must be plain digits with at most the decimals ``lotSz`` / ``tSz`` allow (on by default:
``[orders] strict_text``). Per-order answer: code 400, the order's own result.

BTC_USDT_PERP: tSz 0.1, lotSz 1, mark 60000 (band 57000 .. 63000).
"""

from __future__ import annotations

from typing import Any

import pytest

from botkit.sim import codes
from botkit.sim.config import OrderRulesConfig, SimConfig
from tests.contract.conftest import Raw, static_config, with_instrument

BTC = "BTC_USDT_PERP"


def body(sz: str, px: str | None = "59000.5", cl: str = "t-1") -> dict[str, Any]:
    order: dict[str, Any] = {
        "symbol": BTC,
        "side": "BUY",
        "mgnMode": "CROSS",
        "posSide": "BOTH",
        "type": "LIMIT" if px is not None else "MARKET",
        "sz": sz,
        "clOrdId": cl,
    }
    if px is not None:
        order["px"] = px
    return order


def place(raw: Raw, order: dict[str, Any]) -> dict[str, Any]:
    answer = raw("POST", "/v3/trade/orders", [order])
    assert answer.json()["code"] == 200
    (result,) = answer.json()["data"]
    assert isinstance(result, dict)
    return result


@pytest.mark.parametrize(
    ("sz", "px", "fragment"),
    [
        ("2.0", "59000.5", "sz '2.0' has 1 decimal(s); lotSz 1 allows 0"),
        ("4.00", "59000.5", "sz '4.00' has 2 decimal(s)"),
        ("2E+0", "59000.5", "sz '2E+0' is not a plain decimal number"),
        ("2", "59000.50", "px '59000.50' has 2 decimal(s); tSz 0.1 allows 1"),
        ("2", "5.90005E+4", "px '5.90005E+4' is not a plain decimal number"),
        ("2", "+59000.5", "not a plain decimal number"),
        ("2.0", None, "sz '2.0' has 1 decimal(s)"),
    ],
)
def test_amount_text_beyond_the_step_is_refused_with_400(
    raw: Raw, sz: str, px: str | None, fragment: str
) -> None:
    result = place(raw, body(sz, px))
    assert (result["code"], result["ordId"]) == (codes.BAD_PARAM, ""), result
    assert fragment in result["msg"]


@pytest.mark.parametrize(("sz", "px"), [("2", "59000.5"), ("3", "59000"), ("1", None)])
def test_amount_text_within_the_step_is_accepted(raw: Raw, sz: str, px: str | None) -> None:
    assert place(raw, body(sz, px))["code"] == 200


@pytest.mark.parametrize(
    "sim_config", [with_instrument(BTC, tSz="0.50", lotSz="0.010", minSz="0.010")], indirect=True
)
def test_the_step_counts_by_its_normalized_decimals(raw: Raw) -> None:
    # tSz 0.50 allows one decimal, lotSz 0.010 two
    assert place(raw, body("0.25", "59000.5", "a"))["code"] == 200
    refused = place(raw, body("0.250", "59000.5", "b"))
    assert refused["code"] == codes.BAD_PARAM
    assert "lotSz 0.010 allows 2" in refused["msg"]
    assert "tSz 0.50 allows 1" in place(raw, body("1", "59000.50", "c"))["msg"]


LENIENT: SimConfig = static_config(orders=OrderRulesConfig(strict_text=False))


@pytest.mark.parametrize("sim_config", [LENIENT], indirect=True)
def test_strict_text_can_be_turned_off(raw: Raw) -> None:
    assert place(raw, body("2.0", "59000.50"))["code"] == 200
