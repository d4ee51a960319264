"""``botkit journal``: the operator's questions answered from a real journal file."""

from __future__ import annotations

import csv
import json
import random
from datetime import UTC, datetime
from pathlib import Path

import pytest
from freezegun import freeze_time

from botkit.cli import main
from botkit.cli.journal_cmd import format_ms
from botkit.errors import OutcomeUnknown
from botkit.journal import Evaluated, Journal
from botkit.pipeline import RiskLimits, build_plan
from botkit.runner.orders import Executor, RetryPolicy
from botkit.timeparse import parse_time
from tests.pipeline.fakes import FakeExchange
from tests.pipeline.helpers import FakeSleep, ManualClock, intent, snapshot

T0 = 1_700_000_000_000


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """A journal with one cycle: a rounded accepted order, a resolved ambiguous one, a refusal
    and a guard trip."""
    file = tmp_path / "journal.sqlite"
    clock = ManualClock(T0)
    with Journal(file, clock=clock) as journal:
        cycle = journal.begin_cycle(clock_offset_ms=15)
        journal.record_evaluations(
            cycle,
            strategy="dip",
            version="sha-1",
            rules=[Evaluated("buy", True, inputs={"mark": "100"})],
        )
        intents = [
            intent(0, strategy="dip", rule="buy", px="99.95", inputs={"mark": "100"}),
            intent(1, strategy="dip", rule="buy", px=None),
            intent(2, strategy="dip", rule="buy", sz="40"),
        ]
        plan = build_plan(intents, snapshot(), limits=RiskLimits(max_position=30))  # type: ignore[arg-type]
        ex = FakeExchange([("after", OutcomeUnknown("connection lost"))])
        Executor(ex, journal, sleep=FakeSleep(), rng=random.Random(1), policy=RetryPolicy(),
                 batch_rate=None).run(plan, cycle_id=cycle)  # fmt: skip
        journal.end_cycle(cycle)
    return file


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_show_answers_why_the_order_was_sent_and_what_happened(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "journal", "show", "--journal", str(path), "--id", "dip-buy-0")
    assert code == 0
    assert "why:     rule buy of strategy dip (slot 1, leg 0)" in out
    assert "inputs:  mark=100" in out
    assert "rounded: px 99.95 -> 99.9 (step 0.1)" in out
    assert '"px":"99.9"' in out
    assert "outcome: accepted ordId 1000000000000000" in out
    assert "(settled by looking it up)" in out
    assert "[unknown]" in out, "the history shows the ambiguous send"


def test_show_filters_by_outcome_and_prints_json(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "journal", "show", "--journal", str(path), "--outcome", "rejected_local", "--json"
    )
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["cl_ord_id"] for r in rows] == ["dip-buy-1", "dip-buy-2"]
    assert rows[0]["reasons"][0].startswith("px_missing:")
    assert rows[1]["reasons"][0].startswith("guard_max_position:")


@pytest.mark.parametrize(
    ("args", "count"),
    [
        (["--strategy", "dip"], 3),
        (["--strategy", "other"], 0),
        (["--rule", "buy", "--outcome", "accepted"], 1),
        (["--symbol", "BTC_USDT_PERP", "--cycle", "1"], 3),
        (["--since", str(T0 + 1)], 0),
        (["--until", "2023-11-14T22:13:21Z"], 3),
    ],
)
def test_show_filters(
    path: Path, capsys: pytest.CaptureFixture[str], args: list[str], count: int
) -> None:
    _, out, _ = run(capsys, "journal", "show", "--journal", str(path), "--json", *args)
    assert len(out.splitlines()) == count


@pytest.mark.parametrize(("since", "count"), [("1h", 3), ("59m59s", 0), ("now", 0)])
def test_an_age_reaches_back_from_the_machines_clock(
    path: Path, capsys: pytest.CaptureFixture[str], since: str, count: int
) -> None:
    """The records are stamped at T0; an hour later ``--since 1h`` still holds them. (asyncio
    keeps the real clock: a loopback server's loop in another thread must not see the freeze,
    as in tests/exchange/test_clock.py.)"""
    an_hour_later = datetime.fromtimestamp((T0 + 3_600_000) / 1000, tz=UTC)
    with freeze_time(an_hour_later, ignore=["asyncio"]):
        _, out, _ = run(
            capsys, "journal", "show", "--journal", str(path), "--json", "--since", since
        )
    assert len(out.splitlines()) == count


def test_tail_prints_the_newest_records(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "journal", "tail", "--journal", str(path), "-n", "3")
    lines = out.splitlines()
    assert code == 0
    assert len(lines) == 3
    assert lines[-1].endswith("[resolved by lookup]")  # the newest event: the last outcome
    assert lines[0].startswith(format_ms(T0))


def test_tail_follow_polls_until_interrupted(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    polls: list[float] = []

    def sleep(seconds: float) -> None:
        polls.append(seconds)
        if len(polls) == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr("botkit.cli.journal_cmd.time.sleep", sleep)
    code, out, _ = run(capsys, "journal", "tail", "--journal", str(path), "-f", "--interval", "0")
    assert code == 130
    assert polls == [0.2, 0.2], "the poll interval is bounded below"
    assert "[resolved by lookup]" in out


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_export_writes_every_order(
    path: Path, tmp_path: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = tmp_path / f"orders.{fmt}"
    code, _, err = run(
        capsys, "journal", "export", "--journal", str(path), "--format", fmt, "--out", str(out_file)
    )
    assert code == 0
    assert "3 order(s) written" in err
    text = out_file.read_text(encoding="utf-8")
    if fmt == "csv":
        rows = list(csv.DictReader(text.splitlines()))
        # refusals are journaled first, then the intents that are sent
        assert [r["outcome"] for r in rows] == ["rejected_local", "rejected_local", "accepted"]
        assert json.loads(rows[2]["inputs"]) == {"mark": "100"}
    else:
        rows = [json.loads(line) for line in text.splitlines()]
        assert [r["cl_ord_id"] for r in rows] == ["dip-buy-1", "dip-buy-2", "dip-buy-0"]


def test_summary_counts_per_cycle(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "journal", "summary", "--journal", str(path))
    header, row, total = out.splitlines()
    assert code == 0
    assert header.split() == [
        "cycle", "started", "dry", "offset", "evals", "fired", "orders", "accepted",
        "rejected_local", "rejected", "failed", "unsettled", "dry_run", "trips",
    ]  # fmt: skip
    counts = ["1", "1", "3", "1", "2", "0", "0", "0", "0", "1"]
    assert row.split() == ["1", format_ms(T0), "no", "15", *counts]
    assert total == "1 cycle(s)"


def test_prune_reports_what_it_dropped(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "journal", "prune", "--journal", str(path), "--before", str(T0 + 1))
    assert code == 0
    assert "3 orders" in out
    assert "kept 0 unsettled" in out


def test_journal_path_comes_from_the_settings(
    path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOTKIT_JOURNAL", str(path))
    code, out, _ = run(capsys, "journal", "summary")
    assert code == 0
    assert "1 cycle(s)" in out


def test_a_missing_journal_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = run(capsys, "journal", "show", "--journal", str(tmp_path / "none.sqlite"))
    assert code == 2
    assert err.startswith("error: no journal at ")
    assert "Traceback" not in err
    assert not (tmp_path / "none.sqlite").exists()


def test_a_bad_time_is_a_usage_error(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "journal", "show", "--journal", str(path), "--since", "yesterday")
    assert code == 2
    assert "--since: cannot read 'yesterday'" in err


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1700000000000", T0),
        ("2023-11-14T22:13:20Z", T0),
        ("2023-11-15T00:13:20+02:00", T0),
        ("2h", T0 - 7_200_000),
        ("7d", T0 - 7 * 86_400_000),
        ("90s", T0 - 90_000),
    ],
)
def test_times_are_read_in_three_forms(text: str, expected: int) -> None:
    assert parse_time(text, T0) == expected


def test_an_unreadable_time_says_what_to_write() -> None:
    with pytest.raises(ValueError, match="ISO-8601 with a zone"):
        parse_time("soon", T0)
