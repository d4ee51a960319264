"""Logging with loguru: readable lines on a terminal, JSON lines otherwise (journald).

Secrets are redacted *at the sink* (by :class:`botkit.redaction.Redactor`, the one redaction
the journal uses too): whatever a record holds — message, bound fields, an exception's
traceback — passes through :class:`RedactingSink` before it is written, so a configured key, secret
or passphrase cannot reach the output even through a crash path or ``--debug``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from typing import Literal, TextIO

from loguru import logger

from botkit.redaction import REDACTED, Redactor, redact
from botkit.service.repeats import Repeats

__all__ = ["REDACTED", "LogFormat", "RedactingSink", "configure_logging", "redact"]

LogFormat = Literal["auto", "text", "json"]

_TEXT_FORMAT = (
    "<green>{time:YYYY-MM-DD HH:mm:ss.SSS!UTC}Z</green> <level>{level: <7}</level> "
    "{extra[ctx]}<level>{message}</level>"
)


class RedactingSink:
    """A loguru sink that writes each formatted record with secrets redacted."""

    def __init__(self, stream: TextIO, secrets: Iterable[str]) -> None:
        self._stream = stream
        self._redact = Redactor(secrets)

    def __call__(self, message: str) -> None:
        self._stream.write(self._redact(str(message)))
        self._stream.flush()


def _with_context(record: dict[str, object]) -> bool:
    """Render the bound strategy / rule / clOrdId as a short prefix for text lines."""
    extra = record["extra"]
    assert isinstance(extra, dict)
    parts = [f"{k}={extra[k]}" for k in ("strategy", "rule", "cl_ord_id") if extra.get(k)]
    extra["ctx"] = f"[{' '.join(parts)}] " if parts else ""
    return True


def configure_logging(
    *,
    level: str = "INFO",
    fmt: LogFormat = "auto",
    secrets: Iterable[str] = (),
    stream: TextIO | None = None,
    repeats: Repeats | None = None,
) -> None:
    """Send all botkit logging to ``stream`` (stderr), redacting ``secrets``.

    ``auto`` picks text on a terminal and JSON lines otherwise (systemd's journal).
    ``repeats``: write each message once and count the repeats (a backtest's per-candle
    warnings); the caller prints :meth:`Repeats.summary` at the end.
    """
    out = stream if stream is not None else sys.stderr
    if fmt == "auto":
        fmt = "text" if out.isatty() else "json"
    logger.remove()
    sink = RedactingSink(out, secrets)
    if fmt == "json":
        logger.add(
            sink,
            level=level,
            serialize=True,
            filter=repeats,
            backtrace=False,
            diagnose=False,
        )
    else:

        def text_filter(record: dict[str, object]) -> bool:
            return _with_context(record) and (repeats is None or repeats(record))

        logger.add(
            sink,
            level=level,
            format=_TEXT_FORMAT,
            filter=text_filter,  # type: ignore[arg-type]
            colorize=out.isatty(),
            backtrace=False,
            diagnose=False,
        )
