"""docs/strategies.md stays true: its YAML examples load, and it names every context value."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from botkit.rules import loads
from botkit.rules.context import ROOTS, AnyKey, Method, View, reference
from botkit.rules.series import reference as series_reference
from tests.rules.helpers import BTC

DOC = Path(__file__).resolve().parents[2] / "docs" / "strategies.md"
TEXT = DOC.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```yaml\n(.*?)```", TEXT, flags=re.DOTALL)
HEAD = (
    "strategy: doc\nsymbol: BTC_USDT_PERP\nevery: 1m\n"
    "rules:\n  - name: ladder-on-dip\n    cancel: {}\n"
)
ETH = BTC.model_copy(update={"symbol": "ETH_USDT_PERP", "tSz": BTC.tSz / 10})


def _as_file(block: str) -> str | None:
    if block.startswith("strategy:"):
        return block
    if block.startswith("  - name:"):
        return HEAD + block
    if block.startswith("    "):
        return HEAD + "  - name: r\n" + block
    return None  # a comment-only snippet


@pytest.mark.parametrize(
    "block", [b for b in BLOCKS if _as_file(b)], ids=lambda b: b.split("\n")[0]
)
def test_every_yaml_example_loads(block: str) -> None:
    text = _as_file(block)
    assert text is not None
    loads(text, "docs/strategies.md", instruments={BTC.symbol: BTC, ETH.symbol: ETH})


def _names(path: str, view: type[View]) -> list[str]:
    out: list[str] = []
    for name, field in view.FIELDS.items():
        kind = field.kind
        if isinstance(kind, AnyKey):
            out += _names(f"{path}.{name}.CODE", kind.of)
        elif (
            isinstance(kind, type)
            and issubclass(kind, View)
            and name not in ("buys", "sells", "mine", "filled", "long", "short", "net")
        ):
            out += _names(f"{path}.{name}", kind)
        elif isinstance(kind, Method):
            out.append(f"{path}.{name}(")
        else:
            out.append(f"{path}.{name}")
    return out


def test_the_reference_names_every_context_value() -> None:
    names = [
        n
        for root, declared in ROOTS.items()
        if isinstance(declared.kind, type)
        for n in _names(root, declared.kind)
    ]
    missing = [n for n in names if f"`{n}" not in TEXT]
    assert missing == []
    assert len(names) > 100


def test_the_reference_is_the_declared_table() -> None:
    """Every context field is declared once (ROOTS and the views' FIELDS); the page's tables
    are exactly what that declaration makes: names, types and meanings, in order."""
    assert reference() in TEXT


def test_the_page_holds_the_table_of_series_functions() -> None:
    assert series_reference() in TEXT
