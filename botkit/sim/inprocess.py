"""The simulator in process: an httpx transport over :class:`SimHttp`, and the bundle that builds
engine, wire API, HTTP core, fault plan and transport in one call.

:class:`SimTransport` hands each request straight to :meth:`SimHttp.handle` — no sockets — so
the real :class:`~botkit.live.client.ExchangeClient` (signing, error mapping and all) runs
against the paper exchange. A fault's delay is waited with the injected ``sleep``; a delay past
the request's read timeout waits the timeout and raises :class:`httpx.ReadTimeout`; a dropped
connection raises :class:`httpx.RemoteProtocolError` *after* the engine processed the request
(``drop_after``) or without it (``drop_before``). A dripped or padded answer (``drip``,
``huge``) is a streamed body made as it is read, the drip's pauses waited with ``sleep``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from botkit.sim.api import SimApi
from botkit.sim.clock import SimClock, WallClock
from botkit.sim.config import ApiKeyConfig, SimConfig, load_sim_config
from botkit.sim.engine import SimEngine
from botkit.sim.faults import FaultPlan
from botkit.sim.http import SimHttp, SimResponse

if TYPE_CHECKING:
    from botkit.settings import Settings

__all__ = ["SimHandle", "SimTransport", "make_sim", "make_transport", "sim_config_for"]

_DEFAULT_SIM_CONFIG = Path("configs/sim.toml")


class SimTransport(httpx.BaseTransport):
    """An httpx transport answering from an in-process simulator."""

    def __init__(self, http: SimHttp, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.http = http
        self._sleep = sleep

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.read()
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in request.headers.raw}
        answer = self.http.handle(
            request.method, request.url.path, request.url.query.decode("ascii"), headers, body
        )
        if answer.delay_s > 0:
            timeouts = request.extensions.get("timeout") or {}
            read_timeout = timeouts.get("read")
            if read_timeout is not None and answer.delay_s > read_timeout:
                self._sleep(read_timeout)
                raise httpx.ReadTimeout("simulated: the answer came too late", request=request)
            self._sleep(answer.delay_s)
        if answer.drop:
            raise httpx.RemoteProtocolError(
                "simulated: server disconnected without sending a complete response",
                request=request,
            )
        if answer.drip_s or answer.pad_to > len(answer.body):
            headers = {**answer.headers, "content-length": str(answer.length)}
            stream = _ChunkStream(answer, self._sleep)
            return httpx.Response(answer.status, headers=headers, stream=stream, request=request)
        return httpx.Response(
            answer.status, headers=answer.headers, content=answer.body, request=request
        )


class _ChunkStream(httpx.SyncByteStream):
    """A dripped or padded body, made as it is read; a drip pauses with the injected sleep."""

    def __init__(self, answer: SimResponse, sleep: Callable[[float], None]) -> None:
        self._answer = answer
        self._sleep = sleep

    def __iter__(self) -> Iterator[bytes]:
        first = True
        for chunk in self._answer.chunks():
            if self._answer.drip_s and not first:
                self._sleep(self._answer.drip_s)
            first = False
            yield chunk


@dataclass(frozen=True, slots=True)
class SimHandle:
    """One in-process simulator: its parts, for tests, the demo and benchmarks."""

    config: SimConfig
    clock: SimClock
    engine: SimEngine
    api: SimApi
    http: SimHttp
    faults: FaultPlan
    transport: SimTransport

    @property
    def credential(self) -> ApiKeyConfig:
        """The first key the simulator accepts (to build a client with)."""
        return self.config.auth.keys[0]

    def set_mark(self, symbol: str, px: Decimal | str) -> None:
        """Move a mark price while holding the HTTP lock (safe while a server runs)."""
        with self.http.lock:
            self.engine.set_mark(symbol, Decimal(px))


def make_sim(
    config: SimConfig | None = None,
    clock: SimClock | None = None,
    *,
    faults: FaultPlan | None = None,
    sleep: Callable[[float], None] = time.sleep,
    auto_step: bool | None = None,
) -> SimHandle:
    """Build a simulator (default config, wall clock) and its in-process transport.

    ``auto_step`` (default: on for a :class:`WallClock`) steps the market before each request.
    ``faults`` default: the plan of ``config.faults``, seeded by ``config.seed``.
    """
    config = config if config is not None else load_sim_config(None)
    clock = clock if clock is not None else WallClock()
    engine = SimEngine(config, clock)
    api = SimApi(engine)
    plan = faults
    if plan is None:
        plan = FaultPlan.from_config(config.faults, seed=config.seed, clock=clock)
    step = auto_step if auto_step is not None else isinstance(clock, WallClock)
    http = SimHttp(
        api, clock=clock, auth=config.auth, faults=plan, step=engine.step if step else None
    )
    return SimHandle(config, clock, engine, api, http, plan, SimTransport(http, sleep=sleep))


def sim_config_for(settings: Settings) -> SimConfig:
    """The simulator config the settings name; built-in defaults when the default file is absent.

    The simulator accepts exactly the credentials the client will sign with
    (``settings.credentials()``: the ``BOTKIT_API_*`` ones, else the simulator's defaults).
    """
    path: Path | None = settings.sim_config
    if path == _DEFAULT_SIM_CONFIG and not path.is_file():
        path = None
    config = load_sim_config(path)
    creds = settings.credentials()
    key = ApiKeyConfig(key=creds.key, secret=creds.secret, passphrase=creds.passphrase)
    auth = config.auth.model_copy(update={"keys": [key]})
    return config.model_copy(update={"auth": auth})


def make_transport(settings: Settings) -> httpx.BaseTransport:
    """The in-process simulator on wall time as an httpx transport (``exchange = "sim"``)."""
    return make_sim(sim_config_for(settings), WallClock()).transport
