"""Every problem of a candle file is refused with its file:line and what to do."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.backtest.candles import load_candles
from botkit.errors import DataFileError

T0 = 1_704_067_200_000  # 2024-01-01T00:00:00Z
M = 60_000
HEADER = "time,open,high,low,close,volume\n"


def row(i: int, o: str = "100", h: str = "110", lo: str = "90", c: str = "105") -> str:
    return f"{T0 + i * M},{o},{h},{lo},{c},1\n"


def problems_of(tmp_path: Path, text: str, name: str = "c.csv", **kwargs: object) -> list[str]:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataFileError) as caught:
        load_candles(path, **kwargs)  # type: ignore[arg-type]
    lines = str(caught.value).splitlines()
    assert all(line.startswith(f"{path}") for line in lines)
    return [line[len(str(path)) :] for line in lines]


@pytest.mark.parametrize(
    ("bad_row", "expected"),
    [
        (row(1, h="80"), ":3: high 80 is below low 90 — fix the row or remove it"),
        (row(1, o="120"), ":3: open 120 is outside [low 90, high 110] — fix the row or remove it"),
        (row(1, c="89.9"), ":3: close 89.9 is outside [low 90, high 110]"),
        (row(1, c="abc"), ":3: close 'abc' is not a number — write a decimal such as 43123.5"),
        (row(1, c=""), ":3: close '' is not a number"),
        (row(1, h="NaN"), ":3: high is NaN — write a finite decimal number, or remove the row"),
        (row(1, h="Infinity"), ":3: high is Infinity"),
        (row(1, h="inf"), ":3: high is inf"),
        (row(1, lo="-5"), ":3: low -5 is not positive — prices must be greater than zero"),
        (row(1, o="0", lo="0"), ":3: open 0 is not positive"),
        (row(1, h="-1", lo="-2"), ":3: high -1 is not positive"),
        (f"{T0 + M},100,110,90,105,-1\n", ":3: volume -1 is negative"),
        (f"{T0 + M},100,110,90\n", ":3: 4 fields, the header names 6"),
        (f"{T0 + M},100,110,90,105,1,7\n", ":3: 7 fields, the header names 6 — give every row"),
        (f"{T0 + M},100,110,90,105,1,\n", ":3: 7 fields, the header names 6"),
        (f"{(T0 + M) // 1000},100,110,90,105,1\n", ":3: time 1704067260 looks like Unix seconds"),
        (
            "2024-01-01T00:01:00,100,110,90,105,1\n",
            ":3: time '2024-01-01T00:01:00' has no zone — add one: 2024-01-01T00:01:00Z for UTC,"
            " or an offset such as +01:00",
        ),
        (
            f"{(T0 + M) * 1000},100,110,90,105,1\n",
            ":3: time 1704067260000000 looks like Unix microseconds, not milliseconds"
            " — divide by 1000",
        ),
        ("yesterday,100,110,90,105,1\n", ":3: time 'yesterday' is neither Unix milliseconds"),
    ],
)
def test_bad_row_is_reported_with_its_line(tmp_path: Path, bad_row: str, expected: str) -> None:
    found = problems_of(tmp_path, HEADER + row(0) + bad_row + row(2))
    assert len(found) == 1
    assert found[0].startswith(expected)


def test_unsorted_row_names_the_row_it_is_earlier_than(tmp_path: Path) -> None:
    found = problems_of(tmp_path, HEADER + row(0) + row(2) + row(1) + row(3))
    assert found == [
        ":4: time 2024-01-01T00:01:00Z is earlier than line 3 (2024-01-01T00:02:00Z)"
        " — sort the rows by time, one row per candle"
    ]


def test_duplicate_timestamp_names_the_first_occurrence(tmp_path: Path) -> None:
    found = problems_of(tmp_path, HEADER + row(0) + row(1) + row(1) + row(2))
    assert found == [
        ":4: duplicate time 2024-01-01T00:01:00Z (also at line 3) — keep one row per candle"
    ]


def test_duplicate_of_an_older_row_out_of_order(tmp_path: Path) -> None:
    found = problems_of(tmp_path, HEADER + row(0) + row(1) + row(2) + row(0))
    assert found == [
        ":5: duplicate time 2024-01-01T00:00:00Z (also at line 2)"
        " — sort the rows by time, one row per candle"
    ]


def test_every_out_of_order_row_is_named_with_its_twin(tmp_path: Path) -> None:
    text = HEADER + row(0) + row(1) + row(2) + row(0) + row(3) + row(4) + row(3) + row(5)
    found = problems_of(tmp_path, text)
    assert [f.split(" — ")[0] for f in found] == [
        ":5: duplicate time 2024-01-01T00:00:00Z (also at line 2)",
        ":8: duplicate time 2024-01-01T00:03:00Z (also at line 6)",
    ]


def test_gap_is_refused_with_the_missing_count(tmp_path: Path) -> None:
    text = HEADER + row(0) + row(1) + row(2) + row(5) + row(6)
    found = problems_of(tmp_path, text)
    assert found == [
        ":5: gap: 2 candles missing between 2024-01-01T00:02:00Z and 2024-01-01T00:05:00Z"
        " — fill the missing candles, or pass --allow-gaps to proceed"
    ]


def test_allow_gaps_loads_and_reports_the_gaps(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(HEADER + row(0) + row(1) + row(2) + row(5) + row(6), encoding="utf-8")
    series = load_candles(path, allow_gaps=True)
    assert len(series) == 5
    assert series.interval_ms == M
    assert [(g.after_ms, g.before_ms, g.missing, g.line) for g in series.gaps] == [
        (T0 + 2 * M, T0 + 5 * M, 2, 5)
    ]


def test_step_that_is_not_a_whole_interval_is_refused(tmp_path: Path) -> None:
    half = f"{T0 + 2 * M + 30_000},100,110,90,105,1\n"
    found = problems_of(tmp_path, HEADER + row(0) + row(1) + row(2) + half + row(4) + row(5))
    assert found[0].startswith(":5: 2024-01-01T00:02:30Z is 30s after line 4, not a whole number")


def test_missing_column_is_reported_on_the_header_line(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "\n\ntime,open,high,low,volume\n" + row(0))
    assert found == [
        ":3: the header has no column close"
        " — the first line must name the columns: time,open,high,low,close,volume"
    ]


def test_blank_lines_keep_line_numbers_true(tmp_path: Path) -> None:
    found = problems_of(tmp_path, "\n" + HEADER + row(0) + "\n" + row(1, h="1") + row(2))
    assert [f[:4] for f in found] == [":5: "]


def test_every_bad_row_is_listed_at_once(tmp_path: Path) -> None:
    text = HEADER + row(0) + row(1, h="x") + row(2) + row(3, lo="-1") + row(4)
    found = problems_of(tmp_path, text)
    assert [f.split(" ")[0] for f in found] == [":3:", ":5:"]


def test_many_problems_are_capped_with_a_count(tmp_path: Path) -> None:
    text = HEADER + "".join(row(i, c="x") for i in range(30))
    found = problems_of(tmp_path, text)
    assert len(found) == 21
    assert found[-1] == ": … and 10 more problems — fix the ones above and load again"


def test_empty_file_is_refused(tmp_path: Path) -> None:
    assert problems_of(tmp_path, "\n\n") == [
        ":1: the file has no candles — write a header and candle rows"
    ]


@pytest.mark.parametrize("interval_ms", [None, M])
def test_header_without_rows_says_the_file_has_no_candles(
    tmp_path: Path, interval_ms: int | None
) -> None:
    found = problems_of(tmp_path, "\n" + HEADER + "\n", interval_ms=interval_ms)
    assert found == [":2: the file has no candles, only a header — add candle rows below it"]


@pytest.mark.parametrize(
    ("header", "twice"),
    [
        ("time,open,high,low,close,time\n", "time"),
        ("time,open,high,low,close,Close,volume,VOLUME\n", "close, volume"),
    ],
)
def test_header_naming_a_column_twice_is_refused(tmp_path: Path, header: str, twice: str) -> None:
    width = header.count(",") + 1
    rows = "".join(f"{T0 + i * M},100,110,90,105" + ",1" * (width - 5) + "\n" for i in range(2))
    found = problems_of(tmp_path, header + rows)
    assert found == [f":1: the header names {twice} more than once — name each column once"]


def test_only_the_columns_botkit_reads_must_be_named_once(tmp_path: Path) -> None:
    rows = f"a,{T0},100,110,90,105,b\n"
    assert problems_of(tmp_path, "note,time,open,high,low,time,close,note\n" + rows) == [
        ":1: the header names time more than once — name each column once"
    ]
    path = tmp_path / "ok.csv"
    path.write_text("note,time,open,high,low,close,note\n" + rows)
    assert len(load_candles(path, interval_ms=M)) == 1


@pytest.mark.parametrize("step", [1, 2, 3])
def test_candles_closer_than_the_price_path_needs_are_refused(tmp_path: Path, step: int) -> None:
    rows = "".join(f"{T0 + i * step},100,110,90,105,1\n" for i in range(3))
    found = problems_of(tmp_path, HEADER + rows)
    assert found == [
        f": the candle interval {step}ms is shorter than the 4ms the backtest needs"
        " (four price points a candle) — use longer candles, e.g. 1m"
    ]


def test_four_ms_is_the_shortest_interval_loaded(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_text(HEADER + "".join(f"{T0 + i * 4},100,110,90,105,1\n" for i in range(3)))
    assert load_candles(path).interval_ms == 4
    with pytest.raises(DataFileError, match="the candle interval 3ms is shorter than the 4ms"):
        load_candles(path, interval_ms=3)


def test_one_candle_needs_the_interval(tmp_path: Path) -> None:
    found = problems_of(tmp_path, HEADER + row(0))
    what = ": cannot infer the candle interval from a single candle"
    assert found == [what + " — pass the interval (e.g. --interval 1m)"]


def test_missing_file_says_how_to_make_one(tmp_path: Path) -> None:
    with pytest.raises(DataFileError, match="no such data file — check the path"):
        load_candles(tmp_path / "nope.csv")


def test_directory_is_named_as_one(tmp_path: Path) -> None:
    with pytest.raises(DataFileError) as caught:
        load_candles(tmp_path)
    assert str(caught.value) == (
        f"{tmp_path}: is a directory, not a data file"
        " — give the candle file itself (a CSV or JSON-lines file)"
    )


def test_binary_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(DataFileError, match="not UTF-8 text"):
        load_candles(path)


def test_period_without_candles_says_what_the_file_covers(tmp_path: Path) -> None:
    found = problems_of(tmp_path, HEADER + row(0) + row(1), start_ms=T0 + 10 * M)
    assert found == [
        ": no candles in the selected period — the file covers 2024-01-01T00:00:00Z to "
        "2024-01-01T00:01:00Z; check --start and --end"
    ]


# --- JSON lines -----------------------------------------------------------------------------


def obj(i: int, **over: object) -> str:
    fields: dict[str, object] = {"time": T0 + i * M, "open": "100", "high": "110", "low": "90",
                                 "close": "105", "volume": "1"}  # fmt: skip
    fields.update(over)
    parts = ",".join(
        f'"{k}":{v}' if isinstance(v, int) or v in ("NaN", "Infinity") else f'"{k}":"{v}"'
        for k, v in fields.items()
        if v is not None
    )
    return "{" + parts + "}\n"


@pytest.mark.parametrize(
    ("bad_line", "expected"),
    [
        (obj(1, high="NaN"), ":2: NaN is not a number — write a finite decimal number"),
        ('{"time": 1704067260000, "open": Infinity}\n', ":2: Infinity is not a number"),
        (
            obj(1, close=None, volume=None),
            ":2: missing key close — each object needs time, open, high, low, close"
            " (volume is optional)",
        ),
        ('{"time": 1704067260000, "open": \n', ":2: not valid JSON (Expecting value at column"),
        ("[1, 2, 3]\n", ":2: array of 3 fields, expected 9"),
        ('"candle"\n', ":2: the line is neither a JSON object nor an array"),
        (obj(1, low="95", open="94"), ":2: open 94 is outside [low 95, high 110]"),
        (obj(1).replace('"100"', "true"), ":2: open True is not a number"),
    ],
)
def test_bad_json_line_is_reported_with_its_line(
    tmp_path: Path, bad_line: str, expected: str
) -> None:
    found = problems_of(tmp_path, obj(0) + bad_line + obj(2), name="c.jsonl")
    assert len(found) == 1
    assert found[0].startswith(expected)
