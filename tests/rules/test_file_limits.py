"""Strategy files are bounded before they are parsed: size (checked on the open file, never by
reading it whole), line length, parse cost, and symlinks out of the strategies folder.

Through ``botkit check`` (the CLI entry point) and the runner's reload path on the simulator.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest
from ruamel.yaml.scanner import RoundTripScanner

from botkit.cli import main
from botkit.runner.cycle import Runner
from tests.runner.conftest import T0, Rig, make_rig

GOOD = "strategy: {name}\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    cancel: {{}}\n"
BIG = 50_000_000
"""A sparse file this large costs no disk, but reading it whole allocates as much memory."""


def _no_journal(tmp_path: Path) -> str:
    """What the ok line says of the journal setting's file, which these tests leave missing."""
    return (
        f"id tags not checked against a journal: none at {tmp_path / 'none.sqlite'}"
        " — pass --journal FILE"
    )


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    r = make_rig(tmp_path)
    yield r
    r.client.close()
    r.journal.close()


def _good(name: str = "a") -> str:
    return GOOD.format(name=name)


def _check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str]]:
    code = main(["check", *args, "--instruments", "none"])
    return code, capsys.readouterr().out.splitlines()


def _sparse(path: Path, size: int) -> None:
    with path.open("wb") as out:
        out.truncate(size)


# --- size: checked on the open file, before anything is read --------------------------------


def test_check_refuses_a_huge_file_by_its_size_without_reading_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    huge = tmp_path / "huge.yaml"
    _sparse(huge, BIG)
    tracemalloc.start()
    try:
        code, lines = _check(capsys, str(huge))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert code == 1
    assert lines == [
        f"{huge}: the file is larger than 1 MB (50,000,000 bytes) — a strategy file is a few "
        "dozen lines",
        "1 problem",
    ]
    assert peak < BIG // 10  # the bytes were never read into memory


def test_the_reload_path_never_reads_a_huge_file_in_the_folder(rig: Rig) -> None:
    rig.write("a.yaml", _good())
    _sparse(rig.strategies / "huge.yaml", BIG)
    runner: Runner = rig.runner
    tracemalloc.start()
    try:
        for _ in range(3):  # every cycle re-reads the folder
            report = runner.reload(T0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert sorted(runner.store.strategies) == ["a"]
    assert any("larger than 1 MB" in str(e) for e in report.errors)
    assert peak < BIG // 10


# --- load time: no line the parser would take seconds over ----------------------------------


def test_check_refuses_a_line_longer_than_the_limit_with_its_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "long.yaml"
    path.write_text(_good() + "# " + "x" * 19_998 + "\n")
    code, lines = _check(capsys, str(path))
    assert code == 1
    assert lines == [
        f"{path}:7:10001: line 7 is 20,000 characters long (at most 10,000) — break it up: a "
        "strategy line holds a key and a short value or expression",
        "1 problem",
    ]


def test_comments_and_blank_lines_are_skipped_not_gathered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """ruamel's round-trip scanner builds every comment (with the blank lines after it) one
    character at a time: a comment followed by 1 MB of blank lines took 16 s to load. The
    loader must use a scanner that skips comments; this one refuses to run if it is asked."""

    def gathered(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the comment-keeping scanner was used")

    monkeypatch.setattr(RoundTripScanner, "scan_to_next_token", gathered)
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "none.sqlite"))  # not the checkout's
    path = tmp_path / "blank.yaml"
    path.write_text("# a comment\n" + "\n" * 900_000 + _good() + "# the end\n")
    code, lines = _check(capsys, str(path))
    assert (code, lines) == (0, [f"ok: 1 strategy (symbols not checked; {_no_journal(tmp_path)})"])


# --- symlinks out of the strategies folder ---------------------------------------------------


def _linked_folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "strategies"
    (folder / "sub").mkdir(parents=True)
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(_good("outside"))
    (folder / "out.yaml").symlink_to(outside)
    (folder / "sub" / "real.yaml").write_text(_good("inside"))
    (folder / "in.yaml").symlink_to(folder / "sub" / "real.yaml")
    return folder, outside


def test_check_refuses_a_symlink_out_of_the_folder_and_follows_one_inside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, outside = _linked_folder(tmp_path)
    code, lines = _check(capsys, str(folder))
    assert code == 1
    assert lines == [
        f"{folder / 'out.yaml'}: the file is a symlink to {outside}, outside the folder "
        f"{folder} — copy the file into the folder, or set allow_strategy_symlinks = true "
        "(BOTKIT_ALLOW_STRATEGY_SYMLINKS) to follow links out of it",
        "1 problem",
    ]


def test_the_setting_allows_symlinks_out_of_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, _ = _linked_folder(tmp_path)
    monkeypatch.setenv("BOTKIT_ALLOW_STRATEGY_SYMLINKS", "true")
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "none.sqlite"))  # not the checkout's
    assert _check(capsys, str(folder)) == (
        0,
        [f"ok: 2 strategies (symbols not checked; {_no_journal(tmp_path)})"],
    )


def test_the_reload_path_keeps_the_last_good_version_when_a_file_becomes_an_outside_link(
    rig: Rig, tmp_path: Path
) -> None:
    path = rig.write("a.yaml", _good())
    runner: Runner = rig.runner
    first = runner.reload(T0)
    assert [s.name for s in first.loaded] == ["a"]
    outside = tmp_path / "elsewhere.yaml"
    outside.write_text(_good() + "# changed\n")
    path.unlink()
    path.symlink_to(outside)
    report = runner.reload(T0)
    assert not report.removed  # not treated as deleted: on_delete is not applied
    assert [s.name for s in report.kept] == ["a"]
    assert "outside the folder" in str(report.errors[0])
    assert runner.store.strategies["a"].version == first.loaded[0].version


def _size_said(monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    """The file system says every file has ``size`` bytes (a file that grew after the look)."""
    import os

    real = os.fstat

    def fstat(fd: int) -> os.stat_result:
        info = real(fd)
        return os.stat_result((*info[:6], size, *info[7:]))

    monkeypatch.setattr(os, "fstat", fstat)


def test_a_file_that_grew_after_its_size_was_read_is_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botkit.sources.files import read_strategy_file

    path = tmp_path / "grown.yaml"
    path.write_bytes(b"# a comment\n" * 400)
    _size_said(monkeypatch, 10)
    assert read_strategy_file(path).content == path.read_bytes()


def test_a_file_that_grew_past_the_cap_after_its_size_was_read_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from botkit.errors import StrategyFileError
    from botkit.sources.files import read_strategy_file

    path = tmp_path / "grown.yaml"
    path.write_bytes(b"#" * 1_000_001)
    _size_said(monkeypatch, 10)
    with pytest.raises(StrategyFileError, match="larger than 1 MB"):
        read_strategy_file(path)
