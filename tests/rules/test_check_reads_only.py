"""``botkit check`` reads the journal and leaves it as it is: a review found it opened the file
as the service's writer does (``Journal(...)``) — it bumped a current journal's header, migrated
an older one (1 → 8, and to WAL), wrote the journal's tables into any SQLite file (then said
``ok``), turned an empty file into a journal, waited 30 s behind a writer and then blamed the
path, and said nothing when it found no journal. Each test here fails on that open."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from botkit.cli import main
from botkit.journal import Journal
from botkit.journal.schema import MIGRATIONS
from botkit.ports.journal import StrategyRecord
from botkit.rules.ids import strategy_tag

FIRST, SECOND, OTHER = "grid-x-8918", "grid-x-55329", "grid-x-8919"  # FIRST, SECOND: one tag
STRATEGY = (
    "strategy: {name}\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n"
    "    when: price.mark > 0\n"
    "    place:\n      order: {{side: BUY, type: LIMIT, px: price.mark * 0.9, sz: 1}}\n"
)


@pytest.fixture(autouse=True)
def _no_settings_journal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "none.sqlite"))  # not the checkout's


def strategy(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(STRATEGY.format(name=name), encoding="utf-8")
    return path


def current(tmp_path: Path) -> Path:
    """A journal of this botkit that knows FIRST (it ran; its file is gone)."""
    path = tmp_path / "journal.sqlite"
    with Journal(path, clock=lambda: 1_000) as journal:
        journal.record_strategies(
            [StrategyRecord(FIRST, strategy_tag(FIRST), "v", "a.yaml", "keep", 0, None)]
        )
        journal.mark_strategies_removed([FIRST])
    return path


def schema_1(tmp_path: Path) -> Path:
    """A journal an old botkit (schema 1, WAL, no ``strategies`` table) wrote: FIRST placed an
    order."""
    path = tmp_path / "v1.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        for statement in MIGRATIONS[0]:
            conn.execute(statement)
        conn.execute(
            "INSERT INTO orders (ts_ms, strategy, rule, slot, leg, cl_ord_id, symbol, side, type,"
            " pos_side, mgn_mode, reduce_only, intent_sz, state)"
            " VALUES (1, ?, 'r', 0, 0, ?, 'BTC_USDT_PERP', 'BUY', 'LIMIT', 'BOTH', 'CROSS', 0,"
            " '1', 'sent')",
            (FIRST, f"bk{strategy_tag(FIRST)}aaaa-0-0"),
        )
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    return path


def state(path: Path) -> tuple[str, int, list[str]]:
    """The file's bytes, its mtime and what lies beside it."""
    beside = sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f"{path.name}-"))
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns, beside


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["check", "--offline", *args])
    out, err = capsys.readouterr()
    return code, out, err


def twin_line(file: Path, journal: Path) -> str:
    return (
        f"{file}:1:1: strategy name '{SECOND}' has the same client order id tag (7ljhhs) as"
        f" '{FIRST}' in the journal {journal}: their orders could not be told apart — rename"
        f" '{SECOND}': '{FIRST}' ran before and its orders (open ones, fills to come) carry"
        " that tag"
    )


@pytest.mark.parametrize("make", [current, schema_1], ids=["current", "schema-1"])
def test_check_reads_a_journal_and_leaves_it_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path]
) -> None:
    journal = make(tmp_path)
    before = state(journal)
    assert before[2] == []  # no process has it open
    twin = strategy(tmp_path, SECOND)
    assert check(capsys, "--journal", str(journal), str(twin)) == (
        1,
        f"{twin_line(twin, journal)}\n1 problem\n",
        "",
    )
    other = strategy(tmp_path, OTHER)
    assert check(capsys, "--journal", str(journal), str(other)) == (
        0,
        f"ok: 1 strategy (symbols and limits checked; id tags checked against the journal"
        f" {journal})\n",
        "",
    )
    assert state(journal) == before  # the same bytes and mtime, no -wal or -shm left


def paper(tmp_path: Path) -> Path:
    """The simulator's SQLite file beside the journal: an easy slip."""
    path = tmp_path / "paper.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT)")
    conn.close()
    return path


def empty(tmp_path: Path) -> Path:
    path = tmp_path / "empty.sqlite"
    path.write_bytes(b"")
    return path


def text(tmp_path: Path) -> Path:
    path = tmp_path / "notes.txt"
    path.write_text("not a database, and longer than a database's header of 100 bytes\n" * 3)
    return path


@pytest.mark.parametrize(
    ("make", "why"),
    [(paper, "no orders table"), (empty, "no orders table"), (text, "not an SQLite database")],
    ids=["sqlite", "empty", "text"],
)
def test_check_refuses_a_file_that_is_not_a_journal_and_leaves_it_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make: Callable[[Path], Path], why: str
) -> None:
    path = make(tmp_path)
    before = state(path)
    assert check(capsys, "--journal", str(path), str(strategy(tmp_path, OTHER))) == (
        1,
        "",
        f"error: {path} is not a botkit journal ({why}) — name the journal setting's file\n",
    )
    assert state(path) == before


@pytest.fixture
def held(tmp_path: Path) -> Iterator[Path]:
    """A current journal another connection holds in a write transaction (``BEGIN IMMEDIATE``,
    a row changed) for the whole test, as a service's long write would."""
    journal = current(tmp_path)
    writer = sqlite3.connect(journal, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")
    writer.execute("UPDATE strategies SET source = 'b.yaml'")
    try:
        yield journal
    finally:
        writer.execute("ROLLBACK")
        writer.close()


def test_check_reads_a_journal_a_writer_holds_at_once(
    held: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twin = strategy(tmp_path, SECOND)
    assert check(capsys, "--journal", str(held), str(twin)) == (
        1,
        f"{twin_line(twin, held)}\n1 problem\n",
        "",
    )
    assert state(held)[2] == ["journal.sqlite-shm", "journal.sqlite-wal"]  # the writer's


def test_the_ok_line_says_when_no_journal_was_checked_and_how_to(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    other = strategy(tmp_path, OTHER)
    assert check(capsys, str(other)) == (
        0,
        "ok: 1 strategy (symbols and limits checked; id tags not checked against a journal:"
        f" none at {tmp_path / 'none.sqlite'} — pass --journal FILE)\n",
        "",
    )
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path))  # the setting names a folder
    assert check(capsys, str(other)) == (
        1,
        "",
        f"error: journal {tmp_path} is a folder — name the journal file\n",
    )
    assert check(capsys, "--journal", str(tmp_path), str(other))[2] == (
        f"error: journal {tmp_path} is a folder — name the journal file\n"
    )


def test_a_corrupt_journal_is_one_line_and_left_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    journal = current(tmp_path)
    data = bytearray(journal.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[2 * size : 2 * size + 16] = b"\xff" * 16  # page 3's header
    journal.write_bytes(bytes(data))
    before = state(journal)
    code, out, err = check(capsys, "--journal", str(journal), str(strategy(tmp_path, OTHER)))
    assert (code, out) == (1, "")
    assert err.startswith(f"error: journal {journal} is corrupt (")
    assert "\\n" not in err  # SQLite's lines joined: one line
    assert err.count("\n") == 1
    assert state(journal) == before
