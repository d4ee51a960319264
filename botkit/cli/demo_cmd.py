"""``botkit demo``: run the main job on the embedded simulator (grows as the parts land)."""

from __future__ import annotations

import argparse
from typing import Any


def _run(_args: argparse.Namespace) -> int:
    print("botkit demo: the embedded simulator is not built yet; see the open issues.")
    return 0


def register(sub: Any) -> None:
    parser: argparse.ArgumentParser = sub.add_parser(
        "demo", help="run the example strategies on the embedded paper exchange"
    )
    parser.set_defaults(handler=_run)
