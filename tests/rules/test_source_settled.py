"""A folder's strategy file whose status has not changed since it was read, settled, is not
read again (``FileSource``: one ``stat`` a cycle instead of an open and a read), and every
change still reaches the next scan."""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from botkit.rules.source import SourceText
from botkit.sources import FileSource
from botkit.sources.files import SETTLED_NS

LATER = 3600 * 10**9


def later() -> int:
    """A wall clock an hour ahead: every file read now looks settled."""
    return time.time_ns() + LATER


@pytest.fixture
def opens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files ``os.open`` opened since the test began."""
    opened: list[str] = []
    real = os.open

    def counting(path: str | os.PathLike[str], flags: int, *args: int, **kwargs: int) -> int:
        opened.append(os.fspath(path))
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", counting)
    return opened


def contents(source: FileSource) -> dict[str, bytes]:
    found: dict[str, bytes] = {}
    for item in source.scan().files:
        assert isinstance(item, SourceText), item
        found[Path(item.file).name] = item.content
    return found


def newer_ctime(path: Path, write: Callable[[], object]) -> None:
    """``write`` until the file's change time moved (the kernel's clock ticks coarsely: two
    writes a moment apart can carry the same stamp)."""
    before = path.stat().st_ctime_ns
    write()
    while path.stat().st_ctime_ns == before:
        write()


def test_a_settled_unchanged_file_is_not_read_again(tmp_path: Path, opens: list[str]) -> None:
    """Fails if every scan opens every file again."""
    for name in ("a.yaml", "b.yaml"):
        (tmp_path / name).write_text(f"strategy: {name}\n")
    source = FileSource(tmp_path, now_ns=later)
    first = contents(source)
    assert len(opens) == 2
    assert (
        contents(source)
        == first
        == {"a.yaml": b"strategy: a.yaml\n", "b.yaml": b"strategy: b.yaml\n"}
    )
    assert len(opens) == 2  # the second scan took each file's status only


def test_an_edit_that_keeps_size_and_modification_time_is_read(tmp_path: Path) -> None:
    """The change time stands for the write even when the size and the modification time are
    put back as they were (``touch -r``, an editor keeping times). Fails if the status left
    the change time out."""
    path = tmp_path / "a.yaml"
    path.write_bytes(b"strategy: one\n")
    source = FileSource(tmp_path, now_ns=later)
    assert contents(source) == {"a.yaml": b"strategy: one\n"}
    old = path.stat()
    newer_ctime(path, lambda: path.write_bytes(b"strategy: two\n"))
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))
    assert path.stat().st_size == old.st_size
    assert path.stat().st_mtime_ns == old.st_mtime_ns
    assert contents(source) == {"a.yaml": b"strategy: two\n"}


def test_a_file_changed_lately_is_read_at_every_scan(tmp_path: Path, opens: list[str]) -> None:
    """A file that changed less than ``SETTLED_NS`` before its read could change again within
    the same tick of the file system's clock, unseen by its status: it is read again until a
    read finds it settled. Fails if a fresh file's status is trusted."""
    path = tmp_path / "a.yaml"
    path.write_bytes(b"strategy: one\n")
    changed = path.stat().st_ctime_ns
    clock = [changed + SETTLED_NS // 2]  # the read begins a second after the write
    source = FileSource(tmp_path, now_ns=lambda: clock[0])
    for _ in range(3):
        contents(source)
    assert len(opens) == 3
    clock[0] = changed + SETTLED_NS + 1  # settled at this read: kept from now on
    contents(source)
    contents(source)
    assert len(opens) == 4


def test_every_change_reaches_the_next_scan(tmp_path: Path) -> None:
    """Files written, rewritten to the same size, replaced by a rename, made unreadable (too
    large), deleted and created again, in a random order, each change followed by a scan that
    must hand the files' bytes as they are. Each write is stamped with a modification time of
    its own (a file system whose clock moved), the clock says every read is settled."""
    rng = random.Random(7)
    source = FileSource(tmp_path, now_ns=later)
    stamp = [1_700_000_000 * 10**9]

    def put(path: Path, data: bytes) -> None:
        path.write_bytes(data)
        stamp[0] += 10**9
        os.utime(path, ns=(stamp[0], stamp[0]))

    names = [f"s{n}.yaml" for n in range(4)]
    for _ in range(300):
        path = tmp_path / rng.choice(names)
        action = rng.randrange(5)
        if action == 0 and path.exists():
            path.unlink()
        elif action == 1:  # a new text of the same size
            put(path, f"strategy: {rng.randrange(10)}\n".encode())
        elif action == 2:  # written aside, renamed over
            aside = tmp_path / ".aside"
            put(aside, f"strategy: {rng.randrange(10)}\n".encode())
            aside.replace(path)
        elif action == 3:
            put(path, b"x: " + b"y" * rng.randrange(50) + b"\n")
        found: dict[str, bytes] = {}
        for item in source.scan().files:
            assert isinstance(item, SourceText)
            found[Path(item.file).name] = item.content
        assert found == {p.name: p.read_bytes() for p in sorted(tmp_path.glob("*.yaml"))}
