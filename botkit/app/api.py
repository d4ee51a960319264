"""``botkit serve``'s HTTP side: a small router, bearer-token authentication with named tokens,
the CSRF check and rate limit of control endpoints, and the server.

A separate process reading the journal (SQLite WAL lets it read while the service writes) and
the exchange, so a bug here cannot stop trading. The endpoints themselves are in
:mod:`botkit.app.api_read` (JSON reads) and :mod:`botkit.app.api_control` (control); the
dashboard page adds its own routes (``public=True``: the page and its assets hold no data).

* **Authentication**: ``Authorization: Bearer TOKEN``, compared in constant time with every
  configured token, *before* routing (an unknown path is 401 too). Tokens are named (token
  file lines ``NAME:TOKEN``; a line without a name is ``default``): the name is who asked, in
  the log and the journal. Without a token the API serves loopback only, reads only.
* **Control** (``POST``): needs a token, and passes the CSRF check (:func:`csrf_problem`) and a
  per-token rate limit (429 with ``Retry-After``).
* No answer holds a secret: the token is never echoed, and the settings' secrets never reach
  an answer (the read endpoints build their answers from the journal and the exchange's
  account data only).
"""

from __future__ import annotations

import errno
import hmac
import ipaddress
import json
import re
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from loguru import logger

from botkit import credentials
from botkit.errors import Location, SettingsError

__all__ = [
    "CSRF_HEADER",
    "MAX_BODY_BYTES",
    "MIN_TOKEN_LENGTH",
    "REQUEST_TIMEOUT_S",
    "ApiError",
    "Gate",
    "Handler",
    "RateLimit",
    "Request",
    "Response",
    "Route",
    "Router",
    "csrf_problem",
    "is_loopback",
    "json_response",
    "make_server",
    "read_tokens",
]

MIN_TOKEN_LENGTH = 16
MAX_BODY_BYTES = 64 * 1024
CSRF_HEADER = "X-Botkit-Csrf"
"""The header every control request must carry (any value but empty). A page of another site
cannot send a custom header to this origin without a CORS preflight, which this server never
grants; a plain HTML form cannot send one at all."""
DEFAULT_NAME = "default"
REQUEST_TIMEOUT_S = 30.0
"""Seconds a connection may wait for the rest of its request (headers or body) before it is
closed: a client that sends half a request must not hold a thread for ever."""
_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,40}$")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_tokens(path: Path) -> dict[str, str]:
    """The named tokens in ``path``: one per line, ``NAME:TOKEN`` (``NAME``: letters, digits,
    ``_ . @ -``, at most 40) or a bare ``TOKEN`` (named ``default``); blank lines and ``#``
    comments are skipped. A missing, unreadable or exposed file (readable by other users,
    :func:`botkit.credentials.refuse_exposed`), a short token, a repeated name or an empty file
    is one :class:`SettingsError` naming the line — never quoting it."""
    where = Location(field="--token-file", file=str(path))
    if not credentials.is_file(path, "token file"):
        raise SettingsError("token file not found", where=where, hint="create it (mode 600)")
    credentials.refuse_exposed(path, "token file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"cannot read the token file ({type(exc).__name__})", where=where
        ) from None
    tokens: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, sep, token = line.partition(":")
        if not sep or not _NAME.match(name):
            name, token = DEFAULT_NAME, line
        here = Location(field="--token-file", file=str(path), line=number)
        if len(token) < MIN_TOKEN_LENGTH:
            raise SettingsError(
                f"the token must be at least {MIN_TOKEN_LENGTH} characters",
                where=here,
                hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE",
            )
        if name in tokens:
            raise SettingsError(
                f"the token name {name!r} is given twice", where=here, hint="one line per name"
            )
        tokens[name] = token
    if not tokens:
        raise SettingsError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters",
            where=where,
            hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE",
        )
    return tokens


@dataclass(frozen=True, slots=True)
class Request:
    """One request as a handler sees it. ``caller``: the name of the token it carried
    (``None``: no token is configured, loopback reads only)."""

    method: str
    path: str
    query: Mapping[str, str]
    headers: Message
    body: bytes
    caller: str | None
    params: Mapping[str, str] = field(default_factory=dict)
    """What the route's ``{name}`` parts matched."""

    def json(self) -> dict[str, Any]:
        """The body as a JSON object; anything else is a 400 :class:`ApiError`."""
        if not self.body:
            return {}
        try:
            value = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise ApiError(400, "the body is not JSON") from None
        if not isinstance(value, dict):
            raise ApiError(400, "the body must be a JSON object")
        return value


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: tuple[tuple[str, str], ...] = ()


def json_response(status: int, value: Any, *headers: tuple[str, str]) -> Response:
    return Response(status, json.dumps(value, default=str).encode(), headers=headers)


class ApiError(Exception):
    """A handler's refusal: answered as ``{"error": message}`` with ``status``."""

    def __init__(self, status: int, message: str, *headers: tuple[str, str]) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.headers = headers


Handler = Callable[[Request], Response]


@dataclass(frozen=True, slots=True)
class Route:
    method: str
    path: str
    """``/api/x``, ``/api/x/{name}`` (one segment), or with ``prefix`` every path under it."""
    handler: Handler
    public: bool = False
    """Served without a token (the dashboard's page and assets: no data in them)."""
    control: bool = False
    """A control endpoint: token, CSRF check and rate limit."""
    prefix: bool = False

    def match(self, path: str) -> dict[str, str] | None:
        if self.prefix:
            return {} if path == self.path or path.startswith(self.path.rstrip("/") + "/") else None
        want = self.path.split("/")
        have = path.split("/")
        if len(want) != len(have):
            return None
        params: dict[str, str] = {}
        for w, h in zip(want, have, strict=True):
            if w.startswith("{") and w.endswith("}"):
                if not h:
                    return None
                params[w[1:-1]] = h
            elif w != h:
                return None
        return params


class Router:
    """The route table: the API's endpoints, and the page's (added by the dashboard)."""

    def __init__(self) -> None:
        self.routes: list[Route] = []

    def add(
        self,
        method: str,
        path: str,
        handler: Handler,
        *,
        public: bool = False,
        control: bool = False,
        prefix: bool = False,
    ) -> None:
        self.routes.append(Route(method, path, handler, public, control, prefix))

    def find(self, method: str, path: str) -> tuple[Route | None, dict[str, str], list[str]]:
        """(route, params, methods): ``methods`` the routes of this path answer (so a wrong
        method is 405 with ``Allow``, not 404)."""
        methods: list[str] = []
        for route in self.routes:
            params = route.match(path)
            if params is None:
                continue
            if route.method == method:
                return route, params, [method]
            methods.append(route.method)
        return None, {}, methods

    def is_public(self, path: str) -> bool:
        return any(r.public and r.match(path) is not None for r in self.routes)


class RateLimit:
    """At most ``count`` control requests per ``window_s`` seconds per caller (a sliding
    window); ``clock``: monotonic seconds."""

    def __init__(
        self, count: int, window_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.count = count
        self.window_s = window_s
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, caller: str) -> float | None:
        """``None`` and counted when ``caller`` may go ahead; else seconds until it may."""
        now = self._clock()
        with self._lock:
            seen = self._seen.setdefault(caller, deque())
            while seen and seen[0] <= now - self.window_s:
                seen.popleft()
            if len(seen) >= self.count:
                return max(0.0, seen[0] + self.window_s - now)
            seen.append(now)
            return None


def csrf_problem(headers: Message, allowed_hosts: frozenset[str] | None) -> str:
    """Why a control request may come from another site's page ("" when it may not):

    * it must carry :data:`CSRF_HEADER` (a cross-site page cannot without a CORS preflight,
      which is never granted; a form cannot at all) and a JSON ``Content-Type``;
    * its ``Host`` must be an address this server answers to (no DNS rebinding; ``None``:
      bound to every address, any host name);
    * an ``Origin`` header, when sent, must be this server's own origin
      (``http://HOST:PORT``), and ``Sec-Fetch-Site``, when sent, ``same-origin`` or ``none``.
    """
    if not headers.get(CSRF_HEADER, "").strip():
        return f"a control request needs the {CSRF_HEADER} header (CSRF check)"
    if headers.get_content_type() != "application/json":
        return "a control request's Content-Type must be application/json (CSRF check)"
    host = headers.get("Host", "").strip().lower()
    if not host or (allowed_hosts is not None and host not in allowed_hosts):
        return "the Host header is not this server's address (CSRF check)"
    origin = headers.get("Origin")
    if origin is not None and origin.strip().lower() != f"http://{host}":
        return "the Origin is another site (CSRF check)"
    site = headers.get("Sec-Fetch-Site")
    if site is not None and site.strip().lower() not in ("same-origin", "none"):
        return "the request comes from another site (Sec-Fetch-Site; CSRF check)"
    return ""


def _allowed_hosts(host: str, port: int) -> frozenset[str] | None:
    """The ``Host`` headers a request to ``host:port`` may carry; ``None`` when bound to every
    address (then any: a token is required there, and the Origin must still match)."""
    if host in ("0.0.0.0", "::", ""):  # noqa: S104 - naming the wildcard, not binding it
        return None
    names = {host, "localhost", "127.0.0.1", "[::1]"}
    if ":" in host and not host.startswith("["):
        names.add(f"[{host}]")
    hosts = {f"{n.lower()}:{port}" for n in names}
    if port == 80:  # a browser leaves the default port out of Host
        hosts |= {n.lower() for n in names}
    return frozenset(hosts)


class Gate:
    """Everything between a request and its route: authentication, routing, the CSRF check and
    the rate limit of control endpoints, and turning a handler's failure into its answer."""

    def __init__(
        self,
        router: Router,
        tokens: Mapping[str, str] | None,
        rate_limit: RateLimit,
        allowed_hosts: frozenset[str] | None = frozenset(),
    ) -> None:
        self.router = router
        self.expected = [(name, f"Bearer {t}".encode()) for name, t in (tokens or {}).items()]
        self.limit = rate_limit
        self.allowed_hosts = allowed_hosts

    def authenticate(self, given: bytes) -> str | None:
        """The name of the token ``given`` carries, or None; every token is compared (in
        constant time), so the time taken does not tell which one came close."""
        found = None
        for name, want in self.expected:
            if hmac.compare_digest(given, want) and found is None:
                found = name
        return found

    def _check_control(self, method: str, path: str, headers: Message, caller: str | None) -> None:
        if not self.expected:
            raise ApiError(403, "control needs a token: start botkit serve with --token-file FILE")
        problem = csrf_problem(headers, self.allowed_hosts)
        if problem:
            logger.warning("api: {} {} refused for {}: {}", method, path, caller, problem)
            raise ApiError(403, problem)
        wait = self.limit.retry_after(caller or DEFAULT_NAME)
        if wait is not None:
            raise ApiError(
                429,
                f"too many control requests: at most {self.limit.count} per"
                f" {self.limit.window_s:g} s; try again in {wait:.0f} s",
                ("Retry-After", str(max(1, round(wait)))),
            )

    def handle(
        self, method: str, target: str, headers: Message, read: Callable[[int], bytes]
    ) -> Response:
        """The answer to one request (``read(n)``: its body's bytes)."""
        try:
            return self._handle(method, target, headers, read)
        except ApiError as exc:
            return json_response(exc.status, {"error": exc.message}, *exc.headers)

    def _handle(
        self, method: str, target: str, headers: Message, read: Callable[[int], bytes]
    ) -> Response:
        split = urlsplit(target)
        path = split.path.rstrip("/") or "/"
        caller: str | None = None
        if self.expected and not self.router.is_public(path):
            caller = self.authenticate(headers.get("Authorization", "").encode())
            if caller is None:
                raise ApiError(
                    401,
                    "unauthorized: send Authorization: Bearer TOKEN",
                    ("WWW-Authenticate", "Bearer"),
                )
        if not self.expected and self.allowed_hosts is not None:  # no token: loopback only
            host = headers.get("Host", "").strip().lower()
            if host not in self.allowed_hosts:  # a page of another name rebound to 127.0.0.1
                raise ApiError(403, "the Host header is not this server's address")
        route, params, methods = self.router.find(method, path)
        if route is None:
            if methods:
                allow = ", ".join(sorted({*methods, *(["HEAD"] if "GET" in methods else [])}))
                raise ApiError(405, f"{method} is not allowed on {path}", ("Allow", allow))
            raise ApiError(404, f"no such endpoint; see /api/openapi.json ({path})")
        try:
            length = int(headers.get("Content-Length") or 0)
        except ValueError:
            raise ApiError(400, "a malformed Content-Length") from None
        if length > MAX_BODY_BYTES or length < 0:
            raise ApiError(413, f"the body is larger than {MAX_BODY_BYTES} bytes")
        body = read(length) if length else b""
        if route.control:
            self._check_control(method, path, headers, caller)
        query = dict(parse_qsl(split.query, keep_blank_values=True))
        request = Request(method, path, query, headers, body, caller, params)
        try:
            return route.handler(request)
        except ApiError:
            raise
        except Exception as exc:  # one request's failure is its answer, not the server's
            logger.exception("api: {} {} failed", method, path)
            raise ApiError(500, f"{type(exc).__name__}") from None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    gate: Gate
    timeout_s: float = REQUEST_TIMEOUT_S

    def handle_error(self, request: Any, client_address: Any) -> None:
        """One log line, not socketserver's traceback on stderr: a client that hangs up or
        resets mid-request is routine (a closed tab, a killed curl); anything else is an error
        the line names (the router answers its own failures with 500 before this)."""
        exc = sys.exc_info()[1]
        who = client_address[0] if isinstance(client_address, tuple) else client_address
        if isinstance(exc, ConnectionError | TimeoutError):
            logger.debug("api: {} went away mid-request ({})", who, type(exc).__name__)
            return
        logger.error("api: a request from {} failed: {}: {}", who, type(exc).__name__, exc)


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    server_version = "botkit"
    sys_version = ""

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.timeout_s)  # every read of the request

    def _dispatch(self, method: str, *, head: bool = False) -> None:
        response = self.server.gate.handle(method, self.path, self.headers, self.rfile.read)
        self.send_response(response.status)
        self.send_header("Content-Type", response.content_type)
        self.send_header("Content-Length", str(len(response.body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in response.headers:
            self.send_header(name, value)
        self.end_headers()
        if not head:
            self.wfile.write(response.body)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("GET", head=True)

    def do_POST(self) -> None:
        self._dispatch("POST")

    def __getattr__(self, name: str) -> Callable[[], None]:
        """Any other method (PUT, OPTIONS, TRACE, ...) goes through the gate too: 401 without
        the token, else 405 on a known path (no CORS preflight is ever granted)."""
        if name.startswith("do_") and name[3:].isalpha():
            method = name[3:]
            return lambda: self._dispatch(method)
        raise AttributeError(name)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """The server's own refusals (a malformed request line, an unknown method, headers too
        long) in JSON, like every other answer."""
        data = json.dumps({"error": f"{code} {message or self.responses.get(code, ('',))[0]}"})
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD" and code >= 200 and code not in (204, 304):
            self.wfile.write(data.encode())

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("api: {} {}", self.command, self.path.split("?", 1)[0])


def _bind_error(host: str, port: int, exc: OSError) -> SettingsError:
    """Why ``host:port`` cannot be served on, blaming the option at fault: an address this
    machine does not have (or a name that does not resolve) is the host's, the rest the port's."""
    if isinstance(exc, socket.gaierror) or exc.errno == errno.EADDRNOTAVAIL:
        return SettingsError(
            f"cannot serve on {host}: {exc.strerror or exc}",
            where=Location(field="--host"),
            hint="give an address of this machine (127.0.0.1, the default; 0.0.0.0 for all)",
        )
    return SettingsError(
        f"cannot serve on {host}:{port}: {exc.strerror or exc}",
        where=Location(field="--port"),
        hint="pick a free port above 1024",
    )


def make_server(
    router: Router,
    *,
    host: str,
    port: int,
    tokens: Mapping[str, str] | None,
    rate_limit: RateLimit | None = None,
    request_timeout_s: float = REQUEST_TIMEOUT_S,
) -> _Server:
    """The server of ``router`` bound to ``host:port`` (not yet serving). ``tokens``: name →
    token (``None``: no authentication, refused beyond loopback; control endpoints then answer
    403). ``request_timeout_s``: how long a connection may take to send its request."""
    if not tokens and not is_loopback(host):
        raise SettingsError(
            f"refusing to serve on {host} without a token: anyone who reaches it could read it",
            where=Location(field="--host"),
            hint="give --token-file FILE, or serve on 127.0.0.1 (the default)",
        )
    gate = Gate(router, tokens, rate_limit or RateLimit(5, 60.0))
    try:
        server = _Server((host, port), _Handler)
    except OSError as exc:
        raise _bind_error(host, port, exc) from None
    gate.allowed_hosts = _allowed_hosts(host, server.server_address[1])
    server.gate = gate
    server.timeout_s = request_timeout_s
    return server
