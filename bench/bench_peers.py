"""botkit beside backtesting.py 0.6.6 on the same year of minute candles (issue 20).

Scenario A: ``strategies/btc-dip-ladder.yaml`` alone; scenario B: with ``btc-exits.yaml``. Each
run is a process of its own (its CPU seconds and peak memory from ``wait4``): ``botkit
backtest`` as an operator runs it, and the same strategy written for backtesting.py (below:
the same rungs, prices on the 0.1 tick, a 20 bps tolerance with a 2-minute minimum rest,
the 24h high over the last 1,440 candles; one unit is one contract, 0.001 BTC, so the
prices handed to it are per contract). The figures that must agree are printed side by side:
fills and final equity. A bare Python loop over the candles with the same semantics
(``Decimal`` money) is the floor.

``python -m bench peers`` (``BENCH_CANDLES=N`` for another size, ``BENCH_SCENARIOS=A`` for
one). backtesting.py is the optional ``bench`` extra (``pip install 'botkit[bench]'``); the
benchmark installs it into this Python's environment with pip when it is missing.
"""

from __future__ import annotations

import compileall
import csv
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import deque
from dataclasses import dataclass
from decimal import ROUND_FLOOR, Decimal
from pathlib import Path
from typing import Any

from bench.bench_backtest import _reference_s, _synth

ROOT = Path(__file__).resolve().parents[1]
STRATEGIES = ROOT / "strategies"
BACKTESTING = "backtesting==0.6.6"
SCENARIOS = {"A": ("btc-dip-ladder",), "B": ("btc-dip-ladder", "btc-exits")}

# btc-dip-ladder.yaml and btc-exits.yaml, and the simulator's defaults they run on
DIP, FIRST, STEP, RUNGS = Decimal("0.004"), Decimal("0.001"), Decimal("0.001"), 12
TOLERANCE, MIN_REST = Decimal("0.002"), 2  # 20 bps; 2 minutes = 2 candles
TAKE, STOP = Decimal("0.08"), Decimal("0.20")
TICK, CONTRACT, LEVERAGE = Decimal("0.1"), Decimal("0.001"), 20
MAKER, TAKER = 0.0002, 0.0006
CASH = 10_000
CENT = Decimal("0.01")
DAY = 1440


@dataclass
class Measured:
    cpu_s: float
    peak_mb: float
    fills: int
    final_equity: Decimal


def _run(argv: list[str]) -> tuple[float, float, str]:
    """CPU seconds, peak RSS (MB) and stdout of a child process."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=ROOT)  # noqa: S603
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed ({proc.returncode})")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, out


def _botkit(data: Path, names: tuple[str, ...], folder: Path) -> Measured:
    report = folder / f"report-{'-'.join(names)}"
    botkit = str(Path(sys.executable).with_name("botkit"))
    files = [str(STRATEGIES / f"{n}.yaml") for n in names]
    cpu, peak, _ = _run([botkit, "backtest", "--data", str(data), "--strategies", *files,
                         "--report", str(report)])  # fmt: skip
    figures = json.loads((report / "summary.json").read_text())["figures"]
    return Measured(cpu, peak, int(figures["fills"]), Decimal(figures["final_equity"]))


def _peer(kind: str, data: Path, scenario: str) -> Measured:
    cpu, peak, out = _run([sys.executable, "-m", "bench.bench_peers", kind, str(data), scenario])
    got = json.loads(out.strip().splitlines()[-1])
    return Measured(cpu, peak, got["fills"], Decimal(got["final_equity"]))


def _ensure_backtesting() -> None:
    if importlib.util.find_spec("backtesting") is None:
        print(f"installing {BACKTESTING} (the bench extra) into {sys.prefix}")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", BACKTESTING],  # noqa: S603
                       check=True)  # fmt: skip


def _bytecode() -> None:
    """botkit's modules compiled to bytecode before its runs, as an installed wheel has them
    (pip compiles at install; backtesting.py's were): an editable install under
    ``PYTHONDONTWRITEBYTECODE`` would otherwise compile ~170 modules from source in every run,
    ~0.4 s of CPU. The files are written even under that variable; a package folder that
    cannot be written leaves its runs as they were."""
    import botkit

    compileall.compile_dir(Path(botkit.__file__).parent, quiet=2)


def main() -> None:
    count = int(os.environ.get("BENCH_CANDLES", "525600"))
    wanted = os.environ.get("BENCH_SCENARIOS", "A,B").split(",")
    _ensure_backtesting()
    _bytecode()
    reference = _reference_s()
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "year.csv"
        _synth(data, count)
        print(f"{count:,} 1m candles (botkit data synth --seed 7 --volatility 0.6 "
              "--jump-prob 0.0005 --jump-size 0.01 --start-price 60000)")  # fmt: skip
        head = f"{'':14}{'CPU s':>8} {'peak MB':>8} {'fills':>7} {'final equity':>16}  vs botkit"
        for scenario in wanted:
            names = SCENARIOS[scenario.strip()]
            print(f"scenario {scenario}: {' + '.join(names)}")
            print(head)
            mine = _botkit(data, names, Path(tmp))
            rows = [
                ("botkit", mine),
                ("backtesting.py", _peer("backtesting", data, scenario)),
                ("bare loop", _peer("loop", data, scenario)),
            ]
            for name, m in rows:
                ratio = "" if m is mine else f"  botkit {mine.cpu_s / m.cpu_s:5.2f}x its CPU"
                print(f"{name:14}{m.cpu_s:8.2f} {m.peak_mb:8.0f} {m.fills:7,} "
                      f"{m.final_equity:16.2f}{ratio}")  # fmt: skip
            for name, m in rows[1:]:
                fills = "the same fills" if m.fills == mine.fills else "OTHER FILLS"
                gap = abs(m.final_equity - mine.final_equity)
                print(f"  {name} beside botkit: {fills}, final equity "
                      f"{'equal' if gap < CENT else f'{gap:.2f} apart'}")  # fmt: skip
    print(
        f"machine        {reference:7.2f} s  for the reference loop (bench_backtest._reference_s)"
    )


# --- the peers (run in their own process: python -m bench.bench_peers KIND DATA SCENARIO) ---


def _rows(data: Path) -> list[tuple[int, Decimal, Decimal, Decimal, Decimal]]:
    with data.open(newline="") as handle:
        return [(int(r["time"]), Decimal(r["open"]), Decimal(r["high"]), Decimal(r["low"]),
                 Decimal(r["close"])) for r in csv.DictReader(handle)]  # fmt: skip


def _rungs(mark: Decimal) -> list[Decimal]:
    first, step = mark * (1 - FIRST), mark * STEP
    return [((first - k * step) / TICK).to_integral_value(ROUND_FLOOR) * TICK for k in range(RUNGS)]


def _loop(data: Path, exits: bool) -> dict[str, Any]:
    """The bare loop: one account, a ladder of resting buys, fills on the intra-candle path."""
    bars = _rows(data)
    cash, qty, avg = Decimal(CASH), Decimal(0), Decimal(0)
    orders: list[list[Any]] = []  # [price, placed_at]
    fills = 0
    highs: deque[tuple[int, Decimal]] = deque()  # the 24h high: a falling run of (index, high)
    maker, taker = Decimal(str(MAKER)), Decimal(str(TAKER))
    for i, (_t, o, h, lo, c) in enumerate(bars):
        path = (o, lo, h, c) if o - lo < h - o or (o - lo == h - o and c >= o) else (o, h, lo, c)
        for px in path:
            for order in [x for x in orders if px <= x[0]]:
                orders.remove(order)
                notional = order[0] * CONTRACT
                cash -= notional * maker
                avg = (avg * qty + order[0]) / (qty + 1)
                qty += 1
                fills += 1
        while highs and highs[-1][1] <= h:
            highs.pop()
        highs.append((i, h))
        if highs[0][0] <= i - DAY:
            highs.popleft()
        mark = c
        high24 = highs[0][1]
        if exits and qty:
            upl = (mark - avg) * qty * CONTRACT
            im = mark * qty * CONTRACT / LEVERAGE  # the position margin at the mark
            if upl > im * TAKE or upl < -im * STOP:
                cash += upl - mark * qty * CONTRACT * taker
                qty, avg = Decimal(0), Decimal(0)
                fills += 1
                continue
        if qty == 0 and mark < high24 * (1 - DIP):
            wanted = _rungs(mark)
            if not orders:
                orders = [[px, i] for px in wanted]
            else:
                for k, order in enumerate(orders):
                    off = abs(order[0] - wanted[k]) / order[0]  # of the resting price
                    if off > TOLERANCE and i - order[1] >= MIN_REST:
                        orders[k] = [wanted[k], i]
        else:
            orders = []
    final = cash + (bars[-1][4] - avg) * qty * CONTRACT
    return {"fills": fills, "final_equity": str(final)}


def _backtesting(data: Path, exits: bool) -> dict[str, Any]:
    import pandas as pd
    from backtesting import Backtest, Strategy

    frame = pd.read_csv(data)
    frame.index = pd.to_datetime(frame.pop("time"), unit="ms", utc=True)
    per_contract = float(CONTRACT)
    for column in ("open", "high", "low", "close"):
        frame[column] *= per_contract
    frame.columns = ["Open", "High", "Low", "Close", "Volume"]
    taker_now = [False]

    def commission(size: float, price: float) -> float:
        return abs(size) * price * (TAKER if taker_now[0] else MAKER)

    def high24(high: Any) -> Any:
        return pd.Series(high).rolling(DAY, min_periods=1).max().to_numpy()

    class DipLadder(Strategy):  # type: ignore[misc]
        def init(self) -> None:
            self.high24 = self.I(high24, self.data.High)
            self.placed: dict[int, tuple[float, int]] = {}
            self.exits = 0

        def next(self) -> None:
            taker_now[0] = False
            i = len(self.data) - 1
            mark = float(self.data.Close[-1])
            if exits and self.position:
                upl = self.position.pl
                im = mark * self.position.size / LEVERAGE
                if upl > im * float(TAKE) or upl < -im * float(STOP):
                    taker_now[0] = True
                    self.exits += 1
                    self.position.close()
                    self._cancel()
                    return
            if not self.position and mark < self.high24[-1] * (1 - float(DIP)):
                wanted = [
                    float(p) * per_contract
                    for p in _rungs(Decimal(repr(float(mark) / per_contract)).quantize(TICK))
                ]
                live = [o for o in self.orders if not o.is_contingent]
                if not live:
                    for px in wanted:
                        self.buy(size=1, limit=px)
                        self.placed[id(self.orders[-1])] = (px, i)
                else:
                    for k, order in enumerate(sorted(live, key=lambda o: -(o.limit or 0))):
                        px, at = self.placed.get(id(order), (order.limit or 0.0, i))
                        if abs(px - wanted[k]) / px > float(TOLERANCE) and i - at >= MIN_REST:
                            order.cancel()
                            self.buy(size=1, limit=wanted[k])
                            self.placed[id(self.orders[-1])] = (wanted[k], i)
            else:
                self._cancel()

        def _cancel(self) -> None:
            for order in list(self.orders):
                if order.limit is not None:  # the ladder's rungs, not a closing order
                    order.cancel()

    test = Backtest(frame, DipLadder, cash=CASH, commission=commission, margin=1 / LEVERAGE,
                    trade_on_close=True)  # fmt: skip
    stats = test.run()
    strategy = stats["_strategy"]
    fills = len(strategy.closed_trades) + len(strategy.trades) + strategy.exits
    return {"fills": fills, "final_equity": repr(float(stats["Equity Final [$]"]))}


def _peer_main(kind: str, data: str, scenario: str) -> None:
    exits = "btc-exits" in SCENARIOS[scenario]
    run = _backtesting if kind == "backtesting" else _loop
    started = time.perf_counter()
    result = run(Path(data), exits)
    result["seconds"] = time.perf_counter() - started
    print(json.dumps(result))


if __name__ == "__main__":
    _peer_main(*sys.argv[1:4])
