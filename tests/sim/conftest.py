"""Shared fixtures: a simulator on a manual clock with static prices (nothing moves unless told)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from botkit.clock import ManualClock
from botkit.sim import SimApi, SimConfig, SimEngine, load_sim_config

T0 = 1_700_000_000_000
BTC = "BTC_USDT_PERP"


def sim_config(**changes: Any) -> SimConfig:
    """The built-in config with static prices, changed by ``section__field=value`` keywords."""
    base = load_sim_config(None)
    prices = base.prices.model_copy(update={"model": "static"})
    updates: dict[str, Any] = {"prices": prices}
    for key, value in changes.items():
        if "__" in key:
            section, field = key.split("__", 1)
            current = updates.get(section, getattr(base, section))
            updates[section] = current.model_copy(update={field: value})
        else:
            updates[key] = value
    return base.model_copy(update=updates)


class Sim:
    """An engine, its wire API and its clock, with short helpers for tests."""

    def __init__(self, config: SimConfig) -> None:
        self.clock = ManualClock(T0)
        self.engine = SimEngine(config, self.clock)
        self.api = SimApi(self.engine)

    def get(self, path: str, **query: str) -> Any:
        return self.api.call("GET", path, query, None)

    def post(self, path: str, body: Any) -> Any:
        return self.api.call("POST", path, {}, body)

    def delete(self, path: str, body: Any) -> Any:
        return self.api.call("DELETE", path, {}, body)

    def place(self, **fields: Any) -> dict[str, Any]:
        """Place one order through the batch endpoint; returns its placement result."""
        order = {"symbol": BTC, "mgnMode": "CROSS", "posSide": "BOTH", **fields}
        order = {k: v for k, v in order.items() if v is not None}
        (result,) = self.post("/v3/trade/orders", [order])
        assert isinstance(result, dict)
        return result

    def mark(self, px: str, symbol: str = BTC) -> None:
        self.engine.set_mark(symbol, Decimal(px))

    def order(self, ord_id: str) -> dict[str, Any]:
        found = self.get("/v3/trade/order/details", ordId=ord_id)
        assert isinstance(found, dict)
        return found

    def balance(self) -> dict[str, Any]:
        found = self.get("/v3/account/balance")
        assert isinstance(found, dict)
        return found

    def positions(self) -> list[dict[str, Any]]:
        found = self.get("/v3/trade/position/opens")
        assert isinstance(found, list)
        return found


@pytest.fixture
def make_sim() -> Callable[..., Sim]:
    def make(**changes: Any) -> Sim:
        return Sim(sim_config(**changes))

    return make


@pytest.fixture
def sim(make_sim: Callable[..., Sim]) -> Sim:
    return make_sim()


TST = "TST_USDT_PERP"


def tst_instrument(**changes: Any) -> Any:
    """A small instrument whose limits are easy to reach: band [90, 110] around mark 100."""
    from botkit.sim.config import InstrumentConfig

    fields: dict[str, Any] = {
        "symbol": TST,
        "tSz": Decimal("0.5"),
        "lotSz": Decimal(2),
        "minSz": Decimal(4),
        "ctVal": Decimal(1),
        "minPx": Decimal(10),
        "maxPx": Decimal(200),
        "marketMaxQty": Decimal(20),
        "limitMaxQty": Decimal(40),
        "maxLever": Decimal(20),
        "lever": Decimal(10),
        "ordPxRange": Decimal("0.1"),
        "mM": Decimal("0.01"),
        "start_px": Decimal(100),
        "volatility": Decimal(0),
        **changes,
    }
    return InstrumentConfig(**fields)


@pytest.fixture
def tst(make_sim: Callable[..., Sim]) -> Sim:
    """BTC plus the TST instrument; 10,000 USDT."""
    base = load_sim_config(None)
    return make_sim(instruments=[base.instruments[0], tst_instrument()])
