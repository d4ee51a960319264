"""Issue 20's "a compiled core where it pays": the measurement of botkit compiled with mypyc.

Not run by ``python -m bench`` (it compiles for minutes); run it by hand, from the repository:

    python -m bench.mypyc_trial build /tmp/mypyc-trial      # copy the tree there, compile
    python -m bench.mypyc_trial measure /tmp/mypyc-trial    # scenario B, pure vs compiled

``build`` copies this tree's ``botkit`` (tracked and untracked, not ignored, files) and
``pyproject.toml`` into the folder, applies :data:`EDITS` (the small source changes mypyc
needs in modules it compiles; each is behaviour-neutral) and compiles :func:`modules` (every
module of the hot packages but :data:`LEFT_OUT`, each with the reason it stays Python) into one
mypyc group, in place in the copy, so this tree's ``.py`` files are never shadowed.

``measure`` runs scenario B (``btc-dip-ladder.yaml`` + ``btc-exits.yaml``) on ``--data``,
interleaved pure (this tree) and compiled (the copy), each from its own folder (``python -m``
puts the current folder first on ``sys.path``); it prints each run's CPU (user + sys of the
child, ``os.wait4``), the medians and their ratio, and compares the ``--report`` folders and
the printed summaries byte for byte.

The result (2026-11-26, mypy/mypyc 2.4.1, gcc 12, 2 shared cores; /tmp/iss12/mc-phase1.md):
B on 150,000 candles at 0.84-0.88 of the pure CPU (interleaved medians), 0.856 of its
instructions (callgrind on 20,000 and 40,000 candles, extrapolated); scenario A unchanged;
the bench runner's overhead ~0.88; for 2.2-4.5 min of compiling. Not past the bar the issue
set (0.85) for shipping a build step. Compiled with ``backtest/columns.py`` too (and
``rules/history.py`` left out), B is as fast and identical, but the test suite crashes (a
segmentation fault in the garbage collector, tests/backtest/test_columns.py) and fails where
``rules/history.py``'s classes subclass the compiled ``View``; the set here passes tests/rules,
the golden examples and test_columns; the whole suite against it: 33 failures, 20 tests
patching compiled attributes (read-only on native classes; module constants read natively),
2 subclassing a compiled class, 6 sweeps in other processes (native instances do not pickle)
and 5 real changes: compiled functions check their arguments' types, so ill-typed input raises
TypeError before botkit's own check answers (``Journal(group_rows="8")``, an order id None).
"""

from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from botkit.cli.argtypes import positive_int

ROOT = Path(__file__).resolve().parent.parent

PACKAGES = (
    "sim",
    "rules",
    "pipeline",
    "runner",
    "runner/orders",
    "exchange",
    "backtest",
    "journal",
    "ports",
)
"""The packages whose modules are compiled (the hot path of a backtest and of a live cycle)."""

SINGLE = ("intents", "snapshot", "numbers", "frozen", "outward", "timeparse", "redaction")
"""Top-level modules compiled too, unless left out."""

LEFT_OUT: dict[str, str] = {
    "botkit/exchange/port.py": "runtime_checkable Protocol hierarchy: 'Non-extension classes "
    "may not inherit from extension classes'",
    "botkit/clock.py": "@runtime_checkable Protocol: TypeError at import when compiled",
    "botkit/sim/http.py": "@runtime_checkable Protocol: TypeError at import when compiled",
    "botkit/rules/functions.py": "subclasses ArithmeticError: 'Inheriting from most builtin "
    "types is unimplemented' (mypyc_attr(native_class=False) needs mypy_extensions at run time)",
    "botkit/rules/interval.py": "subclasses ArithmeticError (as functions.py)",
    "botkit/backtest/columns.py": "compiled, tests/backtest/test_columns.py crashes (a "
    "segmentation fault in the garbage collector); B's reports stayed identical",
    "botkit/snapshot.py": "internal mypyc error (KeyError '__new__': cls.__new__(cls))",
    "botkit/rules/yamlsrc.py": "surrogate code points in a string literal are not supported",
    "botkit/exchange/models.py": "pydantic models: C error 'CPyModule_pydantic___main' "
    "undeclared; with `import pydantic.main` added, TypeError at import (Field() defaults)",
    "botkit/rules/schema.py": "pydantic models (as exchange/models.py)",
    "botkit/sim/config.py": "pydantic models (as exchange/models.py)",
    "botkit/sim/faults.py": "pydantic models (as exchange/models.py)",
    "botkit/sim/server.py": "attribute _thread: C struct field __thread, a GCC keyword",
    "botkit/rules/store.py": "dataclass field annotated `object`: KeyError 'object' at import",
    "botkit/retry.py": "internal mypyc error (@quick_init dataclass with try/except method)",
    "botkit/errors.py": "multiple inheritance is not supported (except for traits)",
    "botkit/journal/conn.py": "subclasses sqlite3.Connection (a C type mypyc does not check): "
    "TypeError then a segmentation fault at run time",
}
"""Modules that stay Python, and why (each found by compiling or running it)."""

EDITS: tuple[tuple[str, str, str], ...] = (
    (
        "botkit/sim/book.py",
        '    NEW = "NEW"\n    PARTIALLY_FILLED = "PARTIALLY_FILLED"\n    FILLED = "FILLED"\n'
        '    CANCELED = "CANCELED"\n    PARTIALLY_CANCELED = "PARTIALLY_CANCELED"\n'
        "    OPEN = frozenset({NEW, PARTIALLY_FILLED})\n"
        "    CLOSED = frozenset({FILLED, CANCELED, PARTIALLY_CANCELED})\n",
        '    NEW: Final = "NEW"\n    PARTIALLY_FILLED: Final = "PARTIALLY_FILLED"\n'
        '    FILLED: Final = "FILLED"\n    CANCELED: Final = "CANCELED"\n'
        '    PARTIALLY_CANCELED: Final = "PARTIALLY_CANCELED"\n'
        "    OPEN: Final = frozenset({NEW, PARTIALLY_FILLED})\n"
        "    CLOSED: Final = frozenset({FILLED, CANCELED, PARTIALLY_CANCELED})\n",
    ),
    (
        "botkit/sim/book.py",
        "from decimal import Decimal\n",
        "from decimal import Decimal\nfrom typing import Final\n",
    ),
    ("botkit/sim/state.py", "self._thread", "self._worker"),
    (
        "botkit/rules/history.py",
        '    "filled": Field(\n        OrdersView,\n        "only fully filled orders",\n'
        "        lambda v: v.sub(lambda r: r.state is OrderHistoryState.FILLED),\n    ),\n",
        '    "filled": Field(OrdersView, "only fully filled orders", _filled),\n',
    ),
    (
        "botkit/rules/history.py",
        "\nOrdersView.FIELDS = {",
        "\n\n\ndef _is_filled(r: Any) -> bool:\n"
        "    return r.state is OrderHistoryState.FILLED\n\n\n"
        "def _filled(v: Any) -> RecordsView:\n"
        "    return v.sub(_is_filled)  # type: ignore[no-any-return]\n\n\n"
        "OrdersView.FIELDS = {",
    ),
)
"""(file, old, new): OrderState's constants read through the class ('Cannot access instance
attribute "NEW" through class object' unless Final); the checkpointer's ``_thread`` (a C
field ``__thread``, see LEFT_OUT's server.py); history's nested lambda (an internal mypyc
error) as two functions: history must be compiled with views.py, whose ``View`` its classes
subclass ("interpreted classes cannot inherit from compiled")."""

STRATEGIES = ("strategies/btc-dip-ladder.yaml", "strategies/btc-exits.yaml")


def modules(dest: Path) -> list[str]:
    """The files compiled, relative to ``dest``."""
    found = [f"botkit/{name}.py" for name in SINGLE]
    for package in PACKAGES:
        found += sorted(str(p.relative_to(dest)) for p in (dest / "botkit" / package).glob("*.py"))
    return [f for f in found if not f.endswith("__init__.py") and f not in LEFT_OUT]


MARKER = ".mypyc-trial"
"""The file ``build`` writes into its folder first: the only kind of folder it ever deletes."""


class TrialError(Exception):
    """A bad argument or a step that failed: one line for the operator, no traceback."""


def _check_dest(dest: Path) -> None:
    """Refuse a folder ``build`` must not replace: this tree, a folder holding it, one inside
    it, a file, or an existing folder with something in it that no ``build`` made."""
    if dest == ROOT or ROOT.is_relative_to(dest) or dest.is_relative_to(ROOT):
        raise TrialError(
            f"{dest}: the build folder must lie outside the repository {ROOT} (it is replaced)"
        )
    if dest.exists() and not dest.is_dir():
        raise TrialError(f"{dest} is a file: name a new folder for the build")
    if dest.is_dir() and any(dest.iterdir()) and not (dest / MARKER).is_file():
        raise TrialError(
            f"{dest} exists and is not a trial build (no {MARKER} in it): remove it yourself,"
            " or name a new folder"
        )


def _copy(dest: Path) -> None:
    _check_dest(dest)
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "botkit", "pyproject.toml"],  # noqa: S607
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        raise TrialError(
            f"{ROOT} is not a git checkout (git ls-files failed): run it from one"
        ) from None
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    (dest / MARKER).write_text("made by python -m bench.mypyc_trial build; replaced by the next\n")
    for name in listed:
        if name.endswith(".so") or not (ROOT / name).is_file():
            continue
        (dest / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, dest / name)
    for name, old, new in EDITS:
        path = dest / name
        text = path.read_text()
        if new not in text:
            if old not in text:
                raise TrialError(f"{name}: the text mypyc needs changed is not there any more")
            path.write_text(text.replace(old, new, 1 if "\n" in old else -1))


def build(dest: Path, jobs: int) -> None:
    _copy(dest)
    files = modules(dest)
    start = time.monotonic()
    code = (
        "import sys\nfrom setuptools import setup\nfrom mypyc.build import mypycify\n"
        "setup(name='botkit-trial', packages=[], py_modules=[],"
        " ext_modules=mypycify(sys.argv[2:], opt_level='3', multi_file=True),"
        " script_args=['build_ext', '--inplace', '-j', sys.argv[1]])\n"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter with fixed arguments
        [sys.executable, "-c", code, str(jobs), *files],
        cwd=dest,
        check=False,
        stdout=subprocess.DEVNULL,
    )
    if done.returncode:
        raise TrialError(f"the compile failed (exit {done.returncode}): its errors are above")
    print(f"compiled {len(files)} modules in {time.monotonic() - start:.0f} s (wall, -j {jobs})")
    print(f"left as Python: {len(LEFT_OUT)}: " + ", ".join(sorted(LEFT_OUT)))


def _run(folder: Path, data: Path, report: Path) -> tuple[float, bytes]:
    """One scenario-B run from ``folder``: its CPU seconds and its printed summary (the report
    folder's name taken out)."""
    argv = [
        sys.executable,
        "-m",
        "botkit",
        "backtest",
        "--data",
        str(data),
        "--strategies",
        *(str(ROOT / s) for s in STRATEGIES),
        "--report",
        str(report),
    ]
    env = {**os.environ, "PYTHONPATH": str(folder)}
    if report.exists():
        shutil.rmtree(report)
    proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=subprocess.PIPE)  # noqa: S603
    out = proc.stdout.read() if proc.stdout else b""
    _, status, usage = os.wait4(proc.pid, 0)
    if status:
        raise TrialError(f"the run from {folder} failed (wait status {status})")
    return usage.ru_utime + usage.ru_stime, out.replace(str(report).encode(), b"REPORT")


def _same(a: Path, b: Path) -> bool:
    cmp = filecmp.dircmp(a, b)
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(a, b, cmp.common_files, shallow=False)
    return not mismatch and not errors and all(_same(a / d, b / d) for d in cmp.common_dirs)


def _check_built(dest: Path) -> None:
    """Refuse a folder with no compiled build: measuring it would run this tree twice."""
    if not (dest / MARKER).is_file():
        raise TrialError(f"{dest} is not a trial build (no {MARKER}): run build {dest} first")
    if not list((dest / "botkit" / "sim").glob("engine.*.so")):
        raise TrialError(f"{dest} holds no compiled modules (its build failed?): build it again")


def measure(dest: Path, data: Path, rounds: int, scratch: Path) -> None:
    _check_built(dest)
    if not data.is_file():
        raise TrialError(f"--data {data}: no such file (make one with botkit data synth)")
    for folder in (ROOT, dest):  # the modules left as Python byte-compiled once, on both sides
        subprocess.run([sys.executable, "-m", "compileall", "-q", "botkit"], cwd=folder, check=True)
    cpu: dict[str, list[float]] = {"pure": [], "compiled": []}
    outs: dict[str, bytes] = {}
    for n in range(rounds):
        order = ("pure", "compiled") if n % 2 == 0 else ("compiled", "pure")
        for side in order:
            seconds, outs[side] = _run(ROOT if side == "pure" else dest, data, scratch / side)
            cpu[side].append(seconds)
            print(f"{side:9} {seconds:6.2f} s CPU")
    pure, compiled = statistics.median(cpu["pure"]), statistics.median(cpu["compiled"])
    print(f"medians: pure {pure:.2f} s, compiled {compiled:.2f} s, ratio {compiled / pure:.3f}")
    same = _same(scratch / "pure", scratch / "compiled") and outs["pure"] == outs["compiled"]
    print("reports and summaries: " + ("identical" if same else "DIFFERENT"))


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.mypyc_trial",
        description="Issue 20's compiled core: botkit compiled with mypyc, measured against"
        ' pure Python on scenario B (docs/backtest.md, "The seventh session\'s passes").',
        epilog="examples:\n  python -m bench.mypyc_trial build /tmp/mypyc-trial\n"
        "  python -m bench.mypyc_trial measure /tmp/mypyc-trial --data b150k.csv",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="copy the tree to DEST (a new folder) and compile it")
    b.add_argument("dest", type=Path)
    b.add_argument("--jobs", type=positive_int, default=2)
    m = sub.add_parser("measure", help="scenario B, interleaved pure and compiled")
    m.add_argument("dest", type=Path)
    m.add_argument("--data", type=Path, default=Path("/tmp/b150k.csv"))  # noqa: S108
    m.add_argument("--rounds", type=positive_int, default=6)
    args = parser.parse_args(argv)
    try:
        if args.command == "build":
            build(args.dest.resolve(), args.jobs)
        else:
            with tempfile.TemporaryDirectory(prefix="mypyc-trial-") as scratch:
                measure(args.dest.resolve(), args.data.resolve(), args.rounds, Path(scratch))
    except TrialError as exc:
        print(f"mypyc_trial: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
