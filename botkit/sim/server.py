"""The simulator as a real HTTP server: an ASGI app over :class:`SimHttp`, run by uvicorn.

uvicorn with the ``httptools`` parser (the fastest of its HTTP implementations) on an asyncio
loop. :meth:`SimHttp.handle` is fast and synchronous, so it runs on the event loop itself (no
thread hop); a fault's delay is an ``asyncio.sleep`` (other requests go on meanwhile); a dropped
connection sends the response start with its ``Content-Length`` and closes without the body, so
the client sees a connection lost mid-answer.

:func:`serve` runs in the foreground (``botkit sim serve``) and stops cleanly on SIGINT or
SIGTERM; :class:`SimServer` runs the same server in a background thread on an ephemeral port
(contract tests, benchmarks) and stops when asked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Generator, MutableMapping
from types import FrameType, TracebackType
from typing import Any

import uvicorn

from botkit.sim.http import SimHttp, SimResponse

__all__ = ["SimAsgiApp", "SimServer", "serve"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_DROP_LOG = "ASGI callable returned without completing response."


class SimAsgiApp:
    """ASGI 3 application answering every HTTP request with :meth:`SimHttp.handle`.

    ``group_commit`` (a kept paper account): the requests handled in one turn of the event
    loop are saved in one transaction before any of their answers leaves — the save is
    scheduled behind the requests already waiting to run, and every answer handled while the
    account has unsaved changes waits for it (a read as well: it may show them). An answer
    never leaves before what it reports is in the file; a save that fails turns every waiting
    answer into HTTP 500 (and later requests into 503)."""

    def __init__(self, http: SimHttp, *, group_commit: bool = False) -> None:
        self.http = http
        self.group_commit = group_commit
        self._group: asyncio.Future[bool] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        answer = self.http.handle(
            scope["method"],
            scope["path"],
            scope["query_string"].decode("latin-1"),
            headers,
            b"".join(chunks),
            defer_save=self.group_commit,
        )
        if self.group_commit and self.http.unsaved() and not await self._saved():
            answer = self.http.unsaved_answer(scope["path"])
        if answer.delay_s > 0:
            await asyncio.sleep(answer.delay_s)
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in answer.headers.items()]
        raw.append((b"content-length", str(answer.length).encode()))
        await send({"type": "http.response.start", "status": answer.status, "headers": raw})
        if answer.drop:
            return  # uvicorn closes the connection: the body never comes
        if not answer.drip_s and answer.pad_to <= len(answer.body):
            await send({"type": "http.response.body", "body": answer.body})
            return
        await _send_in_chunks(answer, send)

    async def _saved(self) -> bool:
        """Wait for the group's save (scheduling it if this is the group's first answer);
        False when it failed."""
        group = self._group
        if group is None:
            loop = asyncio.get_running_loop()
            group = self._group = loop.create_future()
            loop.call_soon(self._commit)
        return await asyncio.shield(group)  # one answer's client leaving cancels only it

    def _commit(self) -> None:
        group, self._group = self._group, None
        saved = self.http.flush()
        if group is not None and not group.done():
            group.set_result(saved)


async def _send_in_chunks(answer: SimResponse, send: Send) -> None:
    """A dripped or padded body, piece by piece; stops when the client has gone."""
    first = True
    for chunk in answer.chunks():
        if answer.drip_s and not first:
            await asyncio.sleep(answer.drip_s)
        first = False
        try:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except OSError:  # the client hung up (uvicorn may raise on a closed transport)
            return
    with contextlib.suppress(OSError):
        await send({"type": "http.response.body", "body": b""})


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class _QuietDrops(logging.Filter):
    """A dropped connection is an injected fault, not a server error: keep it out of the log."""

    def filter(self, record: logging.LogRecord) -> bool:
        return record.getMessage() != _DROP_LOG


_quiet = _QuietDrops()


class _Server(uvicorn.Server):
    """uvicorn's server, but SIGINT / SIGTERM just stop it (exit 0), without re-raising."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        originals = {sig: signal.signal(sig, self._stop) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in originals.items():
                signal.signal(sig, handler)

    def _stop(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:
            self.force_exit = True
        self.should_exit = True


def _config(app: SimAsgiApp, host: str, port: int, log_level: str) -> uvicorn.Config:
    logging.getLogger("uvicorn.error").addFilter(_quiet)
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http="httptools",
        loop="asyncio",
        lifespan="off",
        access_log=False,
        log_config=None,
        log_level=log_level,
        server_header=False,
        proxy_headers=False,
        date_header=False,
        timeout_graceful_shutdown=5,
    )


def serve(
    http: SimHttp,
    host: str = "127.0.0.1",
    port: int = 8900,
    *,
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
) -> None:
    """Serve in the foreground until SIGINT / SIGTERM; ``on_ready(url)`` once listening. A
    kept paper account is saved by group commit (:class:`SimAsgiApp`)."""
    config = _config(SimAsgiApp(http, group_commit=True), host, port, log_level)
    server = _Server(config)
    sock = _bind(host, port)
    url = _url(sock)

    async def run() -> None:
        task = asyncio.create_task(server.serve(sockets=[sock]))
        while not server.started and not task.done():
            await asyncio.sleep(0.01)
        if server.started and on_ready is not None:
            on_ready(url)
        await task

    try:
        asyncio.run(run())
    finally:
        sock.close()


def _bind(host: str, port: int) -> socket.socket:
    """A listening socket created with ``proto=IPPROTO_TCP``: asyncio then sets TCP_NODELAY on
    every accepted connection (uvicorn's own ``bind_socket`` passes proto 0, and Nagle plus
    delayed ACKs cost 40 ms per keep-alive request)."""
    family, kind, proto, _, address = socket.getaddrinfo(
        host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP
    )[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise OSError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.listen(2048)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://{'[' + host + ']' if ':' in host else host}:{port}"


class SimServer:
    """The loopback server in a background thread; ``port=0`` picks a free port.

    ``with SimServer(http) as server: ... server.url ...`` — stops (bounded) on exit.
    """

    def __init__(
        self,
        http: SimHttp,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        log_level: str = "warning",
        group_commit: bool = False,
    ) -> None:
        self._app = SimAsgiApp(http, group_commit=group_commit)
        self._config = _config(self._app, host, port, log_level)
        self._server = _Server(self._config)
        self._sock: socket.socket | None = None
        self._thread: threading.Thread | None = None
        self.url = ""

    @property
    def http(self) -> SimHttp:
        return self._app.http

    def use(self, http: SimHttp) -> None:
        """Answer with another simulator from the next request on (one server, fresh state)."""
        self._app.http = http

    def start(self, timeout: float = 10.0) -> SimServer:
        self._sock = _bind(self._config.host, self._config.port)
        self.url = _url(self._sock)
        sock = self._sock
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[sock])),
            name=f"sim-server {self.url}",
            daemon=True,
        )
        self._thread.start()
        ready = threading.Event()
        deadline = time.monotonic() + timeout
        while not self._server.started and self._thread.is_alive() and time.monotonic() < deadline:
            ready.wait(0.005)
        if not self._server.started:
            self.stop()
            raise RuntimeError(f"the simulator server did not start on {self.url}")
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self._server.force_exit = True
                self._thread.join(timeout)
        if self._sock is not None:
            self._sock.close()

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
