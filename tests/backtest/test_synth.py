"""The synthetic series: seeded, reproducible to the byte, valid candles, parameters obeyed."""

from __future__ import annotations

import hashlib
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.backtest.bars import Bar
from botkit.backtest.candle_writer import write_candles
from botkit.backtest.candles import load_candles
from botkit.backtest.synth import SynthParams, synth_bars

T0 = 1_704_067_200_000
M = 60_000


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("name", ["s.csv", "s.jsonl"])
def test_same_seed_gives_the_same_bytes(tmp_path: Path, name: str) -> None:
    params = SynthParams(start_ms=T0, count=2000, seed=42, jump_prob=0.01)
    write_candles(synth_bars(params), tmp_path / f"a-{name}")
    write_candles(synth_bars(params), tmp_path / f"b-{name}")
    assert digest(tmp_path / f"a-{name}") == digest(tmp_path / f"b-{name}")


def test_different_seeds_give_different_series() -> None:
    a = list(synth_bars(SynthParams(start_ms=T0, count=50, seed=1)))
    b = list(synth_bars(SynthParams(start_ms=T0, count=50, seed=2)))
    assert a != b


def test_known_first_candles_for_seed_1() -> None:
    # Pins the generator: a change here changes every shipped and user-made series.
    first = list(synth_bars(SynthParams(start_ms=T0, count=2, seed=1)))
    assert [tuple(map(str, b)) for b in first] == [
        ("1704067200000", "30000.0", "30035.7", "29991.5", "30032.0", "21.726"),
        ("1704067260000", "30032.0", "30087.3", "30030.8", "30068.0", "12.942"),
    ]


def test_series_is_a_valid_gapless_candle_file(tmp_path: Path) -> None:
    params = SynthParams(start_ms=T0, count=3000, seed=3, volatility=3.0, jump_prob=0.05,
                         jump_size=0.05, tick=Decimal("0.5"))  # fmt: skip
    write_candles(synth_bars(params), tmp_path / "s.csv")
    series = load_candles(tmp_path / "s.csv")  # every row check passes
    assert len(series) == 3000
    assert series.interval_ms == M
    assert series.bars[0].open == Decimal("30000.0")
    for prev, cur in zip(series.bars, series.bars[1:], strict=False):
        assert cur.open == prev.close
    assert all((b.low / Decimal("0.5")) % 1 == 0 for b in series.bars)


def test_trend_moves_the_price_in_its_direction() -> None:
    up = list(synth_bars(SynthParams(start_ms=T0, count=1000, seed=5, trend=500.0)))
    down = list(synth_bars(SynthParams(start_ms=T0, count=1000, seed=5, trend=-500.0)))
    assert up[-1].close > Decimal(30000) > down[-1].close


def test_jumps_are_rare_large_moves() -> None:
    calm = list(synth_bars(SynthParams(start_ms=T0, count=2000, seed=9)))
    jumpy = list(synth_bars(SynthParams(start_ms=T0, count=2000, seed=9, jump_prob=0.01,
                                        jump_size=0.05)))  # fmt: skip

    def biggest_move(bars: list[Bar]) -> Decimal:
        return max(abs(b.close / b.open - 1) for b in bars)

    assert biggest_move(calm) < Decimal("0.005")
    assert biggest_move(jumpy) > Decimal("0.02")


def test_price_never_falls_below_one_tick() -> None:
    bars = list(synth_bars(SynthParams(start_ms=T0, count=500, seed=4, start_price=Decimal(1),
                                       volatility=50.0, tick=Decimal("0.01"))))  # fmt: skip
    assert min(b.low for b in bars) >= Decimal("0.01")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"count": 0}, "at least 1"),
        ({"tick": Decimal(0)}, "tick must be a positive"),
        ({"start_price": Decimal(-1)}, "start price must be positive"),
        ({"jump_prob": 1.5}, "jump-prob must be between 0 and 1"),
        ({"volatility": -1.0}, "^volatility must not be negative$"),
        ({"jump_size": -0.1}, "^jump-size must not be negative$"),
        ({"trend": float("nan")}, "trend must be a finite number"),
    ],
)
def test_bad_parameters_are_refused(change: dict[str, object], message: str) -> None:
    kwargs: dict[str, object] = {"start_ms": T0, "count": 10, **change}
    params = SynthParams(**kwargs)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        list(synth_bars(params))
