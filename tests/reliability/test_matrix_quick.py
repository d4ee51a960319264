"""The quick subset of the fault matrix that ``make test`` runs (``make reliability`` runs all
of it, longer): the real runner and loop under each fault, and ``botkit run`` killed and
stopped as a subprocess. Green means no duplicate, no unsettled order, journal == exchange."""

from __future__ import annotations

import sys
from collections.abc import Iterator

import pytest
from loguru import logger

from tests.reliability.harness import LADDER_RUNGS, Tally
from tests.reliability.inproc import run_in_process
from tests.reliability.matrix import COLUMNS, QUICK, render
from tests.reliability.procs import run_sigkill, run_sigterm
from tests.reliability.rows import ROWS, Row

QUICK_ROWS = [r for r in ROWS if "quick" in r.tags]


@pytest.fixture(autouse=True)
def _quiet() -> Iterator[None]:
    logger.remove()  # a line per cycle per row would only slow the run down
    yield
    logger.add(sys.stderr)


@pytest.mark.parametrize("row", QUICK_ROWS, ids=[r.name for r in QUICK_ROWS])
def test_a_quick_row_is_green_and_loses_no_cycle(row: Row) -> None:
    run = run_in_process(row.name, row.arm, cycles=QUICK.cycles, timeout_s=row.timeout_s)
    tally = run.tally
    assert tally.ok, tally
    assert tally.cycles == QUICK.cycles
    assert tally.intended == QUICK.cycles * LADDER_RUNGS
    assert tally.placed == tally.intended
    assert (tally.cycles_failed, tally.slots_missed) == (0, 0), tally


def test_faults_really_fire_in_the_quick_rows() -> None:
    row = next(r for r in QUICK_ROWS if r.name == "dropped after processing")
    run = run_in_process(row.name, row.arm, cycles=QUICK.cycles)
    assert run.tally.faults > 0
    resolved = [o for r in run.reports if r.execution for o in r.execution.outcomes if o.resolved]
    assert resolved, "no order was settled by lookup: the fault never hit a batch"


@pytest.mark.slow
def test_sigkill_at_a_random_moment_then_restart_is_green() -> None:
    tally = run_sigkill("SIGKILL + restart", kills=1)
    assert tally.ok, tally


@pytest.mark.slow
def test_sigterm_mid_batch_settles_everything_without_reconcile() -> None:
    tally = run_sigterm("SIGTERM mid-batch", stops=1)
    assert tally.ok, tally


def test_the_table_has_every_column_and_flags_a_red_row() -> None:
    red = Tally(row="bad", intended=5, placed=5, duplicates=1)
    text = render([Tally(row="good", intended=5, placed=5), red])
    header = text.splitlines()[0]
    assert all(c in header for c in COLUMNS)
    assert "| good |" in text
    assert text.count("FAILED") == 1
