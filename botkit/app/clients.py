"""``make_client(settings)``: the :class:`ExchangeClient` the settings ask for.

``exchange = "live"`` → the network at ``base_url`` with the configured credentials;
``exchange = "sim"`` → the embedded simulator in process (no network), through
``botkit.sim.inprocess.make_transport(settings)``, imported only then. In sim mode the
simulator's default credentials are used when none are set (``settings.credentials()``), and
the paper account lives in its state file (``settings.paper_state_file()``: ``paper.sqlite``
beside the journal): ``paper="hold"`` (commands that trade: ``run``, ``plan``, ``cancel``,
``flatten``) holds it — loaded at start, every change saved before its answer leaves, one
process at a time — and ``paper="read"`` (``exchange``, ``check``, ``data fetch``) reads a copy
without holding it, so they work while the service runs.

The choice between the live client and the simulator is wiring: it lives here, in the
composition root (docs/architecture.md), so the exchange adapter never imports the simulator.
"""

from __future__ import annotations

from typing import Literal

import httpx

from botkit.clock import NowMs, wall_ms
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.settings import Settings, check_live

__all__ = ["SIM_BASE_URL", "Paper", "make_client", "sim_transport"]

SIM_BASE_URL = "http://sim.botkit.invalid"
"""The address used with the in-process simulator (never resolved: no socket is opened)."""


Paper = Literal["hold", "read"]


def sim_transport(settings: Settings, *, paper: Paper = "hold") -> httpx.BaseTransport:
    """The embedded simulator's in-process transport on the paper account of ``settings``,
    held or read (the simulator is imported only here)."""
    from botkit.sim.inprocess import make_transport

    return make_transport(settings, hold=paper == "hold")


def make_client(
    settings: Settings,
    *,
    transport: httpx.BaseTransport | None = None,
    local_clock: NowMs = wall_ms,
    paper: Paper = "hold",
) -> ExchangeClient:
    """A client for ``settings``; ``transport`` replaces the network (or the simulator);
    ``paper``: hold the paper account (sim) or only read a copy of it."""
    check_live(settings)
    creds = settings.credentials()
    if transport is None and settings.exchange == "sim":
        transport = sim_transport(settings, paper=paper)
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
