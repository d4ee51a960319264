"""The fault matrix: every row, a table of the figures, written to a file.

``python -m tests.reliability.matrix`` (``make reliability``) runs the full matrix;
``--quick`` the subset ``make test`` runs; ``--only NAME`` some rows; ``--out FILE`` where the
Markdown table goes (default ``reliability/results.md``). Exit status 1 when a row is not
green: a duplicate, an unsettled order or a journal-vs-exchange mismatch.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from loguru import logger

from tests.reliability.harness import LADDER_RUNGS, Tally
from tests.reliability.inproc import run_in_process
from tests.reliability.procs import run_sigkill, run_sigterm
from tests.reliability.rows import ROWS

__all__ = ["Scale", "main", "render", "run_matrix"]

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = ROOT / "reliability" / "results.md"

SIGKILL_ROW = "SIGKILL + restart"
SIGTERM_ROW = "SIGTERM mid-batch"
PROCESS_MEANINGS = {
    SIGKILL_ROW: "`botkit run` killed at random moments of a cycle, restarted each time",
    SIGTERM_ROW: "`botkit run` asked to stop while a batch is in flight; no reconcile after",
}


@dataclass(frozen=True)
class Scale:
    cycles: int
    kills: int
    stops: int
    quick_only: bool = False


FULL = Scale(cycles=200, kills=10, stops=5)
QUICK = Scale(cycles=8, kills=2, stops=1, quick_only=True)


def meanings() -> dict[str, str]:
    """Row name → what it injects (docs/reliability.md lists them)."""
    return {**{r.name: r.meaning for r in ROWS}, **PROCESS_MEANINGS}


def run_matrix(
    scale: Scale,
    *,
    only: Sequence[str] = (),
    processes: bool = True,
    progress: bool = False,
) -> list[Tally]:
    """Run the rows (bounded: ``scale`` cycles each, fewer where a row says so)."""
    results: list[Tally] = []

    def keep(name: str, tags: frozenset[str] = frozenset({"quick"})) -> bool:
        if only:
            return any(o.lower() in name.lower() for o in only)
        return not scale.quick_only or "quick" in tags

    def show(result: Tally) -> None:
        results.append(result)
        if progress:
            state = "ok" if result.ok else "FAILED"
            line = f"  {result.row}: {state} ({result.seconds:.1f} s)"
            print(line, file=sys.stderr, flush=True)  # noqa: T201 - progress of a CLI

    for row in ROWS:
        if keep(row.name, row.tags):
            cycles = max(4, round(scale.cycles * row.cycles_factor))
            run = run_in_process(
                row.name,
                row.arm,
                cycles=cycles,
                timeout_s=row.timeout_s,
                loopback=row.loopback,
                extra_strategies=dict(row.extra_strategies),
                refusals=row.refusals,
            )
            show(run.tally)
    if processes and keep(SIGKILL_ROW):
        show(run_sigkill(SIGKILL_ROW, kills=scale.kills))
    if processes and keep(SIGTERM_ROW):
        show(run_sigterm(SIGTERM_ROW, stops=scale.stops))
    return results


COLUMNS = (
    "row",
    "cycles",
    "intended",
    "placed",
    "failed",
    "duplicates",
    "unsettled",
    "mismatches",
    "cycles failed",
    "slots missed",
    "faults",
    "seconds",
    "result",
)


def _cells(t: Tally) -> list[str]:
    numbers = (
        t.cycles,
        t.intended,
        t.placed,
        t.failed,
        t.duplicates,
        t.unsettled,
        t.mismatches,
        t.cycles_failed,
        t.slots_missed,
        t.faults,
    )
    return [t.row, *(str(n) for n in numbers), f"{t.seconds:.1f}", "ok" if t.ok else "FAILED"]


def render(results: Sequence[Tally]) -> str:
    """The results as a Markdown table (notes under it)."""
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "|".join("---" if i == 0 else "---:" for i in range(len(COLUMNS))) + "|",
    ]
    lines += ["| " + " | ".join(_cells(t)) + " |" for t in results]
    notes = [f"- {t.row}: {'; '.join(t.notes)}" for t in results if t.notes]
    return "\n".join(lines + (["", *notes] if notes else []))


def _revision() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return "unknown"
    return out.stdout.strip() or "unknown"


def report(results: Sequence[Tally], *, scale: Scale, seconds: float, command: str) -> str:
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    green = all(t.ok for t in results)
    return "\n".join(
        [
            "# Fault matrix: last results",
            "",
            f"`{command}` — {when}, revision {_revision()}, Python {platform.python_version()},"
            f" {os.cpu_count()} CPUs; {scale.cycles} cycles per in-process row (a"
            f" {LADDER_RUNGS}-order ladder placed and the previous one cancelled each cycle),"
            f" {scale.kills} kills, {scale.stops} stops; {seconds:.0f} s in all.",
            "",
            render(results),
            "",
            f"**{'GREEN' if green else 'RED'}**: duplicates, unsettled orders and"
            " journal-vs-exchange mismatches must all be 0. What each row and column means:"
            " docs/reliability.md.",
            "",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.reliability.matrix")
    parser.add_argument("--quick", action="store_true", help="the subset make test runs")
    parser.add_argument("--only", action="append", default=[], metavar="NAME", help="rows")
    parser.add_argument("--cycles", type=int, help="cycles per in-process row")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="the Markdown file")
    args = parser.parse_args(argv)
    scale = QUICK if args.quick else FULL
    if args.cycles is not None:
        scale = Scale(args.cycles, scale.kills, scale.stops, scale.quick_only)
    logger.remove()  # the service's own logging would drown the table
    started = time.monotonic()
    results = run_matrix(scale, only=args.only, progress=True)
    seconds = time.monotonic() - started
    command = "python -m tests.reliability.matrix" + (" " + " ".join(argv) if argv else "")
    text = report(results, scale=scale, seconds=seconds, command=command)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)  # noqa: T201 - the table is the output
    print(f"written to {args.out}", file=sys.stderr)  # noqa: T201
    return 0 if results and all(t.ok for t in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
