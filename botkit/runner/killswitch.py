"""The operator's two stop controls, at the edge: is each engaged now (setting, or a file that
exists)?

* **kill switch** (``kill_switch`` / ``kill_switch_file``): no new risk. Orders that can only
  shrink a position (reduce-only, or a hedge-mode close) and cancels still go out, so stop-losses
  and exits keep working; orders that could open or grow a position, leverage and position-mode
  changes are refused.
* **halt** (``halt`` / ``halt_file``): nothing is sent at all — no order, no cancel, no setting
  change. Reads, reconcile lookups and journaling go on.

The one place of the engine that touches the operator's control files; the planner only receives the
answers (:class:`Controls`). A file that cannot be checked counts as present (fail safe).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from botkit.pipeline.risk import GuardSettings

__all__ = ["Controls", "controls", "halt_reason", "kill_switch_reason"]


@dataclass(frozen=True, slots=True)
class Controls:
    """Which stop controls are engaged now, each with the reason (``None``: off)."""

    halt: str | None = None
    kill_switch: str | None = None

    @property
    def engaged(self) -> bool:
        return self.halt is not None or self.kill_switch is not None

    def lines(self) -> list[str]:
        """One line per control, for ``botkit status`` and the log."""
        return [
            f"halt: {'ENGAGED — ' + self.halt if self.halt else 'off'}",
            f"kill switch: {'ENGAGED — ' + self.kill_switch if self.kill_switch else 'off'}",
        ]


def _file_reason(what: str, setting: str, file: str | None, resume: str) -> str | None:
    if not file:
        return None
    path = Path(file)
    try:
        engaged = path.exists()
    except OSError as exc:  # fail safe: a switch that cannot be read counts as engaged
        return (
            f"{what} file {str(path)[:80]} cannot be checked"
            f" ({exc.strerror or type(exc).__name__}) — fix {setting}"
        )
    if engaged:
        return f"{what} file {path} exists{_who(path)} — remove it to {resume}"
    return None


def _who(path: Path) -> str:
    """`` (engaged by NAME at TIME)`` when the file says who engaged it (``botkit control``
    and ``botkit serve`` write that line), so the journaled change names who asked; else ""."""
    try:
        with path.open("rb") as f:
            head = f.read(200)
    except OSError:
        return ""
    line = head.split(b"\n", 1)[0].decode("ascii", "replace").strip()
    if not line.startswith("engaged by ") or not line.isprintable():
        return ""
    return f" ({line[:120]})"


def kill_switch_reason(guards: GuardSettings) -> str | None:
    """Why new risk is stopped now, or ``None`` when the kill switch is off."""
    if guards.kill_switch:
        return "kill switch engaged by setting (kill_switch = true) — set it false to trade"
    return _file_reason("kill switch", "kill_switch_file", guards.kill_switch_file, "trade")


def halt_reason(guards: GuardSettings) -> str | None:
    """Why nothing at all is sent now, or ``None`` when the halt is off."""
    if guards.halt:
        return "halt engaged by setting (halt = true) — set it false to send again"
    return _file_reason("halt", "halt_file", guards.halt_file, "send again")


def controls(guards: GuardSettings) -> Controls:
    """Both controls as they are now (each file checked once)."""
    return Controls(halt=halt_reason(guards), kill_switch=kill_switch_reason(guards))
