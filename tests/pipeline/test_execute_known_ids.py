"""The executor journals a plan's intents first and asks which ids the journal holds only when
the journal refuses one (a decision taken again): the same rows, ids, sends and reports as
asking first, and no read in a cycle whose ids are all new."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.errors import DuplicateOrderId, JournalError
from botkit.journal import Journal, NewOrder, OrderFilter, Outcome
from botkit.pipeline import build_plan
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import ManualClock, intent, snapshot
from tests.pipeline.test_execute import executor

MODES = [
    pytest.param({}, id="write-through"),
    pytest.param({"group_rows": 1000}, id="group-commit"),
    pytest.param({"group_rows": 1000, "transient": True}, id="transient"),
]


def _journal(tmp_path: Path, mode: dict[str, object]) -> Journal:
    path = "" if mode.get("transient") else tmp_path / "journal.sqlite"
    return Journal(path, clock=ManualClock(), **mode)  # type: ignore[arg-type]


def _rows(journal: Journal) -> list[tuple[int, int | None, str, Outcome | None, int]]:
    return [
        (r.id, r.cycle_id, r.cl_ord_id, r.outcome, r.attempts)
        for r in journal.orders(OrderFilter(include_dry=False))
    ]


@pytest.mark.parametrize("mode", MODES)
def test_a_decision_taken_again_is_skipped_and_the_rest_journaled_and_sent(
    tmp_path: Path, mode: dict[str, object]
) -> None:
    ex = FakeExchange()
    with _journal(tmp_path, mode) as journal:
        first = build_plan([intent(0), intent(1), intent(5, px=None)], snapshot())
        executor(ex, journal).run(first, cycle_id=journal.begin_cycle())
        # again: two intents and a refusal already journaled, one new intent, one new refusal
        again = build_plan(
            [intent(0), intent(2), intent(1), intent(5, px=None), intent(6, px=None)], snapshot()
        )
        cycle = journal.begin_cycle()
        report = executor(ex, journal).run(again, cycle_id=cycle)
        assert report.skipped == ("s1-r1-0", "s1-r1-1", "s1-r1-5")
        assert (report.sent, report.refused) == (1, 1)
        assert ex.calls == [("s1-r1-0", "s1-r1-1"), ("s1-r1-2",)]
        journal.end_cycle(cycle)
        accepted, rejected = Outcome.ACCEPTED, Outcome.REJECTED_LOCAL
        assert _rows(journal) == [
            (1, 1, "s1-r1-5", rejected, 0),
            (2, 1, "s1-r1-0", accepted, 1),
            (3, 1, "s1-r1-1", accepted, 1),
            (4, 2, "s1-r1-6", rejected, 0),  # the refusals' rows first, as in one call
            (5, 2, "s1-r1-2", accepted, 1),
        ]
        assert [c.id for c in journal.cycles()] == [1, 2]  # the second cycle's row written once
        intents = [e.cl_ord_id for e in journal.events_after(0) if e.kind == "intent"]
        assert intents == ["s1-r1-0", "s1-r1-1", "s1-r1-2"]  # no line of the refused write


def test_a_cycle_of_new_ids_asks_for_no_known_id(tmp_path: Path) -> None:
    ex = FakeExchange()
    with Journal(tmp_path / "journal.sqlite", clock=ManualClock()) as journal:
        executor(ex, journal).run(build_plan([intent(0)], snapshot()))
        seen: list[str] = []
        journal._conn.set_trace_callback(seen.append)
        executor(ex, journal).run(build_plan([intent(1), intent(2)], snapshot()))
        journal._conn.set_trace_callback(None)
    asked = [sql for sql in seen if sql.startswith("SELECT cl_ord_id FROM orders")]  # known_ids
    assert not asked
    assert any(sql.startswith("INSERT INTO orders") for sql in seen)
    assert ex.calls[-1] == ("s1-r1-1", "s1-r1-2")


@pytest.mark.parametrize("mode", MODES)
def test_the_journal_refuses_a_known_live_id_whole(tmp_path: Path, mode: dict[str, object]) -> None:
    """The refusal the executor relies on: a known id (or one named twice) is a
    ``DuplicateOrderId`` and nothing of the call is written; a dry-run id is no live id."""
    with _journal(tmp_path, mode) as journal:
        one, two, three = (intent(n) for n in range(3))
        journal.add_orders(None, [NewOrder(one, one.px, one.sz)], dry=False)
        journal.add_orders(
            None, [NewOrder(three, three.px, three.sz, outcome=Outcome.DRY_RUN)], dry=True
        )
        for orders in ([two, one], [two, two]):
            with pytest.raises(DuplicateOrderId, match="UNIQUE constraint failed"):
                journal.add_orders(None, [NewOrder(o, o.px, o.sz) for o in orders], dry=False)
        journal.add_orders(None, [NewOrder(o, o.px, o.sz) for o in (two, three)], dry=False)
        assert [r.cl_ord_id for r in journal.orders(OrderFilter(include_dry=False))] == [
            "s1-r1-0",
            "s1-r1-1",
            "s1-r1-2",
        ]
        assert issubclass(DuplicateOrderId, JournalError)  # the service still stops on others
