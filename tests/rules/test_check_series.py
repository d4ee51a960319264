"""``botkit check`` knows the series and indicator functions: arity, counts, interval words
and other symbols, each problem on one line at its column with a did-you-mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from botkit.cli import main

BAD = """\
strategy: a
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: r1
    when: smaa(close('15m'), 20) > 0
    cancel: {}
  - name: r2
    when: rsi(close('15x'), 14) < 30
    cancel: {}
  - name: r3
    when: ema(close('15m'), 0) > 1
    cancel: {}
  - name: r4
    when: close('1h', 'ETH_USDT_PERPP') > 1
    cancel: {}
  - name: r5
    when: ema(close('1h')) > 1
    cancel: {}
  - name: r6
    when: crosses_above(ema(close('1h'), 9), ema(close('4h'), 21))
    cancel: {}
"""


def test_bad_indicator_calls_are_located_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BAD)
    assert main(["check", str(bad), "--instruments", "sim"]) == 1
    ema = "exponential moving average: ema(close('15m'), 50)"
    assert capsys.readouterr().out.splitlines() == [
        f"{bad}:6:11: when: unknown function 'smaa' — did you mean 'sma'?",
        f"{bad}:9:21: when: unknown interval '15x' — did you mean '15m'?",
        f"{bad}:12:29: when: ema(): a count must be a whole number from 1 to 1000 — {ema}",
        f"{bad}:15:23: when: unknown symbol 'ETH_USDT_PERPP' — did you mean 'ETH_USDT_PERP'?",
        f"{bad}:18:11: when: ema() takes 2 arguments, got 1 — {ema}",
        f"{bad}:21:46: when: crosses_above() compares series of one interval and symbol"
        " — both on '1h'",
        "6 problems",
    ]


NEGATIVE = """\
strategy: a
symbol: BTC_USDT_PERP
every: 1m
params: {width: 2}
rules:
  - name: r1
    when: price.mark > bb_upper(close('15m'), 20, -2)
    cancel: {}
  - name: r2
    when: price.mark > sma(close('15m'), -20)
    cancel: {}
  - name: r3
    when: price.mark > bb_lower(close('15m'), 20, - -params.width)
    cancel: {}
"""


def test_a_negative_argument_is_refused_for_its_range_not_as_a_non_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "negative.yaml"
    bad.write_text(NEGATIVE)
    assert main(["check", str(bad), "--instruments", "sim"]) == 1
    bb = "upper Bollinger band: bb_upper(close('1h'), 20, 2)"
    sma = "simple moving average: sma(close('1h'), 20)"
    assert capsys.readouterr().out.splitlines() == [
        f"{bad}:7:51: when: bb_upper(): the width must be above 0 — {bb}",
        f"{bad}:10:42: when: sma(): a count must be a whole number from 1 to 1000 — {sma}",
        "2 problems",
    ]


def test_the_json_schema_names_every_function_and_interval(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "strategy.schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    text = out.read_text()
    for word in ("ema", "rsi", "macd_hist", "atr", "vwap", "crosses_above", "prev", "4h"):
        assert word in text
