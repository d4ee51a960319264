"""argparse value types shared by the command modules: a bad value is a one-line usage error."""

from __future__ import annotations

import argparse

from botkit.backtest.intervals import parse_interval, parse_time

__all__ = ["interval_arg", "time_arg"]


def interval_arg(text: str) -> int:
    """A candle interval (``1m``, ``MINUTE_5``, ``1h`` ...) in ms."""
    try:
        return parse_interval(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def time_arg(text: str) -> int:
    """A time (Unix ms or ISO-8601 UTC) in Unix ms."""
    try:
        return parse_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
