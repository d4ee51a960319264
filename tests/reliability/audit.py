"""``make audit``: the installed dependencies checked against PyPI's vulnerability data with
pip-audit, and a clear word when that data cannot be reached.

``python -m tests.reliability.audit`` — exit 0 when every package was audited and none has a
known vulnerability; 1 when some have (each listed with its fix versions); 2 when pip-audit is
missing or could not audit most packages (no network to PyPI: the usual cause), so a green
result always means "checked", never "could not check".
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["AuditResult", "main", "summarize"]

UNREACHABLE_SHARE = 0.5
"""More than this share of packages not audited means the vulnerability data was unreachable."""


@dataclass
class AuditResult:
    audited: int = 0
    skipped: list[str] = field(default_factory=list)
    vulnerable: list[str] = field(default_factory=list)
    """``name version: ID (fix: versions)`` per known vulnerability."""

    @property
    def unreachable(self) -> bool:
        total = self.audited + len(self.skipped)
        return total == 0 or len(self.skipped) > UNREACHABLE_SHARE * total


def summarize(report: dict[str, Any]) -> AuditResult:
    """The figures of a ``pip-audit --format json`` report."""
    result = AuditResult()
    for dep in report.get("dependencies", []):
        if "skip_reason" in dep:
            if "editable" not in dep["skip_reason"]:  # botkit itself is not on PyPI
                result.skipped.append(str(dep.get("name")))
            continue
        result.audited += 1
        for vuln in dep.get("vulns", []):
            fixes = ", ".join(vuln.get("fix_versions", [])) or "none yet"
            result.vulnerable.append(
                f"{dep.get('name')} {dep.get('version')}: {vuln.get('id')} (fix: {fixes})"
            )
    return result


def main(argv: Sequence[str] | None = None) -> int:
    exe = shutil.which("pip-audit", path=str(Path(sys.executable).parent))
    if exe is None:
        print("audit: pip-audit is not installed — run 'make install' (it is in the dev extra)")  # noqa: T201
        return 2
    proc = subprocess.run(
        [exe, "--format", "json", "--progress-spinner", "off", "--skip-editable", *(argv or [])],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"audit: pip-audit could not run ({last}) — is https://pypi.org reachable?")  # noqa: T201
        return 2
    result = summarize(report)
    for line in result.vulnerable:
        print(f"VULNERABLE {line}")  # noqa: T201
    total = result.audited + len(result.skipped)
    if result.unreachable:
        print(  # noqa: T201
            f"audit: NOT CHECKED — {len(result.skipped)} of {total} packages could not be"
            " audited: PyPI's vulnerability data is unreachable from here (no network?)."
            " Run 'make audit' where https://pypi.org is reachable."
        )
        return 2
    print(  # noqa: T201
        f"audit: {result.audited} packages checked, {len(result.vulnerable)} known"
        f" vulnerabilities"
        + (f"; not audited: {', '.join(result.skipped)}" if result.skipped else "")
    )
    return 1 if result.vulnerable else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
