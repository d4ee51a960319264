"""Well-formed candle files load exactly, in every documented layout."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from botkit.backtest.candle_writer import write_candles
from botkit.backtest.candles import Bar, load_candles

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
M = 60_000


def bars(n: int, step: int = M) -> list[Bar]:
    out = []
    for i in range(n):
        o = Decimal(100 + i)
        out.append(Bar(T0 + i * step, o, o + 2, o - Decimal("1.5"), o + 1, Decimal("0.25")))
    return out


@pytest.mark.parametrize("name", ["c.csv", "c.jsonl", "c.ndjson"])
def test_written_file_loads_back_identical(tmp_path: Path, name: str) -> None:
    expected = bars(50)
    write_candles(expected, tmp_path / name)
    series = load_candles(tmp_path / name)
    assert list(series.bars) == expected
    assert all(type(x) is Decimal for b in series.bars for x in b[1:])
    assert series.interval_ms == M
    assert (series.start_ms, series.end_ms) == (T0, T0 + 50 * M)
    assert series.gaps == ()


def test_quoted_csv_takes_the_checked_path_and_gives_the_same_bars(tmp_path: Path) -> None:
    expected = bars(5)
    lines = ["time,open,high,low,close,volume\n"]
    lines += [",".join(f'"{x}"' for x in b) + "\n" for b in expected]
    (tmp_path / "c.csv").write_text("".join(lines), encoding="utf-8")
    assert list(load_candles(tmp_path / "c.csv").bars) == expected


def test_csv_columns_in_any_order_iso_times_crlf_and_bom(tmp_path: Path) -> None:
    text = (
        "\ufeffClose,low,time,high,open,note\r\n"
        "105.5,90,2024-01-01T00:00:00Z,110,100,a\r\n"
        "106,91,2024-01-01T01:01:00+01:00,111,101,b\r\n"
    )
    (tmp_path / "c.csv").write_text(text, encoding="utf-8")
    series = load_candles(tmp_path / "c.csv")
    assert list(series.bars) == [
        Bar(T0, Decimal(100), Decimal(110), Decimal(90), Decimal("105.5"), Decimal(0)),
        Bar(T0 + M, Decimal(101), Decimal(111), Decimal(91), Decimal(106), Decimal(0)),
    ]


def test_exchange_rows_are_read_in_their_order(tmp_path: Path) -> None:
    # [low, high, open, close, amt, qty, tC, sT, cT]
    rows = [
        f'["90","110","100","105","1000","7.5",12,{T0},{T0 + M - 1}]\n',
        f'["91","111","101","106","1000","8",12,"{T0 + M}","{T0 + 2 * M - 1}"]\n',
    ]
    (tmp_path / "c.jsonl").write_text("".join(rows), encoding="utf-8")
    series = load_candles(tmp_path / "c.jsonl")
    assert list(series.bars) == [
        Bar(T0, Decimal(100), Decimal(110), Decimal(90), Decimal(105), Decimal("7.5")),
        Bar(T0 + M, Decimal(101), Decimal(111), Decimal(91), Decimal(106), Decimal(8)),
    ]


def test_json_numbers_become_exact_decimals(tmp_path: Path) -> None:
    text = (
        f'{{"time":{T0},"open":0.1,"high":0.3,"low":0.1,"close":0.2}}\n'
        f'{{"time":"2024-01-01T00:01:00Z","open":1,"high":2,"low":1,"close":2,"volume":3}}\n'
    )
    (tmp_path / "c.jsonl").write_text(text, encoding="utf-8")
    first, second = load_candles(tmp_path / "c.jsonl").bars
    assert first == Bar(
        T0, Decimal("0.1"), Decimal("0.3"), Decimal("0.1"), Decimal("0.2"), Decimal(0)
    )
    assert str(first.close) == "0.2"
    assert second == Bar(T0 + M, Decimal(1), Decimal(2), Decimal(1), Decimal(2), Decimal(3))


def test_start_is_inclusive_end_exclusive(tmp_path: Path) -> None:
    write_candles(bars(10), tmp_path / "c.csv")
    series = load_candles(tmp_path / "c.csv", start_ms=T0 + 2 * M, end_ms=T0 + 5 * M)
    assert [b.time_ms for b in series.bars] == [T0 + 2 * M, T0 + 3 * M, T0 + 4 * M]


def test_gaps_outside_the_selected_period_do_not_matter(tmp_path: Path) -> None:
    data = bars(10)
    write_candles(data[:3] + data[5:], tmp_path / "c.csv")
    series = load_candles(tmp_path / "c.csv", start_ms=T0 + 5 * M)
    assert len(series) == 5
    assert series.gaps == ()


def test_interval_is_the_most_common_step_or_given(tmp_path: Path) -> None:
    data = bars(10, step=5 * M)
    write_candles(data[:2] + data[4:], tmp_path / "c.csv")
    assert load_candles(tmp_path / "c.csv", allow_gaps=True).interval_ms == 5 * M
    write_candles(data[:1], tmp_path / "one.csv")
    assert load_candles(tmp_path / "one.csv", interval_ms=5 * M).interval_ms == 5 * M


prices = st.decimals(min_value=Decimal("0.01"), max_value=Decimal(10**6), places=2)


@st.composite
def candle_lists(draw: st.DrawFn) -> list[Bar]:
    out = []
    for i in range(draw(st.integers(min_value=2, max_value=30))):
        a, b, c, d = sorted(draw(st.lists(prices, min_size=4, max_size=4)))
        o, cl = (b, c) if draw(st.booleans()) else (c, b)
        out.append(Bar(T0 + i * M, o, d, a, cl, draw(prices)))
    return out


@settings(max_examples=40, deadline=None)
@given(data=candle_lists(), name=st.sampled_from(["c.csv", "c.jsonl"]))
def test_any_valid_series_round_trips(tmp_path_factory: pytest.TempPathFactory,
                                      data: list[Bar], name: str) -> None:  # fmt: skip
    path = tmp_path_factory.mktemp("rt") / name
    write_candles(data, path)
    assert list(load_candles(path).bars) == data


def test_plain_crlf_file_and_one_without_a_last_newline_load_the_same(tmp_path: Path) -> None:
    expected = bars(4)
    write_candles(expected, tmp_path / "lf.csv")
    text = (tmp_path / "lf.csv").read_text()
    (tmp_path / "crlf.csv").write_bytes(text.replace("\n", "\r\n").encode())
    (tmp_path / "open.csv").write_text(text.rstrip("\n"))
    for name in ("crlf.csv", "open.csv"):
        assert list(load_candles(tmp_path / name).bars) == expected, name


def test_a_short_row_next_to_a_long_one_is_reported_not_shifted(tmp_path: Path) -> None:
    from botkit.errors import DataFileError

    write_candles(bars(4), tmp_path / "c.csv")
    lines = (tmp_path / "c.csv").read_text().splitlines()
    lines[2] = lines[2].rsplit(",", 1)[0]  # a cell short ...
    lines[3] = lines[3] + ",7"  # ... and one too many: the cell count stays the same
    (tmp_path / "c.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError) as err:
        load_candles(tmp_path / "c.csv")
    assert "c.csv:3: 5 fields, the header names 6" in str(err.value)


@pytest.mark.parametrize(
    ("volumes", "expected"),
    [
        (["", ""], [Decimal(0), Decimal(0)]),  # plain rows: the fast path
        (["", "2.5"], [Decimal(0), Decimal("2.5")]),
        ([" ", '"2.5"'], [Decimal(0), Decimal("2.5")]),  # blank and quoted: the checked path
    ],
)
def test_an_empty_volume_cell_is_zero(
    tmp_path: Path, volumes: list[str], expected: list[Decimal]
) -> None:
    rows = [f"{T0 + i * M},100,110,90,105,{v}\n" for i, v in enumerate(volumes)]
    (tmp_path / "c.csv").write_text("time,open,high,low,close,volume\n" + "".join(rows))
    assert [b.volume for b in load_candles(tmp_path / "c.csv").bars] == expected


def test_an_empty_json_volume_is_zero(tmp_path: Path) -> None:
    text = "".join(
        f'{{"time":{T0 + i * M},"open":"1","high":"2","low":"1","close":"2","volume":""}}\n'
        for i in range(2)
    )
    (tmp_path / "c.jsonl").write_text(text)
    assert [b.volume for b in load_candles(tmp_path / "c.jsonl").bars] == [Decimal(0)] * 2
