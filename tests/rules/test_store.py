"""Reloading: valid changes take effect, invalid ones keep the last good version, deletions stop."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.rules import OnDelete, StrategyStore, version_of
from botkit.rules.source import Scan, SourceText
from botkit.sources import FileSource
from tests.rules.helpers import BTC

GOOD = (
    "strategy: {name}\nsymbol: BTC_USDT_PERP\nevery: {every}\n"
    "rules:\n  - name: r\n    cancel: {{}}\n"
)


def write(path: Path, name: str = "alpha", every: str = "1m", extra: str = "") -> str:
    text = GOOD.format(name=name, every=every) + extra
    path.write_text(text, encoding="utf-8")
    return text


def test_first_refresh_loads_every_yaml_file(tmp_path: Path) -> None:
    text = write(tmp_path / "a.yaml")
    write(tmp_path / "b.yml", name="beta")
    (tmp_path / "notes.txt").write_text("not a strategy")
    (tmp_path / ".#a.yaml").write_text("editor lock file")
    store = StrategyStore(FileSource(tmp_path))
    report = store.refresh()
    assert sorted(s.name for s in report.loaded) == ["alpha", "beta"]
    assert sorted(store.strategies) == ["alpha", "beta"]
    assert store.strategies["alpha"].version == version_of(text)
    assert report.changed_anything
    assert not store.refresh().changed_anything  # nothing changed on disk


def test_valid_change_takes_effect(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml")
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    write(tmp_path / "a.yaml", every="5m")
    report = store.refresh()
    assert [s.name for s in report.changed] == ["alpha"]
    assert store.strategies["alpha"].period_ms == 300_000
    assert report.lines()[0].startswith("reloaded alpha (")


def test_invalid_change_keeps_the_last_good_version_and_says_where(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml")
    store = StrategyStore(FileSource(tmp_path))
    good = store.refresh().loaded[0]
    (tmp_path / "a.yaml").write_text(GOOD.format(name="alpha", every="1x"))
    report = store.refresh()
    assert store.strategies["alpha"] is good
    assert report.kept == (good,)
    assert [str(e) for e in report.errors] == [
        f"{tmp_path / 'a.yaml'}:3:8: every: '1x' is not a duration — write a number and a "
        "unit: 30s, 10m, 1h30m, 1d"
    ]
    assert not report.changed_anything
    again = store.refresh()  # still broken: still reported, still kept
    assert again.kept == (good,)
    assert len(again.errors) == 1
    write(tmp_path / "a.yaml", every="2m")
    fixed = store.refresh()
    assert [s.period_ms for s in fixed.changed] == [120_000]
    assert fixed.errors == ()


def test_invalid_new_file_runs_nothing(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("strategy: x\n")
    store = StrategyStore(FileSource(tmp_path))
    report = store.refresh()
    assert store.strategies == {}
    assert report.kept == ()
    assert len(report.errors) == 1


def test_deleted_file_stops_its_strategy_and_reports_on_delete(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml", extra="on_delete: keep\n")
    write(tmp_path / "b.yaml", name="beta")
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    (tmp_path / "a.yaml").unlink()
    report = store.refresh()
    assert [(s.name, s.on_delete) for s in report.removed] == [("alpha", OnDelete.KEEP)]
    assert sorted(store.strategies) == ["beta"]
    assert "stopped alpha" in report.lines()[0]
    assert "on_delete=keep" in report.lines()[0]


def test_renamed_strategy_stops_the_old_name_and_starts_the_new(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml")
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    write(tmp_path / "a.yaml", name="gamma")
    report = store.refresh()
    assert [s.name for s in report.removed] == ["alpha"]
    assert [s.name for s in report.loaded] == ["gamma"]


def test_two_files_with_one_strategy_name_load_only_the_first(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml")
    write(tmp_path / "b.yaml")
    store = StrategyStore(FileSource(tmp_path))
    report = store.refresh()
    assert [s.source for s in report.loaded] == [str(tmp_path / "a.yaml")]
    assert [str(e) for e in report.errors] == [
        f"{tmp_path / 'b.yaml'}:1:1: strategy name 'alpha' is already used by "
        f"{tmp_path / 'a.yaml'} — give every strategy its own name"
    ]


def test_instruments_enable_the_symbol_check(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(GOOD.format(name="a", every="1m").replace("BTC_", "XBT_"))
    store = StrategyStore(FileSource([tmp_path / "a.yaml"]))
    assert store.refresh().loaded  # symbols unknown: not checked
    report = store.refresh(instruments={BTC.symbol: BTC})  # re-checked against the instruments
    assert "unknown symbol 'XBT_USDT_PERP'" in str(report.errors[0])


def test_missing_folder_is_reported(tmp_path: Path) -> None:
    report = StrategyStore(FileSource(tmp_path / "nope")).refresh()
    assert [str(e) for e in report.errors] == [
        f"{tmp_path / 'nope'}: no such file or directory — check the path (a strategy file or "
        "a folder of *.yaml files)"
    ]


def test_a_running_name_is_not_taken_over_by_a_new_file(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml")
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    write(tmp_path / "a.yaml")  # sorts first, same strategy name
    report = store.refresh()
    assert store.strategies["alpha"].source == str(tmp_path / "b.yaml")
    assert "strategy name 'alpha' is already used by" in str(report.errors[0])
    assert str(report.errors[0]).startswith(f"{tmp_path / 'a.yaml'}:1:1:")


def test_a_name_conflict_clears_when_the_other_file_is_renamed(tmp_path: Path) -> None:
    write(tmp_path / "a.yaml")
    write(tmp_path / "b.yaml")
    store = StrategyStore(FileSource(tmp_path))
    assert len(store.refresh().errors) == 1
    write(tmp_path / "a.yaml", name="gamma")
    report = store.refresh()
    assert report.errors == ()
    assert sorted(store.strategies) == ["alpha", "gamma"]
    assert store.strategies["alpha"].source == str(tmp_path / "b.yaml")


class TextSource:
    """A strategy source with no file behind it: the store must need nothing but its text."""

    paths = ("memory",)

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def scan(self) -> Scan:
        files = tuple(SourceText(name, text.encode()) for name, text in sorted(self.texts.items()))
        return Scan(files)


def test_the_store_reloads_from_text_a_source_hands_it_without_any_file() -> None:
    source = TextSource()
    store = StrategyStore(source)
    source.texts["mem/a.yaml"] = GOOD.format(name="alpha", every="1m")
    assert [s.source for s in store.refresh().loaded] == ["mem/a.yaml"]
    source.texts["mem/a.yaml"] = GOOD.format(name="alpha", every="5m")
    assert store.refresh().lines()[0].startswith("reloaded alpha (mem/a.yaml, version ")
    del source.texts["mem/a.yaml"]
    assert [s.name for s in store.refresh().removed] == ["alpha"]
    assert store.paths == ("memory",)


def test_a_file_edited_in_place_to_the_same_size_is_reloaded_at_the_next_refresh(
    tmp_path: Path,
) -> None:
    """The unchanged check compares the bytes with those hashed the last time (no hash of
    unchanged bytes every cycle): an edit that keeps the size, in the same file, is a change.
    Fails if the check took an equal length, or the old key, for the same bytes."""
    path = tmp_path / "a.yaml"
    write(path)
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    for every in ("2m", "3m", "2m"):  # the same size each time, back to an earlier text too
        text = write(path, every=every)
        report = store.refresh()
        assert [s.name for s in report.changed] == ["alpha"]
        assert store.strategies["alpha"].version == version_of(text)
        assert not store.refresh().changed_anything


def test_a_file_refused_for_a_taken_name_is_tried_again_with_the_same_bytes(
    tmp_path: Path,
) -> None:
    """A file refused because its name runs from another file keeps no bytes to compare: the
    same bytes are tried again at every refresh and load once the name is free."""
    write(tmp_path / "a.yaml")
    store = StrategyStore(FileSource(tmp_path))
    store.refresh()
    write(tmp_path / "b.yaml")  # the same name, alpha
    assert "already used" in str(store.refresh().errors[0])
    assert "already used" in str(store.refresh().errors[0])
    (tmp_path / "a.yaml").unlink()
    report = store.refresh()
    assert [s.source for s in report.loaded] == [str(tmp_path / "b.yaml")]


def test_a_folder_s_files_are_named_as_their_paths_are_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The scan names each file of a folder ``str(Path(folder) / name)`` without making the
    path each cycle: the same text for a folder given as ``.``, with a trailing slash, with
    ``./`` or doubled slashes, and as a ``Path``."""
    folder = tmp_path / "s"
    folder.mkdir()
    write(folder / "a.yaml")
    write(folder / "b.yml", name="beta")
    write(tmp_path / "c.yaml", name="gamma")
    monkeypatch.chdir(tmp_path)
    for given in (".", "s", "s/", "./s", "s//", folder, str(folder) + "/"):
        source = FileSource([given, given])  # twice: listed once
        names = [f.file for f in source.scan().files]
        where = Path(given)
        expected = [str(where / n) for n in sorted(p.name for p in where.glob("*.y*ml"))]
        assert names == expected, given
        assert names
        assert [f.file for f in source.scan().files] == names  # and the next scan too


def test_a_symlink_named_directly_or_in_a_folder_is_judged_as_a_link(tmp_path: Path) -> None:
    """A folder's listing says which files are links (no ``lstat`` each); a file named directly
    is looked at itself: a link out of its folder is refused either way."""
    outside = tmp_path / "elsewhere.yaml"
    write(outside)
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "out.yaml").symlink_to(outside)
    for given in (folder, folder / "out.yaml"):
        (found,) = FileSource(given).scan().files
        assert "outside the folder" in str(getattr(found, "error", "")), given
        (followed,) = FileSource(given, outside_links=True).scan().files
        assert getattr(followed, "content", b"") == outside.read_bytes()


def test_the_file_names_a_source_keeps_stay_bounded_as_files_come_and_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import botkit.sources.files as files

    monkeypatch.setattr(files, "_CHILDREN_KEPT", 3)
    source = FileSource(tmp_path)
    for n in range(10):  # a file renamed every cycle (a deploy's names)
        for old in tmp_path.glob("*.yaml"):
            old.unlink()
        (tmp_path / f"s{n}.yaml").write_text(f"strategy: s{n}\n")
        assert [Path(t.file).name for t in source.scan().files] == [f"s{n}.yaml"]
        assert len(source._children) <= 3
