"""The matrix row "awkward values": strategies placing whole sizes written with decimals and
prices at the band's edge while the mark moves between reads; the exchange refuses none of
their orders (botkit checks all of it locally), and the row's tally says so."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from loguru import logger

from tests.reliability.harness import Tally
from tests.reliability.inproc import run_in_process
from tests.reliability.matrix import render
from tests.reliability.rows import ROWS


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logger.remove()
    yield
    logger.add(sys.stderr)


def test_awkward_values_leave_no_order_refused_by_the_exchange() -> None:
    row = next(r for r in ROWS if r.name == "awkward values")
    run = run_in_process(
        row.name,
        row.arm,
        cycles=6,
        extra_strategies=dict(row.extra_strategies),
        refusals=row.refusals,
    )
    tally = run.tally
    assert tally.ok, tally
    assert tally.refused == 0, tally.notes
    assert tally.placed > 0
    assert tally.intended > tally.placed  # band-edge prices refused locally, with reasons


def test_a_refusal_makes_a_row_that_allows_none_red() -> None:
    red = Tally(row="awkward", intended=5, placed=4, refused=1, refusals_allowed=False)
    assert not red.ok
    assert "FAILED" in render([red])
    assert Tally(row="other", intended=5, placed=4, refused=1).ok
