"""``botkit serve``: the status API (JSON under ``/api/``), token authentication, control
endpoints behind the token, a CSRF check and a rate limit."""

from __future__ import annotations

import argparse
import os
import signal
import threading
from pathlib import Path
from typing import Any

from botkit.cli.argtypes import port_or_zero, seconds_arg
from botkit.cli.run_cmd import HEALTHY_AFTER_S, add_settings_options, settings_of
from botkit.errors import UsageError
from botkit.signals import relay_signals

__all__ = ["register"]

DEFAULT_PORT = 8750
SERVE_NICE = 10


def _rate(text: str) -> tuple[int, float]:
    """``N/SECONDS`` (``5/60``: five control requests a minute per token)."""
    count, sep, window = text.partition("/")
    try:
        n, s = int(count), float(window)
    except ValueError:
        n, s = 0, 0.0
    if not sep or n < 1 or not 0 < s <= 86_400:
        raise UsageError(
            f"botkit serve: --control-rate must be N/SECONDS (e.g. 5/60), got {text[:40]!r}"
        )
    return n, s


def _serve(args: argparse.Namespace) -> int:
    from loguru import logger

    from botkit.app.api import RateLimit, make_server, read_tokens
    from botkit.app.api_routes import build_router, serve_equity
    from botkit.service.logs import configure_logging

    count, window = _rate(args.control_rate)
    settings = settings_of(args)
    if args.nice > 0 and hasattr(os, "nice"):  # the service comes first when CPUs are busy
        os.nice(args.nice)
    tokens = read_tokens(Path(args.token_file)) if args.token_file else None
    from botkit.app.service import secrets_of

    configure_logging(
        level=settings.log_level,
        fmt=settings.log_format,
        secrets=[*secrets_of(settings), *(tokens or {}).values()],
    )
    equity = serve_equity(settings)
    try:
        router = build_router(
            settings, max_age_s=args.max_age, exchange_ttl_s=args.exchange_every, equity=equity
        )
        server = make_server(
            router,
            host=args.host,
            port=args.port,
            tokens=tokens,
            rate_limit=RateLimit(count, window),
        )
    except BaseException:  # the port taken, say: the equity file's lock goes with this serve
        equity.close()
        raise
    port = server.server_address[1]
    print(f"serving the status API on http://{args.host}:{port}/api/health", flush=True)
    print(f"the dashboard: http://{args.host}:{port}/", flush=True)
    if tokens is None:
        logger.warning("no --token-file: anyone on this machine can read the API; no control")
    else:
        logger.info("api tokens: {}", ", ".join(sorted(tokens)))
    stop = threading.Event()

    def on_signal(_sig: signal.Signals) -> None:
        stop.set()

    # set on a relay thread, not in a handler: the main thread holds the event's lock as it
    # enters and leaves its wait (botkit.signals)
    undo = relay_signals({signal.SIGTERM: on_signal, signal.SIGINT: on_signal})
    thread = threading.Thread(target=server.serve_forever, name="botkit-api", daemon=True)
    thread.start()
    try:
        stop.wait()
    finally:
        undo()
    server.shutdown()
    server.server_close()
    equity.close()
    return 0


def register(sub: Any) -> None:
    serve = sub.add_parser(
        "serve",
        help="serve the status API (JSON under /api/) and the dashboard (/) on 127.0.0.1",
        description="A separate process reading the journal and the exchange: JSON under /api/"
        " (health, status, strategies, positions, orders, decisions, events, controls;"
        " /api/openapi.json describes them). With --token-file every request needs"
        " 'Authorization: Bearer TOKEN' and the control endpoints (kill switch, halt, cancel,"
        " flatten) are on; an address beyond loopback needs one. The dashboard page is at /"
        " (it asks for a token).",
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
        "--token-file",
        metavar="FILE",
        help="file of bearer tokens, one per line as NAME:TOKEN (mode 600)",
    )
    serve.add_argument(
        "--max-age",
        type=seconds_arg,
        default=HEALTHY_AFTER_S,
        metavar="SECONDS",
        help=f"a last cycle older than this is unhealthy (default {HEALTHY_AFTER_S})",
    )
    serve.add_argument(
        "--control-rate",
        default="5/60",
        metavar="N/SECONDS",
        help="at most N control requests per SECONDS per token (default 5/60; more: 429)",
    )
    serve.add_argument(
        "--exchange-every",
        type=seconds_arg,
        default=2.0,
        metavar="SECONDS",
        help="read the exchange at most this often; answers in between reuse the last read"
        " (default 2)",
    )
    serve.add_argument(
        "--nice",
        type=int,
        choices=range(20),
        default=SERVE_NICE,
        metavar="N",
        help=f"lower this process's CPU priority by N (0-19, default {SERVE_NICE}): on a busy"
        " machine the trading service, not the API and its dashboard, gets the CPU",
    )
    serve.set_defaults(handler=_serve)
