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
    if guards.kill_switch_file and Path(guards.kill_switch_file).exists():
        return f"kill switch file {guards.kill_switch_file} exists — remove it to resume trading"
    return None
