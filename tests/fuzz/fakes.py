"""A client whose every answer comes from a handler: the fuzz tests' exchange."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync

__all__ = ["T0", "client_answering"]

T0 = 1_700_000_000_000


def client_answering(handler: Callable[[httpx.Request], httpx.Response]) -> ExchangeClient:
    """A client (clock already in sync, so no /timestamp call) answered by ``handler``."""
    clock = ClockSync(local=lambda: T0, interval_ms=0)
    clock.set_offset(0)
    return ExchangeClient(
        "https://fake.exchange.test",
        key="k",
        secret="s",
        passphrase="p",
        clock=clock,
        transport=httpx.MockTransport(handler),
    )
