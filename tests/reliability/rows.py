"""The rows of the fault matrix: what each one injects, and what it means.

In-process rows arm the simulator's fault plan (seeded draws, so a row is repeatable) before
every cycle; the process rows (SIGKILL, SIGTERM) live in :mod:`tests.reliability.procs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from botkit.sim.inprocess import SimHandle
from tests.reliability.harness import PLACE
from tests.reliability.inproc import Arm

__all__ = ["ROWS", "Row"]

ANY = "*"


@dataclass(frozen=True)
class Row:
    name: str
    meaning: str
    arm: Arm
    timeout_s: float = 10.0
    loopback: bool = False
    cycles_factor: float = 1.0
    """Some rows (loopback, slow answers) run fewer cycles to stay within the time budget."""
    tags: frozenset[str] = field(default_factory=frozenset)
    extra_strategies: tuple[tuple[str, str], ...] = ()
    """Strategy files (name, text) that run beside the ladder."""
    refusals: bool = True
    """False: any order the exchange refuses makes the row red (its load botkit must check)."""


def _once(*rules: tuple[str, dict[str, Any]]) -> Arm:
    """Arm ``rules`` before the first cycle (after the start-up sync) and leave them."""

    def arm(sim: SimHandle, cycle: int) -> None:
        if cycle == 0:
            for kind, options in rules:
                sim.faults.add(kind, **options)

    return arm


def _skew(ms: int, every: int = 4) -> Arm:
    """The server clock jumps by ``ms`` and back every ``every`` cycles."""

    def arm(sim: SimHandle, cycle: int) -> None:
        sim.faults.set_skew(ms if (cycle // every) % 2 == 0 else 0)

    return arm


def _place(kind: str, p: float, **options: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"method": "POST", "path": PLACE, "probability": p, **options}


def _every(kind: str, p: float, **options: Any) -> tuple[str, dict[str, Any]]:
    return kind, {"path": ANY, "probability": p, **options}


def _drift(fraction: str) -> Arm:
    """Before every request the marks move by ``fraction`` (the simulator's
    ``prices.drift_per_request``): the mark moves between two reads of one cycle."""

    def arm(sim: SimHandle, cycle: int) -> None:
        if cycle == 0:
            sim.engine.drift = Decimal(fraction)

    return arm


# Whole sizes written with decimals, or computed: they must leave as "2", "4", never "2.0".
AWKWARD_SIZES = """strategy: awkward-sizes
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: cancel-old
    when: strategy.open_orders > 0
    cancel: {}
  - name: written
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.970, sz: 2.0}
  - name: four
    when: price.mark > 0
    place:
      order: {side: BUY, type: LIMIT, px: price.mark * 0.9700, sz: 4.00}
  - name: computed
    when: price.mark > 0
    place:
      ladder: {side: BUY, count: 4, from_px: price.mark * 0.969, step_px: 10.50,
               sz: 1 + i * 0.5}
"""

# BUY orders from the band's low edge up, about 7 bps apart, while the mark rises between reads.
AT_THE_BAND_EDGE = """strategy: band-edge
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: cancel-old
    when: strategy.open_orders > 0
    cancel: {}
  - name: low-edge
    when: price.mark > 0
    place:
      ladder: {side: BUY, count: 10, from_px: price.sell_limit,
               to_px: price.sell_limit * 1.006, sz: 1}
"""

# The account's position mode switched back and forth beside the one-way strategies' orders:
# to HEDGE in one minute of four, back to ONE_WAY two minutes later. The switch goes out before
# the cycle's cancels and orders, so with orders resting the exchange refuses it and the mode is
# read again; every order of the cycle is planned against the mode the account then has.
MODE_SWITCH = """strategy: mode-switch
symbol: BTC_USDT_PERP
every: 1m
rules:
  - name: to-hedge
    when: (now // 60000) % 4 == 1
    set_position_mode: HEDGE
  - name: to-one-way
    when: (now // 60000) % 4 == 3
    set_position_mode: ONE_WAY
"""


ROWS: tuple[Row, ...] = (
    Row("baseline", "no fault: the load itself", _once(), tags=frozenset({"quick"})),
    Row(
        "expired timestamps",
        "20% of batches and 5% of all requests answered 'Request expired'",
        _once(_place("expired", 0.2), _every("expired", 0.05)),
        tags=frozenset({"quick"}),
    ),
    Row("skew +3 s", "server clock 3 s ahead, jumping every 4 cycles", _skew(3_000)),
    Row("skew -3 s", "server clock 3 s behind, jumping every 4 cycles", _skew(-3_000)),
    Row(
        "skew +7 s",
        "server clock 7 s ahead (past the 5 s rule), jumping every 4 cycles",
        _skew(7_000),
        tags=frozenset({"quick"}),
    ),
    Row("skew -7 s", "server clock 7 s behind, jumping every 4 cycles", _skew(-7_000)),
    Row("skew +60 s", "server clock 60 s ahead, jumping every 4 cycles", _skew(60_000)),
    Row("skew -60 s", "server clock 60 s behind, jumping every 4 cycles", _skew(-60_000)),
    Row(
        "429 storm",
        "40% of all requests answered 429 (Retry-After 0.5 s)",
        _once(_every("rate_limit", 0.4, retry_after=0.5)),
        tags=frozenset({"quick"}),
    ),
    Row(
        "500 burst",
        "25% of all requests answered HTTP 500",
        _once(_every("http_500", 0.25)),
    ),
    Row(
        "503 burst",
        "25% of all requests answered HTTP 503",
        _once(_every("http_503", 0.25)),
    ),
    Row(
        "dropped before processing",
        "25% of batches and 5% of all requests lost before the exchange saw them",
        _once(_place("drop_before", 0.25), _every("drop_before", 0.05)),
    ),
    Row(
        "dropped after processing",
        "25% of batches processed, then the connection dropped (the ambiguous case)",
        _once(_place("drop_after", 0.25)),
        tags=frozenset({"quick"}),
    ),
    Row(
        "slow past the timeout",
        "20% of batches processed but answered after 15 s (client timeout 10 s)",
        _once(_place("latency", 0.2, delay_ms=15_000)),
    ),
    Row(
        "malformed bodies",
        "10% of batches answered an HTML page, 10% an empty body",
        _once(_place("html", 0.1), _place("empty", 0.1)),
    ),
    Row(
        "truncated bodies",
        "20% of batches processed, their answer cut in half",
        _once(_place("truncated", 0.2)),
        tags=frozenset({"quick"}),
    ),
    Row(
        "everything at once",
        "all of the above at low rates, with the clock jumping 7 s",
        _once(
            _every("http_503", 0.05),
            _every("rate_limit", 0.05, retry_after=0.2),
            _place("drop_after", 0.05),
            _place("drop_before", 0.05),
            _place("truncated", 0.05),
            _place("latency", 0.05, delay_ms=15_000),
            _every("expired", 0.03),
        ),
    ),
    Row(
        "5xx after processing",
        "20% of batches processed, then answered HTTP 500 (the orders rest: look them up)",
        _once(_place("http_500", 0.2, process=True)),
        tags=frozenset({"quick"}),
    ),
    Row(
        "late inside the window",
        "20% of batches reach the exchange 4 s late (inside its 5 s window), after the"
        " client's 2 s timeout and its first lookup",
        _once(_place("late", 0.2, delay_ms=4_000)),
        timeout_s=2.0,
    ),
    Row(
        "exchange clock +1 h",
        "server clock an hour ahead, jumping every 4 cycles",
        _skew(3_600_000),
    ),
    Row(
        "exchange clock -1 h",
        "server clock an hour behind, jumping every 4 cycles",
        _skew(-3_600_000),
    ),
    Row(
        "awkward values",
        "strategies placing whole sizes written with decimals and BUYs at the band's low edge"
        " every cycle, the mark rising 3 bps before each request, and the position mode"
        " switched to HEDGE and back beside them: 0 orders refused by the exchange",
        _drift("0.0003"),
        extra_strategies=(
            ("awkward-sizes.yaml", AWKWARD_SIZES),
            ("band-edge.yaml", AT_THE_BAND_EDGE),
            ("mode-switch.yaml", MODE_SWITCH),
        ),
        refusals=False,
    ),
    Row(
        "loopback: dropped after",
        "over real sockets (uvicorn): 25% of batches processed, then the connection closed",
        _once(_place("drop_after", 0.25)),
        loopback=True,
        cycles_factor=0.25,
    ),
    Row(
        "loopback: slow past the timeout",
        "over real sockets: 10% of batches answered after 1.5 s, client timeout 1 s",
        _once(_place("latency", 0.1, delay_ms=1_500)),
        timeout_s=1.0,
        loopback=True,
        cycles_factor=0.25,
    ),
    Row(
        "loopback: dripping answer",
        "over real sockets: 5 batch answers dripped one byte every 2 ms (about 2 s each),"
        " client timeout 1 s",
        _once(_place("drip", 1.0, delay_ms=2, times=5)),
        timeout_s=1.0,
        loopback=True,
        cycles_factor=0.1,
    ),
)
