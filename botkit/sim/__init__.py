"""botkit.sim: the embedded paper exchange (engine, wire API, in-process port).

``SimEngine`` holds the exchange's semantics (instruments, prices, orders, matching, accounts,
history) on an injected clock (:class:`botkit.clock.Clock`: a ``WallClock`` or a
``ManualClock``); ``SimApi`` is its wire view, one call per REST request; ``SimPort`` implements
:class:`~botkit.exchange.port.ExchangePort` in process for the backtest. The HTTP face (auth,
faults, transport, server) lives in the ``http``/``auth``/``faults``/``inprocess``/``server``
modules.
"""

from botkit.sim.api import SimApi, SimError
from botkit.sim.config import (
    ApiKeyConfig,
    AuthConfig,
    InstrumentConfig,
    SimConfig,
    load_sim_config,
    parse_sim_config,
)
from botkit.sim.engine import SimEngine
from botkit.sim.port import SimPort

__all__ = [
    "ApiKeyConfig",
    "AuthConfig",
    "InstrumentConfig",
    "SimApi",
    "SimConfig",
    "SimEngine",
    "SimError",
    "SimPort",
    "load_sim_config",
    "parse_sim_config",
]
