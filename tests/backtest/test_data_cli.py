"""``botkit data synth | fetch | check`` through the command line's entry point."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from botkit.app import clients
from botkit.backtest.candles import load_candles
from botkit.cli import main
from botkit.live.client import ExchangeClient
from botkit.sim.inprocess import SimHandle

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "data" / "btc-synth-7d.csv"
# The command that made data/btc-synth-7d.csv (docs/backtest.md shows the same).
SHIPPED_ARGS = ["data", "synth", "--symbol", "BTC_USDT_PERP", "--interval", "1m",
                "--start", "2024-01-01T00:00:00Z", "--candles", "10080", "--seed", "7",
                "--volatility", "0.6", "--jump-prob", "0.0005", "--jump-size", "0.01",
                "--start-price", "60000", "--tick", "0.1"]  # fmt: skip


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_shipped_file_is_exactly_what_its_command_writes(tmp_path: Path) -> None:
    assert main([*SHIPPED_ARGS, "--out", str(tmp_path / "again.csv")]) == 0
    assert digest(tmp_path / "again.csv") == digest(SHIPPED)
    assert SHIPPED.stat().st_size < 1_000_000


def test_shipped_file_is_a_clean_week_of_minutes() -> None:
    series = load_candles(SHIPPED)
    assert len(series) == 10_080
    assert series.interval_ms == 60_000
    assert series.gaps == ()


def test_synth_to_an_end_time_as_json_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s.jsonl"
    code = main(["data", "synth", "--start", "2024-03-01", "--end", "2024-03-01T05:00:00Z",
                 "--interval", "5m", "--seed", "3", "--start-price", "2000", "--tick", "0.01",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out == (
        "wrote 60 5m candles of BTC_USDT_PERP (2024-03-01T00:00:00Z → 2024-03-01T05:00:00Z, "
        f"seed 3) to {out}\n"
    )
    assert out.read_text(encoding="utf-8").startswith('{"time":1709251200000,"open":"2000.00"')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--start", "2024-01-01", "--candles", "5", "--end", "2024-01-02"], "not allowed with"),
        (["--start", "2024-01-01"], "one of the arguments --end --candles is required"),
        (["--start", "2024-01-01", "--candles", "0"], "'0' must be a whole number of at least 1"),
        (["--start", "2024-01-01", "--candles", "5", "--interval", "7x"], "interval '7x' is"),
        (["--start", "2024-01-01T00:00:00", "--candles", "5"], "has no zone: add Z for UTC"),
        (["--start", "2024-01-02", "--end", "2024-01-01"], "--end must be after --start"),
        (["--start", "2024-01-01", "--candles", "5", "--jump-prob", "2"], "jump-prob must be"),
        (["--start", "2024-01-01", "--candles", "5", "--tick", "-1"], "must be a positive"),
        (["--start", "1704067200000000", "--candles", "5"], "microseconds, not milliseconds"),
        (["--start", "1704067200", "--candles", "5"], "seconds, not milliseconds: multiply"),
        (["--start", "1971-01-01", "--candles", "5"], "'1971-01-01' is outside the times"),
        (
            ["--start", "9999-12-01", "--candles", "100", "--interval", "1d"],
            "100 candles from 9999-12-01T00:00:00Z would end after 9999-12-31T23:59:59.999Z",
        ),
        (
            ["--start", "2024-01-01", "--candles", "5", "--trend", "1e9"],
            "trend 1e+09 is out of range (at most 1000",
        ),
        (["--start", "2024-01-01", "--candles", "5", "--volatility", "1e5"], "is out of range"),
        (["--start", "2024-01-01", "--candles", "5", "--trend", "inf"], "must be a finite"),
        (
            ["--start", "2024-01-01", "--candles", "5", "--jump-prob", "1", "--jump-size", "1000"],
            "jump-size 1000 is out of range",
        ),
        # within the bounds, but a long series at these rates leaves any price there is
        (
            ["--start", "2024-01-01", "--candles", "500000", "--trend", "50", "--volatility", "90"],
            "passed 1e18 ticks at candle",
        ),
    ],
)
def test_synth_usage_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code = main(["data", "synth", *args, "--start-price", "1", "--out", str(tmp_path / "x.csv")])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.startswith("error: botkit data synth: ")  # says which command, like argparse's
    assert err.count("\n") == 1
    assert not (tmp_path / "x.csv").exists()


def test_synth_refuses_a_start_price_of_more_than_1e18_ticks_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["data", "synth", "--start", "2024-01-01", "--candles", "5", "--start-price",
                 "1e17", "--tick", "0.01", "--out", str(tmp_path / "x.csv")])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "is more than 1e18 ticks of 0.01: lower --start-price or raise --tick" in err
    assert not (tmp_path / "x.csv").exists()


def test_synth_with_a_negative_trend_written_with_equals(tmp_path: Path) -> None:
    out = tmp_path / "down.csv"
    code = main(["data", "synth", "--start", "2024-01-01", "--candles", "2000", "--seed", "2",
                 "--trend=-50", "--volatility", "0.1", "--start-price", "100",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    bars = load_candles(out).bars
    assert bars[-1].close < bars[0].open


def test_synth_onto_an_existing_file_leaves_it_whole_when_the_series_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "kept.csv"
    out.write_text("before\n", encoding="utf-8")
    code = main(["data", "synth", "--start", "2024-01-01", "--candles", "500000", "--trend", "50",
                 "--volatility", "90", "--start-price", "1", "--out", str(out)])  # fmt: skip
    assert code == 2
    assert "passed 1e18 ticks" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == "before\n"  # not truncated, not half-written
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kept.csv"]  # no .part left behind


def test_synth_refuses_a_directory_as_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["data", "synth", "--start", "2024-01-01", "--candles", "5", "--start-price", "1",
                 "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
    assert capsys.readouterr().err == (
        f"error: botkit data synth: --out {tmp_path} is a directory:"
        f" name a file such as {tmp_path / 'candles.csv'}\n"
    )


def test_check_reports_what_a_file_holds(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "check", str(SHIPPED), "--start", "2024-01-07"]) == 0
    assert capsys.readouterr().out == (
        f"{SHIPPED}: 1,440 1m candles, 2024-01-07T00:00:00Z → 2024-01-08T00:00:00Z\n"
    )


def test_check_lists_every_problem_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        "time,open,high,low,close,volume\n"
        "1704067200000,100,110,90,105,1\n"
        "1704067260000,100,80,90,105,1\n"
        "1704067320000,100,110,90,105,1\n"
        "1704067200000,100,110,90,105,1\n",
        encoding="utf-8",
    )
    assert main(["data", "check", str(bad)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"error: {bad}:3: high 80 is below low 90 — fix the row or remove it",
        f"{bad}:5: duplicate time 2024-01-01T00:00:00Z (also at line 2) — "
        "sort the rows by time, one row per candle",
    ]


def test_check_with_allow_gaps_lists_the_gaps(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [f"{1704067200000 + i * 60_000},100,110,90,105,1\n" for i in (0, 1, 2, 5, 6, 9, 10)]
    path = tmp_path / "gappy.csv"
    path.write_text("time,open,high,low,close,volume\n" + "".join(rows), encoding="utf-8")
    assert main(["data", "check", str(path)]) == 2
    assert "pass --allow-gaps to proceed" in capsys.readouterr().err
    assert main(["data", "check", str(path), "--allow-gaps"]) == 0
    assert capsys.readouterr().out.splitlines()[1:] == [
        "2 gaps, 4 candles missing:",
        f"  {path}:5: 2 missing between 2024-01-01T00:02:00Z and 2024-01-01T00:05:00Z",
        f"  {path}:7: 2 missing between 2024-01-01T00:06:00Z and 2024-01-01T00:09:00Z",
    ]


@pytest.mark.parametrize(
    ("interval", "start"),
    [
        ("1m", "2024-01-01T00:00:00Z"),
        # the simulator's clock stands at 2024-01-01T04:00:01Z, years before the machine's: an
        # age reaches back from the exchange's time, as in ``botkit exchange`` (docs/times.md)
        ("MINUTE_1", "4h1s"),
    ],
)
def test_fetch_writes_the_simulators_candles(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sim_with_history: tuple[SimHandle, ExchangeClient],
    interval: str,
    start: str,
) -> None:
    _sim, client = sim_with_history
    monkeypatch.setattr(clients, "make_client", lambda settings, **_: client)
    out = tmp_path / "fetched.csv"
    code = main(["data", "fetch", "--symbol", "BTC_USDT_PERP", "--interval", interval,
                 "--start", start, "--out", str(out), "--rate", "0"])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr()
    assert printed.out == f"fetched 240 1m candles of BTC_USDT_PERP in 3 requests to {out}\n"
    assert printed.err == "fetching 2024-01-01T00:00:00Z → 2024-01-01T04:00:01Z in 3 requests\n"
    series = load_candles(out)
    assert len(series) == 240
    assert str(series.bars[0].close) == "101"


def test_fetch_of_a_period_without_candles_fails_with_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    sim_with_history: tuple[SimHandle, ExchangeClient],
) -> None:
    _sim, client = sim_with_history
    monkeypatch.setattr(clients, "make_client", lambda settings, **_: client)
    code = main(["data", "fetch", "--symbol", "BTC_USDT_PERP", "--interval", "1m",
                 "--start", "2023-12-31T00:00:00Z", "--end", "2023-12-31T01:00:00Z",
                 "--out", str(tmp_path / "x.csv"), "--rate", "0"])  # fmt: skip
    assert code == 1
    assert capsys.readouterr().err.splitlines()[-1] == (
        "error: the exchange has no MINUTE_1 candles of BTC_USDT_PERP between "
        "2023-12-31T00:00:00Z and 2023-12-31T01:00:00Z"
    )
    assert not (tmp_path / "x.csv").exists()


def test_fetch_refuses_an_interval_the_exchange_does_not_have(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    code = main(["data", "fetch", "--symbol", "S", "--interval", "7m", "--start", "2024-01-01",
                 "--out", str(tmp_path / "x.csv")])  # fmt: skip
    assert code == 2
    assert "the exchange has no 7m candles" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--page-size", "500"], "--page-size: 500 is more than the 100 candles a request may"),
        (["--page-size", "0"], "--page-size: '0' must be a whole number of at least 1"),
        (["--rate=-1"], "--rate: '-1' must be a number of requests a second, 0 or more"),
        (["--rate", "nan"], "--rate: 'nan' must be a number"),
        (["--start", "1704067200"], "looks like Unix seconds, not milliseconds"),
    ],
)
def test_fetch_usage_errors_come_before_any_request(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    args: list[str],
    message: str,
) -> None:
    def no_client(settings: object) -> ExchangeClient:
        raise AssertionError("a usage error must not reach the exchange")

    monkeypatch.setattr(clients, "make_client", no_client)
    code = main(["data", "fetch", "--symbol", "BTC_USDT_PERP", "--interval", "1m",
                 "--start", "2024-01-01", "--out", str(tmp_path / "x.csv"), *args])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1


def test_fetch_refuses_a_directory_as_out_before_fetching(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_client(settings: object) -> ExchangeClient:
        raise AssertionError("nothing is fetched for a file that cannot be written")

    monkeypatch.setattr(clients, "make_client", no_client)
    code = main(["data", "fetch", "--symbol", "BTC_USDT_PERP", "--interval", "1m",
                 "--start", "2024-01-01", "--out", str(tmp_path)])  # fmt: skip
    assert code == 2
    assert "is a directory: name a file such as" in capsys.readouterr().err
