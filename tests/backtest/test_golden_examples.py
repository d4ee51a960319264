"""The shipped examples' backtests on the shipped week give today's results, exactly.

A golden test for the speed work of issue 20 (goal 4: "the production path stays the production
path"): each set of shipped strategies is backtested on ``data/btc-synth-7d.csv`` through the
CLI (``botkit backtest --report DIR --journal FILE``) and compared with the figures committed in
``golden_examples.json``: the SHA-256 and row count of ``orders.csv``, ``fills.csv`` and
``trades.csv``, every figure of ``summary.json`` (all but ``run``, which names the paths given,
and ``files``, the report's file list; no field of it is wall-clock), and a digest of every
order the journal holds with its inputs (all but the ``cycle_id``: which cycles are journaled is
the runner's business, which orders were sent and why is not). The equity series is pinned by
the figures computed from every one of its points (final equity, return, the drawdown's amount,
peak and trough, Sharpe, Sortino, Calmar, exposure time, to 8 decimals). The HTML page and the
PNG charts are not pinned (their layout is free to change).

A change that moves any of them fails here. When a change is *meant* to change results, say so
in its commit and rewrite the file::

    .venv/bin/python -m tests.backtest.test_golden_examples
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from botkit.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data" / "btc-synth-7d.csv"
GOLDEN = Path(__file__).with_name("golden_examples.json")
ONE_DAY = ["--end", "2024-01-02T00:00:00Z"]

SETS: dict[str, tuple[tuple[str, ...], list[str]]] = {
    # the README's and docs/backtest.md's pair
    "dip-ladder+exits": (("btc-dip-ladder.yaml", "btc-exits.yaml"), []),
    # issue 20's scenario A on the week
    "dip-ladder": (("btc-dip-ladder.yaml",), []),
    # docs/strategies.md's indicator examples
    "ema-cross": (("btc-ema-cross.yaml",), []),
    "rsi-ladder": (("btc-rsi-ladder.yaml",), []),
    # the kept grid places ~1,400 orders a day: its first day keeps the suite fast
    "grid-keep-day": (("btc-grid-keep.yaml",), ONE_DAY),
}
FILES = ("orders.csv", "fills.csv", "trades.csv")


def _run(tmp: Path, files: tuple[str, ...], extra: list[str]) -> dict[str, Any]:
    """Backtest through the CLI; the pinned view of what it wrote."""
    from botkit.journal import Journal, OrderFilter

    report, journal_path = tmp / "report", tmp / "journal.sqlite"
    strategies = [str(ROOT / "strategies" / name) for name in files]
    args = ["backtest", "--data", str(DATA), "--strategies", *strategies, *extra,
            "--report", str(report), "--journal", str(journal_path)]  # fmt: skip
    assert main(args) == 0
    pinned: dict[str, Any] = {}
    for name in FILES:
        data = (report / name).read_bytes()
        pinned[name] = {
            "rows": data.count(b"\n") - 1,
            "sha256": hashlib.sha256(data).hexdigest(),
        }
    summary = json.loads((report / "summary.json").read_text())
    pinned["summary"] = {k: v for k, v in summary.items() if k not in ("run", "files")}
    with Journal(journal_path, clock=lambda: 0) as journal:
        orders = [r.as_dict() for r in journal.orders(OrderFilter())]
    for order in orders:
        del order["cycle_id"]
    text = json.dumps(orders, sort_keys=True, default=str).encode()
    pinned["journal_orders"] = {
        "count": len(orders),
        "sha256": hashlib.sha256(text).hexdigest(),
    }
    return pinned


def _golden() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(GOLDEN.read_text())
    return loaded


@pytest.mark.parametrize("name", list(SETS))
def test_shipped_example_backtest_gives_the_pinned_results(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, extra = SETS[name]
    got = _run(tmp_path, files, extra)
    capsys.readouterr()
    want = _golden()[name]
    assert got["summary"] == want["summary"]  # first: the readable difference
    for key in (*FILES, "journal_orders"):
        assert got[key] == want[key], key


def _write() -> None:  # pragma: no cover - run by hand when results are meant to change
    import tempfile

    golden: dict[str, Any] = {}
    for name, (files, extra) in SETS.items():
        with tempfile.TemporaryDirectory() as tmp:
            golden[name] = _run(Path(tmp), files, extra)
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    sys.stderr.write(f"wrote {GOLDEN}\n")


if __name__ == "__main__":  # pragma: no cover
    _write()
