"""serve's equity file: bounded (rewritten with the newest samples past twice the number kept),
read back whole, and written by one serve at a time (another keeps its samples in memory)."""

from __future__ import annotations

from pathlib import Path

from botkit.app.equity_log import EquityLog


def test_the_file_stays_bounded_and_a_second_writer_keeps_to_memory(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite.equity.jsonl"
    log = EquityLog(path, keep=5)
    other = EquityLog(path, keep=5)
    assert other.where.startswith("in memory only: another botkit serve writes")
    for n in range(23):
        log.add((n, None, None))
    assert len(path.read_text().splitlines()) < 10
    assert [s[0] for s in log.samples] == [18, 19, 20, 21, 22]
    log.close()
    again = EquityLog(path, keep=5)
    assert [s[0] for s in again.samples] == [18, 19, 20, 21, 22]
    again.close()
    other.close()


def test_the_file_waits_for_the_journal_s_folder_and_never_makes_it(tmp_path: Path) -> None:
    folder = tmp_path / "var"
    path = folder / "journal.sqlite.equity.jsonl"
    log = EquityLog(path)
    log.add((1, None, None))
    assert not folder.exists()
    assert log.where.startswith("in memory until")
    folder.mkdir()  # the service's first run
    log.add((2, None, None))
    assert [s[0] for s in log.samples] == [1, 2]
    assert len(path.read_text().splitlines()) == 1  # from the first sample after it exists
    assert log.where.startswith(f"in {path}")
    log.close()
