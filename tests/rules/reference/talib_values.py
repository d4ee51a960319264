"""Writes tests/rules/reference/talib.json: TA-Lib's values of every indicator on the first
1000 one-minute candles of data/btc-synth-7d.csv (botkit's own synthetic BTC series: the
repository holds no market data), the last 50 of each. Made with TA-Lib 0.8.2's binding:

    .venv/bin/pip install TA-Lib==0.8.2 && .venv/bin/python -m tests.rules.reference.talib_values

(TA-Lib is not a dependency of botkit; the JSON is committed so the test needs none.)
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import talib

ROOT = Path(__file__).resolve().parents[3]
ROWS = 1000
KEEP = 50


def main() -> None:
    with (ROOT / "data" / "btc-synth-7d.csv").open() as f:
        rows = list(csv.DictReader(f))[:ROWS]
    h, lo, c = (np.array([float(r[k]) for r in rows]) for k in ("high", "low", "close"))
    hl2 = (h + lo) / 2
    macd, signal, hist = talib.MACD(c, 12, 26, 9)
    upper, middle, lower = talib.BBANDS(c, 20, 2.0, 2.0)
    out = {
        "sma(close('1m'), 20)": talib.SMA(c, 20),
        "ema(close('1m'), 20)": talib.EMA(c, 20),
        "wma(close('1m'), 10)": talib.WMA(c, 10),
        "rsi(close('1m'), 14)": talib.RSI(c, 14),
        "macd(close('1m'), 12, 26, 9)": macd,
        "macd_signal(close('1m'), 12, 26, 9)": signal,
        "macd_hist(close('1m'), 12, 26, 9)": hist,
        "atr('1m', 14)": talib.ATR(h, lo, c, 14),
        "bb_upper(close('1m'), 20, 2)": upper,
        "bb_middle(close('1m'), 20, 2)": middle,
        "bb_lower(close('1m'), 20, 2)": lower,
        "highest(high('1m'), 24)": talib.MAX(h, 24),
        "lowest(low('1m'), 24)": talib.MIN(lo, 24),
        "stddev(close('1m'), 20)": talib.STDDEV(c, 20, 1.0),
        "roc(close('1m'), 10)": talib.ROC(c, 10),
        "ema(hl2('1m'), 9)": talib.EMA(hl2, 9),
        "sma(rsi(close('1m'), 14), 5)": talib.SMA(talib.RSI(c, 14), 5),
    }
    values = {name: [float(x) for x in series[-KEEP:]] for name, series in out.items()}
    target = Path(__file__).with_name("talib.json")
    target.write_text(
        json.dumps({"rows": ROWS, "talib": talib.__version__, "values": values}, indent=1) + "\n"
    )


if __name__ == "__main__":
    main()
