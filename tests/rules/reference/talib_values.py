"""Writes TA-Lib's values of every indicator botkit offers, the references of
tests/rules/test_indicator_reference.py:

- ``ford-2012.json``: on a **real** price series, ``ford-2012-daily.csv`` (the 250 daily
  candles of Ford Motor Co. in 2012 that TA-Lib's own Python binding tests itself on; source
  and licence in ``README.md`` beside it), every candle's value (``null`` where TA-Lib has
  none yet: botkit must report ``warming_up`` there);
- ``talib.json``: on the first 1000 one-minute candles of data/btc-synth-7d.csv (botkit's
  synthetic BTC series), the last 50.

Made with TA-Lib 0.8.2's binding:

    .venv/bin/pip install TA-Lib==0.8.2 && .venv/bin/python -m tests.rules.reference.talib_values

(TA-Lib is not a dependency of botkit; the JSON is committed so the test needs none.) The CSV
itself was cut from the binding's source distribution, with the same command and
``--extract PATH/ta_lib-0.8.2/tests/conftest.py`` (its fixtures ``ford_2012_dates`` and
``ford_2012``, the numbers copied as written there).
"""

from __future__ import annotations

import ast
import csv
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import talib

HERE = Path(__file__).parent
ROOT = HERE.parents[2]
REAL_CSV = HERE / "ford-2012-daily.csv"
SYNTH_ROWS = 1000
SYNTH_KEEP = 50


def indicators(
    h: np.ndarray[Any, Any], lo: np.ndarray[Any, Any], c: np.ndarray[Any, Any], interval: str
) -> dict[str, np.ndarray[Any, Any]]:
    """TA-Lib's values of each reference expression on candles of ``interval``."""
    hl2 = (h + lo) / 2
    macd, signal, hist = talib.MACD(c, 12, 26, 9)
    upper, middle, lower = talib.BBANDS(c, 20, 2.0, 2.0)
    close, high, low = f"close('{interval}')", f"high('{interval}')", f"low('{interval}')"
    return {
        f"sma({close}, 20)": talib.SMA(c, 20),
        f"ema({close}, 20)": talib.EMA(c, 20),
        f"wma({close}, 10)": talib.WMA(c, 10),
        f"rsi({close}, 14)": talib.RSI(c, 14),
        f"macd({close}, 12, 26, 9)": macd,
        f"macd_signal({close}, 12, 26, 9)": signal,
        f"macd_hist({close}, 12, 26, 9)": hist,
        f"atr('{interval}', 14)": talib.ATR(h, lo, c, 14),
        f"bb_upper({close}, 20, 2)": upper,
        f"bb_middle({close}, 20, 2)": middle,
        f"bb_lower({close}, 20, 2)": lower,
        f"highest({high}, 24)": talib.MAX(h, 24),
        f"lowest({low}, 24)": talib.MIN(lo, 24),
        f"stddev({close}, 20)": talib.STDDEV(c, 20, 1.0),
        f"roc({close}, 10)": talib.ROC(c, 10),
        f"ema(hl2('{interval}'), 9)": talib.EMA(hl2, 9),
        f"sma(rsi({close}, 14), 5)": talib.SMA(talib.RSI(c, 14), 5),
    }


def _columns(
    rows: list[dict[str, str]],
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    h, lo, c = (np.array([float(r[k]) for r in rows]) for k in ("high", "low", "close"))
    return h, lo, c


def _write(name: str, data: dict[str, Any]) -> None:
    (HERE / name).write_text(json.dumps(data, indent=1) + "\n")


def real() -> None:
    with REAL_CSV.open() as f:
        rows = list(csv.DictReader(f))
    out = indicators(*_columns(rows), "1d")
    values = {
        name: [None if np.isnan(x) else float(x) for x in series] for name, series in out.items()
    }
    data = {"source": REAL_CSV.name, "rows": len(rows)}
    _write("ford-2012.json", {**data, "talib": talib.__version__, "values": values})


def synthetic() -> None:
    with (ROOT / "data" / "btc-synth-7d.csv").open() as f:
        rows = list(csv.DictReader(f))[:SYNTH_ROWS]
    out = indicators(*_columns(rows), "1m")
    values = {name: [float(x) for x in series[-SYNTH_KEEP:]] for name, series in out.items()}
    _write("talib.json", {"rows": SYNTH_ROWS, "talib": talib.__version__, "values": values})


def extract(conftest: Path) -> None:
    """``ford-2012-daily.csv`` from the binding's ``tests/conftest.py``: its fixtures'
    literal lists, each number as written there."""
    text = conftest.read_text()
    found = {f.name: f for f in ast.parse(text).body if isinstance(f, ast.FunctionDef)}

    def numbers(call: ast.expr) -> list[str]:
        assert isinstance(call, ast.Call)
        assert isinstance(call.args[0], ast.List)
        return [ast.get_source_segment(text, e) or "" for e in call.args[0].elts]

    (dates_return,) = found["ford_2012_dates"].body
    (ohlcv_return,) = found["ford_2012"].body
    assert isinstance(dates_return, ast.Return)
    assert dates_return.value is not None
    assert isinstance(ohlcv_return, ast.Return)
    assert isinstance(ohlcv_return.value, ast.Dict)
    dates = numbers(dates_return.value)
    table = ohlcv_return.value
    columns = {
        ast.literal_eval(k): numbers(v) for k, v in zip(table.keys, table.values, strict=True) if k
    }
    with REAL_CSV.open("w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["date", "open", "high", "low", "close", "volume"])
        for i, day in enumerate(dates):
            date = f"{day[:4]}-{day[4:6]}-{day[6:]}"
            ohlcv = (columns[k][i] for k in ("open", "high", "low", "close", "volume"))
            writer.writerow([date, *ohlcv])


def main(argv: list[str]) -> None:
    if argv[:1] == ["--extract"]:
        extract(Path(argv[1]))
    real()
    synthetic()


if __name__ == "__main__":
    main(sys.argv[1:])
