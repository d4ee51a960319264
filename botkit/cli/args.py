"""Argument types shared by the commands: each refuses a bad value with a one-line reason
(argparse turns it into a usage error, exit 2)."""

from __future__ import annotations

import argparse

__all__ = ["port_number", "port_or_zero"]


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
