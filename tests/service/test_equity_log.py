"""serve's equity file: bounded (rewritten with the newest samples past twice the number kept),
read back whole, and written by one serve at a time (another keeps its samples in memory)."""

from __future__ import annotations

import os
import socket
from decimal import Decimal
from pathlib import Path

import pytest
from loguru import logger

from botkit.app.equity_log import EquityLog, account_label
from botkit.cli import main
from botkit.settings import Settings


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


def test_each_account_s_curve_is_its_own_and_the_others_stay_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite.equity.jsonl"
    path.write_text('{"ts_ms": 1, "eq": "100", "upl": "0"}\n')  # written before accounts were
    first = EquityLog(path, account="aaa", keep=4)
    first.add((2, Decimal(101), None))
    first.close()
    warned: list[str] = []
    sink = logger.add(lambda m: warned.append(str(m.record["message"])), level="WARNING")
    try:
        second = EquityLog(path, account="bbb", keep=4)
    finally:
        logger.remove(sink)
    assert list(second.samples) == [(1, Decimal(100), Decimal(0))]  # the unlabelled line only
    assert warned == [
        f"{path}: 1 samples of another account (the settings named another exchange, API key"
        " or paper account when they were taken) are kept in the file and not shown — serve"
        " with those settings to see them, or delete the file while serve is stopped to drop"
        " them"
    ]
    for n in range(3, 12):  # past twice the number kept: the file is rewritten
        second.add((n, Decimal(n), None))
    second.close()
    again = EquityLog(path, account="bbb", keep=4)
    assert [s[0] for s in again.samples] == [8, 9, 10, 11]
    again.close()
    back = EquityLog(path, account="aaa", keep=4)
    assert [s[0] for s in back.samples] == [2]  # the rewrite kept the other account's line
    back.close()


def test_the_account_label_tells_accounts_apart_and_names_none(tmp_path: Path) -> None:
    def label(**values: object) -> str:
        return account_label(Settings.model_validate({"journal": tmp_path / "j.sqlite", **values}))

    live = {"exchange": "live", "base_url": "https://api.example.com", "api_secret": "s"}
    one = label(**live, api_key="KEY-ONE-0123456789")
    assert len(one) == 12
    assert "KEY" not in one
    assert one == label(**live, api_key="KEY-ONE-0123456789")
    assert one != label(**live, api_key="KEY-TWO-0123456789")
    assert one != label(**{**live, "base_url": "https://other.example.com"}, api_key="K")
    assert label() != label(paper_state=tmp_path / "other.sqlite")


def test_another_account_s_samples_do_not_make_every_sample_rewrite_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.sqlite.equity.jsonl"
    path.write_text("".join(f'{{"ts_ms": {n}, "eq": "1", "acct": "zzz"}}\n' for n in range(12)))
    log = EquityLog(path, account="aaa", keep=4)
    assert "(4 samples of another account in it are not shown)" in log.where
    held = [path.open("rb")]  # each file seen stays open: a new file cannot reuse its inode
    sizes = [len(path.read_text().splitlines())]
    for n in range(100, 120):
        log.add((n, Decimal(n), None))
        if path.stat().st_ino != os.fstat(held[-1].fileno()).st_ino:
            held.append(path.open("rb"))
        sizes.append(len(path.read_text().splitlines()))
    log.close()
    for file in held:
        file.close()
    assert len(held) - 1 <= 5, sizes  # a rewrite per 4 samples of this account, not per sample
    assert max(sizes) <= 4 + 2 * 4
    again = EquityLog(path, account="zzz", keep=4)
    assert [s[0] for s in again.samples] == [8, 9, 10, 11]  # the other account's newest
    again.close()


def test_a_serve_that_cannot_bind_lets_go_of_the_equity_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """The port taken: serve says so in one line, and leaves the equity file's lock behind it
    (a second serve in the same process used to warn that "another botkit serve" writes it)."""
    (tmp_path / "var").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "var" / "journal.sqlite"))
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for _ in range(2):
            assert main(["serve", "--port", str(port), "--nice", "0"]) == 2
            err = capfd.readouterr().err.splitlines()
            assert err == [
                f"error: --port: cannot serve on 127.0.0.1:{port}: Address already in use — pick"
                " a free port above 1024"
            ]
    free = EquityLog(tmp_path / "var" / "journal.sqlite.equity.jsonl")
    assert free.where.startswith("in ")  # the file is free to write
    free.close()
