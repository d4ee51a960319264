"""What every row of the fault matrix shares: the ladder strategy, the exchange-side recorder and
the tally of one run (intended, placed, duplicates, unsettled, mismatches, cycles lost).

The recorder wraps the simulator's wire API (inside the simulator's lock), so it sees every
placement the exchange *processed* — including those whose answer a fault then destroyed. It is
the ground truth the journal is compared with: the simulator itself forgets fill-less cancelled
orders after a few hours, the recorder never does.
"""

from __future__ import annotations

import textwrap
import threading
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botkit.journal import Journal, OrderFilter, Outcome
from botkit.sim.codes import SimError

__all__ = [
    "LADDER_RUNGS",
    "PERIOD_MS",
    "PLACE",
    "Recorder",
    "Tally",
    "ladder_strategy",
    "tally",
    "write_strategy",
]

PLACE = "/v3/trade/orders"
LADDER_RUNGS = 25
PERIOD_MS = 60_000

_STRATEGY = """\
    # The fault matrix's load: a fresh {rungs}-order BUY ladder every cycle, far enough under
    # the mark never to fill, and last cycle's ladder cancelled first.
    strategy: matrix
    symbol: BTC_USDT_PERP
    every: {every}
    rules:
      - name: cancel-old
        when: strategy.open_orders > 0
        cancel: {{rule: ladder}}
      - name: ladder
        when: price.mark > 0
        place:
          ladder: {{side: BUY, count: {rungs}, from_px: price.mark * 0.98,
                   step_px: price.mark * 0.0005, sz: 1}}
"""


def ladder_strategy(*, rungs: int = LADDER_RUNGS, every: str = "1m") -> str:
    """The strategy file text of the matrix's load."""
    return textwrap.dedent(_STRATEGY.format(rungs=rungs, every=every))


def write_strategy(folder: Path, *, rungs: int = LADDER_RUNGS, every: str = "1m") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "matrix.yaml"
    path.write_text(ladder_strategy(rungs=rungs, every=every))
    return path


class Recorder:
    """Wraps the simulator's wire API; records every placement the exchange processed."""

    def __init__(self, api: Any) -> None:
        self._api = api
        self._lock = threading.Lock()
        self.accepted: dict[str, str] = {}
        """clOrdId → ordId of every order the exchange placed."""
        self.placements: Counter[str] = Counter()
        """How many times each clOrdId was placed (must be 1)."""
        self.duplicate_answers: Counter[str] = Counter()
        """clOrdIds sent again while the exchange had them (its 250 answer)."""
        self.rejected: Counter[str] = Counter()
        self.reasons: dict[str, tuple[int, str]] = {}
        """clOrdId → (code, msg) of the exchange's last refusal of it."""
        self.unanswerable: set[str] = set()
        """clOrdIds the exchange fails to answer about (503 on any lookup naming them)."""

    def is_public(self, method: str, path: str) -> bool:
        result: bool = self._api.is_public(method, path)
        return result

    def call(self, method: str, path: str, query: Mapping[str, str], body: Any | None) -> Any:
        if method == "GET" and query.get("clOrdId") in self.unanswerable:
            raise SimError(503, "Service degraded, try again later", http_status=503)
        data = self._api.call(method, path, query, body)
        if method == "POST" and path == PLACE:
            with self._lock:
                for item in data:
                    code, cid = int(item["code"]), str(item["clOrdId"])
                    if code == 200:
                        self.placements[cid] += 1
                        self.accepted[cid] = str(item["ordId"])
                    elif code == 250:
                        self.duplicate_answers[cid] += 1
                    else:
                        self.rejected[cid] += 1
                        self.reasons[cid] = (code, str(item.get("msg", "")))
        return data

    @property
    def duplicates(self) -> int:
        """Placements beyond the first of a clOrdId, plus re-sends the exchange refused as 250."""
        with self._lock:
            extra = sum(n - 1 for n in self.placements.values() if n > 1)
            return extra + sum(self.duplicate_answers.values())


@dataclass
class Tally:
    """The figures of one matrix row."""

    row: str
    cycles: int = 0
    """Cycles the service ran (journaled)."""
    intended: int = 0
    """Orders the strategy decided (journaled intents, refusals included)."""
    placed: int = 0
    """Distinct orders the exchange placed."""
    failed: int = 0
    """Orders journaled as failed or rejected: never placed, and the journal says so."""
    duplicates: int = 0
    unsettled: int = 0
    mismatches: int = 0
    cycles_failed: int = 0
    """Cycles that ran but decided nothing (a read failed past its retries)."""
    slots_missed: int = 0
    """Evaluation slots of the run's span without a decision (the service was down, or the
    exchange clock jumped past them)."""
    faults: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)
    refused: int = 0
    """Orders the exchange refused (any per-order code but 250 duplicate)."""
    refusals_allowed: bool = True
    """False in a row whose every order botkit must check locally: a refusal is red."""

    @property
    def ok(self) -> bool:
        """The three figures that must be 0, and some orders actually placed."""
        clean = self.duplicates == 0 and self.unsettled == 0 and self.mismatches == 0
        refused = self.refused and not self.refusals_allowed
        return clean and self.placed > 0 and not refused


def tally(
    row: str,
    journal: Journal,
    recorder: Recorder,
    *,
    slots: int,
    faults: int = 0,
    seconds: float = 0.0,
) -> Tally:
    """Compare the journal with what the exchange processed, after the final reconcile."""
    rows = journal.orders(OrderFilter(include_dry=False))
    accepted = {r.cl_ord_id: r.ord_id for r in rows if r.outcome is Outcome.ACCEPTED}
    exchange = dict(recorder.accepted)
    mismatched = {
        c for c in accepted.keys() | exchange.keys() if accepted.get(c) != exchange.get(c)
    }
    cycles = [c for c in journal.cycles() if not c.dry]
    result = Tally(
        row=row,
        cycles=len(cycles),
        intended=len(rows),
        placed=len(exchange),
        failed=sum(1 for r in rows if r.outcome in (Outcome.FAILED, Outcome.REJECTED)),
        duplicates=recorder.duplicates,
        unsettled=sum(1 for r in rows if r.outcome is None),
        mismatches=len(mismatched),
        cycles_failed=sum(1 for c in cycles if c.error),
        slots_missed=max(0, slots - len({r.slot for r in rows})),
        faults=faults,
        seconds=seconds,
        refused=sum(recorder.rejected.values()),
    )
    if recorder.rejected:
        codes = Counter(f"{c} {m[:60]}" for c, m in recorder.reasons.values())
        result.notes.append(
            f"refused by the exchange: {sum(recorder.rejected.values())}"
            f" ({', '.join(f'{n}× {t}' for t, n in codes.most_common(3))})"
        )
    if mismatched:
        result.notes.append("mismatched: " + ", ".join(sorted(mismatched)[:5]))
    return result
