"""Is the service healthy? One answer for ``botkit status`` and ``botkit serve``'s
``/api/health``, read from the journal (no lock: it works while the service holds it) and the
stop controls."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from botkit.app.service import read_journal
from botkit.clock import wall_ms
from botkit.pipeline import GuardSettings
from botkit.runner.killswitch import Controls, controls
from botkit.settings import Settings

__all__ = ["Health", "health"]


@dataclass(frozen=True, slots=True)
class Health:
    """What ``botkit status`` prints and ``/api/health`` answers."""

    healthy: bool
    controls: Controls
    problem: str = ""
    """Why there is no cycle to judge (no journal, an empty one); empty otherwise."""
    last_cycle: int | None = None
    age_s: float | None = None
    last_cycle_error: str = ""
    last_error: str = ""
    last_error_cycle: int | None = None
    orders_today: int = 0
    unsettled: int = 0
    journal: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "healthy": self.healthy,
            "problem": self.problem or None,
            "last_cycle": self.last_cycle,
            "last_cycle_age_s": None if self.age_s is None else round(self.age_s, 3),
            "last_cycle_error": self.last_cycle_error or None,
            "last_error": self.last_error or None,
            "last_error_cycle": self.last_error_cycle,
            "orders_today": self.orders_today,
            "unsettled": self.unsettled,
            "halt": self.controls.halt,
            "kill_switch": self.controls.kill_switch,
        }


def health(settings: Settings, max_age_s: float) -> Health:
    """The service's health now: its last cycle (ok, and younger than ``max_age_s``), no
    unsettled order, no stop control engaged."""
    ctl = controls(GuardSettings.from_settings(settings))
    path = Path(settings.journal)
    if not path.exists():
        return Health(False, ctl, problem=f"no journal at {path} — has the service run yet?")
    with read_journal(settings) as journal:
        cycles = journal.cycles(limit=50)
        if not cycles:
            return Health(False, ctl, problem=f"the journal {path} holds no cycle yet")
        last = cycles[0] if cycles[0].id >= cycles[-1].id else cycles[-1]
        # the journal runs on the exchange clock: the wall clock corrected by the offset the
        # service measured at its last cycle (a local clock off by an hour does not age it)
        now = wall_ms() + (last.clock_offset_ms or 0)
        last_error = next((c for c in sorted(cycles, key=lambda c: -c.id) if c.error), None)
        day_start = now - now % 86_400_000
        today = [c for c in cycles if c.started_ms >= day_start and not c.dry]
        unsettled = len(journal.unsettled())
        age_s = (now - last.started_ms) / 1000
        return Health(
            healthy=not last.error and age_s <= max_age_s and unsettled == 0 and not ctl.engaged,
            controls=ctl,
            last_cycle=last.id,
            age_s=age_s,
            last_cycle_error=last.error or "",
            last_error=last_error.error if last_error else "",
            last_error_cycle=last_error.id if last_error else None,
            orders_today=sum(c.orders for c in today),
            unsettled=unsettled,
            journal=str(path),
        )
