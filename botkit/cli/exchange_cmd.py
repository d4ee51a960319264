"""``botkit exchange ...``: read-only looks at the exchange (placeholder until the client lands)."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "exchange", help="look at the exchange: time, instruments, balance, positions, orders"
    )
    parser.set_defaults(handler=lambda _args: 0)
