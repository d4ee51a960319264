"""``botkit serve``: the read-only status API (``/api/health``), token authentication."""

from __future__ import annotations

import argparse
import signal
import threading
from pathlib import Path
from typing import Any

from botkit.cli.argtypes import port_or_zero
from botkit.cli.run_cmd import HEALTHY_AFTER_S, add_settings_options, settings_of

__all__ = ["register"]

DEFAULT_PORT = 8750


def _serve(args: argparse.Namespace) -> int:
    from loguru import logger

    from botkit.app.api import make_server, read_token
    from botkit.service.logs import configure_logging

    settings = settings_of(args)
    token = read_token(Path(args.token_file)) if args.token_file else None
    configure_logging(level=settings.log_level, fmt=settings.log_format, secrets=[token or ""])
    server = make_server(
        settings, host=args.host, port=args.port, token=token, max_age_s=args.max_age
    )
    port = server.server_address[1]
    print(f"serving the status API on http://{args.host}:{port}/api/health", flush=True)
    if token is None:
        logger.warning("no --token-file: anyone on this machine can read the API")
    stop = threading.Event()

    def on_signal(_signum: int, _frame: object) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    thread = threading.Thread(target=server.serve_forever, name="botkit-api", daemon=True)
    thread.start()
    stop.wait()
    server.shutdown()
    server.server_close()
    return 0


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve the read-only status API (/api/health) on 127.0.0.1",
        description="A separate process reading the journal: JSON under /api/ "
        "(/api/health: what 'botkit status' says). With --token-file every request needs "
        "'Authorization: Bearer TOKEN'; an address beyond loopback needs one.",
    )
    add_settings_options(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument(
        "--port",
        type=port_or_zero,
        default=DEFAULT_PORT,
        help=f"port (default {DEFAULT_PORT}; 0: any free)",
    )
    serve.add_argument(
        "--token-file", metavar="FILE", help="file holding the bearer token (mode 600)"
    )
    serve.add_argument(
        "--max-age",
        type=float,
        default=HEALTHY_AFTER_S,
        metavar="SECONDS",
        help=f"a last cycle older than this is unhealthy (default {HEALTHY_AFTER_S})",
    )
    serve.set_defaults(handler=_serve)
