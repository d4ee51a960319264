"""``make_client(settings)``: the :class:`ExchangeClient` the settings ask for.

``exchange = "live"`` → the network at ``base_url`` with the configured credentials;
``exchange = "sim"`` → the embedded simulator in process (no network), through
``botkit.sim.inprocess.make_transport(settings)``, imported only then. In sim mode the
simulator's default credentials are used when none are set (``settings.credentials()``).

The choice between the live client and the simulator is wiring: it lives here, in the
composition root (docs/architecture.md), so the exchange adapter never imports the simulator.
"""

from __future__ import annotations

import httpx

from botkit.clock import Clock, wall_ms
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.settings import Settings, check_live

__all__ = ["SIM_BASE_URL", "make_client", "sim_transport"]

SIM_BASE_URL = "http://sim.botkit.invalid"
"""The address used with the in-process simulator (never resolved: no socket is opened)."""


def sim_transport(settings: Settings) -> httpx.BaseTransport:
    """The embedded simulator's in-process transport (the simulator is imported only here)."""
    from botkit.sim.inprocess import make_transport

    return make_transport(settings)


def make_client(
    settings: Settings,
    *,
    transport: httpx.BaseTransport | None = None,
    local_clock: Clock = wall_ms,
) -> ExchangeClient:
    """A client for ``settings``; ``transport`` replaces the network (or the simulator)."""
    check_live(settings)
    creds = settings.credentials()
    if transport is None and settings.exchange == "sim":
        transport = sim_transport(settings)
    base_url = settings.base_url or SIM_BASE_URL
    clock = ClockSync(local=local_clock, interval_ms=int(settings.clock_resync_interval * 1000))
    return ExchangeClient(
        base_url,
        key=creds.key,
        secret=creds.secret,
        passphrase=creds.passphrase,
        signing=settings.signing,
        clock=clock,
        transport=transport,
        timeout=settings.request_timeout,
        recv_window=settings.recv_window,
        deadline=settings.request_deadline,
        max_answer_bytes=settings.max_answer_bytes,
    )
