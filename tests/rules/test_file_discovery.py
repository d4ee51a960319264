"""The strategy folder is listed and each file read as the plain pathlib code would (issue 20:
the folder is read through ``os.scandir`` and each file with ``os.read``, every cycle)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from botkit.sources.files import SUFFIXES, discover, read_strategy_file


def _plain(folder: Path) -> list[Path]:
    """The listing as the pathlib expression it replaces gives it."""
    return sorted(
        p
        for p in folder.iterdir()
        if p.suffix in SUFFIXES and p.is_file() and not p.name.startswith((".", "#"))
    )


_NAMES = [
    "b.yaml", "a.yml", "A.yaml", "Z.yml", "_x.yaml", "10.yaml", "9.yaml", "a.b.yaml", "é.yaml",
    "x.YAML", "x.yaml~", "x.yaml.bak", ".hidden.yaml", "#edit.yaml", ".yaml", "yaml", "x.",
    "x..yaml", "notes.txt", " space.yaml",
]  # fmt: skip


def test_the_folder_lists_as_the_pathlib_expression_does(tmp_path: Path) -> None:
    """Fails if a name's suffix, a hidden or editor file, a link or a folder is judged
    otherwise than pathlib judges it, or the order differs."""
    for name in _NAMES:
        (tmp_path / name).write_text("strategy: x\n")
    (tmp_path / "dir.yaml").mkdir()
    (tmp_path / "link.yaml").symlink_to(tmp_path / "b.yaml")
    (tmp_path / "dirlink.yaml").symlink_to(tmp_path / "dir.yaml")
    (tmp_path / "broken.yaml").symlink_to(tmp_path / "nowhere.yaml")
    (tmp_path / "loop.yaml").symlink_to(tmp_path / "loop.yaml")
    found, problems = discover([tmp_path])
    assert problems == []
    assert found == _plain(tmp_path)
    assert [p.name for p in found][:3] == [" space.yaml", "10.yaml", "9.yaml"]
    assert "link.yaml" in [p.name for p in found]
    assert not {"dir.yaml", "dirlink.yaml", "broken.yaml", "loop.yaml"} & {p.name for p in found}


@pytest.mark.parametrize("size", [0, 1, 4095, 4096, 65_537, 1_000_000])
def test_a_file_reads_whole_at_any_size(tmp_path: Path, size: int) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"#" * (size % 256))
    assert read_strategy_file(path).content == path.read_bytes()


def test_short_reads_are_read_on_until_the_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails if a read that returns less than asked is taken for the end of the file."""
    path = tmp_path / "s.yaml"
    path.write_bytes(b"# line\n" * 1000)
    real = os.read
    monkeypatch.setattr(os, "read", lambda fd, n: real(fd, min(n, 7)))
    assert read_strategy_file(path).content == path.read_bytes()


def test_the_file_is_closed_after_a_read_and_after_a_refusal(tmp_path: Path) -> None:
    fds = len(os.listdir("/proc/self/fd"))
    path = tmp_path / "s.yaml"
    path.write_bytes(b"strategy: x\n")
    huge = tmp_path / "huge.yaml"
    huge.write_bytes(b"#" * 1_000_001)
    for _ in range(5):
        read_strategy_file(path)
        with pytest.raises(Exception, match="larger"):
            read_strategy_file(huge)
    assert len(os.listdir("/proc/self/fd")) == fds
