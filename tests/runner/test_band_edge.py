"""Prices at the band's edge with a mark that moves between two reads of one cycle (the
simulator's ``prices.drift_per_request``), batches re-sent after 429s: with the safety margin
and the re-check before each send, no order is refused by the exchange with 10014 (the same
scenario without them shows the simulator does refuse: see tests/runner/band_edge.py)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from tests.runner.band_edge import run_band_edge


def test_the_drifting_mark_makes_the_exchange_refuse_edge_prices_without_margin_or_recheck(
    tmp_path: Path,
) -> None:
    figures = run_band_edge(tmp_path, cycles=2, margin_bps=Decimal(0), recheck=False)
    assert figures.refused_10014 > 0
    assert figures.events["price_band"] > 0  # each 10014 journaled with the exchange's bounds


def test_margin_and_recheck_leave_no_order_refused_with_10014(tmp_path: Path) -> None:
    figures = run_band_edge(tmp_path, cycles=3)
    assert figures.refused_10014 == 0
    assert figures.accepted > 0
    assert figures.other == {}
    assert figures.refused_locally == figures.orders - figures.accepted
    assert figures.events["band_recheck"] > 0  # the re-check said what it refused and why
