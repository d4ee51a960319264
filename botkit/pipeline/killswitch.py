"""The kill switch, at the edge: is it engaged now (setting, or a file that exists)?

The one place of the pipeline that touches the file system; the planner only receives the answer.
"""

from __future__ import annotations

from pathlib import Path

from botkit.pipeline.risk import GuardSettings

__all__ = ["kill_switch_reason"]


def kill_switch_reason(guards: GuardSettings) -> str | None:
    """Why new orders are stopped now, or ``None`` when the kill switch is off."""
    if guards.kill_switch:
        return "kill switch engaged by setting (kill_switch = true) — set it false to trade"
    if guards.kill_switch_file:
        path = Path(guards.kill_switch_file)
        try:
            engaged = path.exists()
        except OSError as exc:  # fail safe: a switch that cannot be read counts as engaged
            return (
                f"kill switch file {str(path)[:80]} cannot be checked"
                f" ({exc.strerror or type(exc).__name__}) — fix kill_switch_file"
            )
        if engaged:
            return f"kill switch file {path} exists — remove it to resume trading"
    return None
