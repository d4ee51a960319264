"""``botkit serve``: the read-only status API, a separate process reading the journal (SQLite WAL
lets it read while the service writes), so a bug here cannot stop trading.

JSON under ``/api/``; today ``/api/health`` (what ``botkit status`` says). Authentication is a
bearer token (``Authorization: Bearer TOKEN``, compared in constant time): without the token an
answer is 401. Bound to ``127.0.0.1`` by default; an address beyond loopback is refused without a
token. The token is never logged, and no answer holds a secret.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from loguru import logger

from botkit import credentials
from botkit.app.status import health
from botkit.errors import Location, SettingsError
from botkit.settings import Settings

__all__ = ["is_loopback", "make_server", "read_token"]

MIN_TOKEN_LENGTH = 16


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The token in ``path`` (its first line, stripped); a missing, unreadable or short file,
    or one other users may read (:func:`botkit.credentials.refuse_exposed`, as for every file
    holding a secret), is one :class:`SettingsError`."""
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
    token = (text.splitlines() or [""])[0].strip()
    if len(token) < MIN_TOKEN_LENGTH:
        raise SettingsError(
            f"the token must be at least {MIN_TOKEN_LENGTH} characters",
            where=where,
            hint="e.g. python -c 'import secrets; print(secrets.token_urlsafe(32))' > FILE",
        )
    return token


def make_server(
    settings: Settings, *, host: str, port: int, token: str | None, max_age_s: float = 600
) -> ThreadingHTTPServer:
    """The API's server bound to ``host:port`` (not yet serving)."""
    if token is None and not is_loopback(host):
        raise SettingsError(
            f"refusing to serve on {host} without a token: anyone who reaches it could read it",
            where=Location(field="--host"),
            hint="give --token-file FILE, or serve on 127.0.0.1 (the default)",
        )
    routes: dict[str, Callable[[], dict[str, Any]]] = {
        "/api/health": lambda: health(settings, max_age_s).to_json(),
    }
    expected = f"Bearer {token}".encode() if token is not None else None

    class Handler(BaseHTTPRequestHandler):
        server_version = "botkit"
        sys_version = ""

        def do_GET(self) -> None:
            if expected is not None:
                given = self.headers.get("Authorization", "").encode()
                if not hmac.compare_digest(given, expected):
                    self._answer(401, {"error": "unauthorized: send Authorization: Bearer TOKEN"})
                    return
            route = routes.get(self.path.split("?", 1)[0].rstrip("/") or "/")
            if route is None:
                self._answer(404, {"error": f"no such endpoint; try {', '.join(routes)}"})
                return
            try:
                self._answer(200, route())
            except Exception as exc:  # one request's failure is its answer, not the server's
                logger.exception("api: {} failed", self.path)
                self._answer(500, {"error": f"{type(exc).__name__}"})

        def _answer(self, code: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            if code == 401:
                self.send_header("WWW-Authenticate", "Bearer")
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            logger.debug("api: {} {}", self.command, self.path.split("?", 1)[0])

    try:
        server = ThreadingHTTPServer((host, port), Handler)
    except OSError as exc:
        raise SettingsError(
            f"cannot serve on {host}:{port}: {exc.strerror or exc}",
            where=Location(field="--port"),
            hint="pick a free port above 1024",
        ) from None
    server.daemon_threads = True
    return server
