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

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

import httpx

from botkit.clock import Clock, WallClock
from botkit.sim.api import SimApi
from botkit.sim.config import ApiKeyConfig, SimConfig, load_sim_config
from botkit.sim.engine import SimEngine
from botkit.sim.faults import FaultPlan
from botkit.sim.http import SimHttp, SimResponse
from botkit.sim.state import PaperFile, PaperState, PersistentApi, Restored, read_copy

if TYPE_CHECKING:
    from botkit.settings import Settings

__all__ = [
    "SimHandle",
    "SimTransport",
    "make_sim",
    "make_transport",
    "paper_file",
    "sim_config_for",
    "with_balance",
]

_DEFAULT_SIM_CONFIG = Path("configs/sim.toml")


class SimTransport(httpx.BaseTransport):
    """An httpx transport answering from an in-process simulator."""

    def __init__(
        self,
        http: SimHttp,
        *,
        sleep: Callable[[float], None] = time.sleep,
        state: PaperState | None = None,
    ) -> None:
        self.http = http
        self._sleep = sleep
        self._state = state

    def close(self) -> None:
        """Let go of the paper account's state file, if the simulator holds one."""
        if self._state is not None:
            with self.http.lock:
                self._state.close()

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
    clock: Clock
    engine: SimEngine
    api: SimApi
    http: SimHttp
    faults: FaultPlan
    transport: SimTransport
    state: PaperState | None = None
    """The paper account's state file when it is held (None: in memory, or a read copy)."""
    restored: Restored | None = None
    """What the state file gave back (None: in memory)."""

    def close(self) -> None:
        """Let go of the state file (what is saved stays)."""
        self.transport.close()

    @property
    def credential(self) -> ApiKeyConfig:
        """The first key the simulator accepts (to build a client with)."""
        return self.config.auth.keys[0]

    def set_mark(self, symbol: str, px: Decimal | str) -> None:
        """Move a mark price while holding the HTTP lock (safe while a server runs)."""
        with self.http.lock:
            self.engine.set_mark(symbol, Decimal(px))
            if self.state is not None:
                self.state.save()


def make_sim(
    config: SimConfig | None = None,
    clock: Clock | None = None,
    *,
    faults: FaultPlan | None = None,
    sleep: Callable[[float], None] = time.sleep,
    auto_step: bool | None = None,
    paper: PaperFile | None = None,
) -> SimHandle:
    """Build a simulator (default config, wall clock) and its in-process transport.

    ``auto_step`` (default: on for a :class:`WallClock`) steps the market before each request.
    ``faults`` default: the plan of ``config.faults``, seeded by ``config.seed``.
    ``paper``: the paper account's state file (held: loaded, and every change saved before
    its answer leaves; or a read copy); None: in memory only.
    """
    config = config if config is not None else load_sim_config(None)
    clock = clock if clock is not None else WallClock()
    engine = SimEngine(config, clock)
    wire = SimApi(engine)
    api: SimApi | PersistentApi = wire
    state: PaperState | None = None
    restored: Restored | None = None
    if paper is not None and paper.hold:
        state = PaperState(
            paper.path,
            engine,
            synchronous=paper.synchronous,
            command=paper.command,
            fresh=paper.fresh,
        )
        restored = state.restored
        api = PersistentApi(wire, state)
    elif paper is not None:
        restored = read_copy(paper.path, engine)
    plan = faults
    if plan is None:
        plan = FaultPlan.from_config(config.faults, seed=config.seed, clock=clock)
    step = auto_step if auto_step is not None else isinstance(clock, WallClock)
    http = SimHttp(
        api, clock=clock, auth=config.auth, faults=plan, step=engine.step if step else None
    )
    transport = SimTransport(http, sleep=sleep, state=state)
    return SimHandle(config, clock, engine, wire, http, plan, transport, state, restored)


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
    return with_balance(config.model_copy(update={"auth": auth}), settings.paper_balance)


def with_balance(config: SimConfig, amount: Decimal | None) -> SimConfig:
    """``config`` with a fresh account's starting balance set to ``amount`` (None: as it is)."""
    if amount is None:
        return config
    return config.model_copy(
        update={"balance": config.balance.model_copy(update={"amount": amount})}
    )


def paper_file(settings: Settings, *, hold: bool, command: str = "botkit") -> PaperFile | None:
    """The paper account's state file of ``settings`` (None: kept in memory), held for
    trading or read as a copy."""
    path = settings.paper_state_file()
    if path is None:
        return None
    return PaperFile(path, hold=hold, synchronous=settings.paper_synchronous, command=command)


def make_transport(
    settings: Settings, *, hold: bool = True, command: str = "botkit"
) -> httpx.BaseTransport:
    """The in-process simulator on wall time as an httpx transport (``exchange = "sim"``), on
    the paper account of ``settings``: held (loaded, every change saved before its answer
    leaves; one process at a time) or, ``hold=False``, a read copy for looking."""
    paper = paper_file(settings, hold=hold, command=command)
    config = sim_config_for(settings)
    return _AtFirstRequest(lambda: make_sim(config, WallClock(), paper=paper).transport)


class _AtFirstRequest(httpx.BaseTransport):
    """A simulator built, and its paper account opened, at the first request: a command holds
    its journal (which needs the client's clock) before the paper account, so a second
    ``botkit run`` on one journal is refused for the journal, and a journal that cannot be
    created is reported before anything else. A paper account that cannot be opened raises
    its one-line error from that first request."""

    def __init__(self, build: Callable[[], SimTransport]) -> None:
        self._build = build
        self._built: SimTransport | None = None
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self._lock:
            if self._built is None:
                self._built = self._build()
        return self._built.handle_request(request)

    def close(self) -> None:
        with self._lock:
            if self._built is not None:
                self._built.close()
