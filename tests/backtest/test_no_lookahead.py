"""A strategy that could only profit by seeing the hour in progress makes no such profit in a
backtest: on hours that rise minute by minute and then fall back, "long while the hour is up"
buys each rise's top (known only once the hour has closed) and sells each fall's bottom."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest

from botkit.cli import main

T0 = 1_704_067_200_000
M = 60_000
PEEK = """\
strategy: peek
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: long-while-the-hour-rises
    when: position.qty == 0 and close('1h') > open('1h')
    place:
      order: {side: BUY, type: MARKET, sz: 1}
  - name: out-while-it-falls
    when: position.qty > 0 and close('1h') < open('1h')
    close: {}
"""


def _hours(path: Path, hours: int) -> None:
    rows = ["time,open,high,low,close,volume"]
    for minute in range(hours * 60):
        hour, inside = divmod(minute, 60)
        step = 10 if hour % 2 == 0 else -10  # up 600 in an even hour, down 600 in an odd one
        start = 60000 if hour % 2 == 0 else 60600
        o = Decimal(start + step * inside)
        c = o + step
        rows.append(f"{T0 + minute * M},{o},{max(o, c)},{min(o, c)},{c},1")
    path.write_text("\n".join(rows) + "\n")


def test_seeing_only_closed_hours_makes_no_peeking_profit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, strategy = tmp_path / "hours.csv", tmp_path / "peek.yaml"
    _hours(data, 8)
    strategy.write_text(PEEK)
    assert main(["backtest", "--data", str(data), "--strategies", str(strategy)]) == 0
    out = capsys.readouterr().out
    orders = re.search(r"placed (\d+) · filled (\d+)", out)
    realized = re.search(r"realized (-?[\d,.]+)", out)
    assert orders is not None, out
    assert realized is not None, out
    assert int(orders.group(2)) >= 4, out  # it traded: in at each rise's top, out at each bottom
    assert Decimal(realized.group(1).replace(",", "")) < 0, out
