"""argparse value types shared by the command modules: a bad value is a one-line usage error
(argparse names the flag; the message lists the accepted forms).

Times and intervals are read by :mod:`botkit.timeparse` (docs/times.md), the same grammar for
every command. A time is checked when the command line is read (against the machine's clock) and
kept as a :class:`TimeArg`; the command resolves it with :meth:`TimeArg.at` against its own clock:
the exchange's for the commands that ask the exchange, the machine's (:func:`wall_ms`) for the
others (:func:`botkit.clock.wall_ms`).
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

from botkit.clock import wall_ms
from botkit.errors import UsageError
from botkit.timeparse import exchange_interval, parse_interval, parse_time

__all__ = [
    "TimeArg",
    "candle_interval_arg",
    "interval_arg",
    "port_number",
    "port_or_zero",
    "positive_int",
    "seconds_arg",
    "time_arg",
]


@dataclass(frozen=True, slots=True)
class TimeArg:
    """A time as given on the command line (already checked); :meth:`at` gives its Unix ms."""

    text: str

    def at(self, now_ms: int) -> int:
        """Unix ms, an age (``7d``) or ``now`` measured back from ``now_ms``."""
        try:
            return parse_time(self.text, now_ms)
        except ValueError as exc:  # only an age reaching back before 1973 from this clock
            raise UsageError(str(exc)) from None

    @staticmethod
    def resolve(value: TimeArg | None, now_ms: int) -> int | None:
        """:meth:`at` of an optional argument (``None`` stays ``None``)."""
        return None if value is None else value.at(now_ms)


def time_arg(text: str) -> TimeArg:
    """A time in any of :data:`botkit.timeparse.TIME_FORMS`, checked now, resolved later."""
    try:
        parse_time(text, wall_ms())
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return TimeArg(text)


def interval_arg(text: str) -> int:
    """A candle interval (``1m``, ``MINUTE_5``, ``1h`` ...) in ms."""
    try:
        return parse_interval(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def candle_interval_arg(text: str) -> int:
    """An interval the exchange serves candles of (``1m`` or ``MINUTE_1`` …) in ms; the wire
    word is :func:`botkit.timeparse.exchange_interval` of it."""
    ms = interval_arg(text)
    try:
        exchange_interval(ms)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return ms


def positive_int(text: str) -> int:
    """A whole number, 1 or more (a count, a page size, a number of processes)."""
    try:
        value = int(text.strip())
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text[:40]!r} must be a whole number of at least 1")
    return value


def port_number(text: str) -> int:
    """A TCP port, 1 to 65535."""
    try:
        port = int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (1-65535)") from None
    if not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port number (1-65535)")
    return port


def port_or_zero(text: str) -> int:
    """A TCP port, or 0 for any free one."""
    if text.strip() == "0":
        return 0
    try:
        return port_number(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a port number (1-65535, or 0 for any free port)"
        ) from None


def seconds_arg(text: str) -> float:
    """A duration in seconds: a finite number, 0 or more (``2``, ``0.5``)."""
    try:
        value = float(text.strip())
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"{text[:40]!r} is not a number of seconds (a finite number, 0 or more)"
        )
    return value
