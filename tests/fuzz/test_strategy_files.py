"""Random mutations of the example strategy files: the loader (what ``botkit check`` and the
running service use) answers every one with a strategy or with located problems — each naming
the file and a line — never another exception, never in more than a few seconds. The command
itself prints one line per problem and no traceback.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.cli.check_cmd import load_instruments
from botkit.errors import StrategyFileError
from botkit.exchange.models import Instrument
from botkit.rules.loader import loads_bytes
from tests.fuzz.bounded import within
from tests.fuzz.profiles import FUZZ

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "strategies").rglob("*.yaml"))
TOKENS = (
    "1e999999",
    "-1",
    "0",
    "NaN",
    ".inf",
    "-.inf",
    "~",
    "null",
    "&a",
    "*a",
    "<<: *a",
    "!!python/object/apply:os.system ['id']",
    "!!binary AAAA",
    "__class__",
    "price.mark.__class__",
    "__import__('os')",
    "10**10**10",
    "9" * 500,
    "(" * 100,
    "x" * 2000,
    "{",
    "[",
    "'",
    '"',
    "|",
    ">",
    "- ",
    ": ",
    "\t",
    "\ufeff",
    "\x00",
    "ms('99999999999d')",
    "ms('-1s')",
    "every: 0s",
    "count: 100000",
)


INSTRUMENTS: dict[str, Instrument] = dict(load_instruments("sim", None) or {})


@st.composite
def mutated_text(draw: st.DrawFn) -> tuple[str, bytes]:
    path = draw(st.sampled_from(EXAMPLES))
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for _ in range(draw(st.integers(1, 4))):
        if not lines:
            lines = ["\n"]
        at = draw(st.integers(0, len(lines) - 1))
        how = draw(
            st.sampled_from(["delete", "duplicate", "swap", "indent", "token", "cut", "garble"])
        )
        line = lines[at]
        if how == "delete":
            del lines[at]
        elif how == "duplicate":
            lines.insert(at, line)
        elif how == "swap":
            other = draw(st.integers(0, len(lines) - 1))
            lines[at], lines[other] = lines[other], lines[at]
        elif how == "indent":
            shift = draw(st.integers(-4, 4))
            lines[at] = " " * max(0, shift) + line[max(0, -shift) :]
        elif how == "token":
            cut = draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + draw(st.sampled_from(TOKENS)) + line[cut:]
        elif how == "cut":
            start = draw(st.integers(0, len(line)))
            lines[at] = line[:start] + line[start + draw(st.integers(1, 20)) :]
        else:
            cut = draw(st.integers(0, len(line)))
            lines[at] = line[:cut] + draw(st.text(max_size=12)) + line[cut:]
    return path.name, "".join(lines).encode("utf-8", errors="surrogatepass")


def _check_one(name: str, raw: bytes) -> None:
    file = f"fuzz/{name}"
    with within(10.0, f"loading a mutation of {name}"):  # CPU seconds: 2.5 for 5000 rules here
        try:
            loads_bytes(raw, file, instruments=INSTRUMENTS)
        except StrategyFileError as exc:
            problems = exc.problems
        else:
            return
    assert problems
    for problem in problems:
        assert problem.where.file == file, problem.format()
        assert problem.where.line is not None, problem.format()
        assert "\n" not in problem.format(), problem.format()


@FUZZ
@given(case=mutated_text())
def test_every_mutated_example_loads_or_gets_located_problems(case: tuple[str, bytes]) -> None:
    _check_one(*case)


@pytest.mark.parametrize(
    "text",
    [
        "a: &a [x, x, x, x, x, x, x, x, x]\n"
        + "".join(
            f"{chr(98 + n)}: &{chr(98 + n)} [{', '.join(['*' + chr(97 + n)] * 9)}]\n"
            for n in range(9)
        ),
        "strategy: &s x\nsymbol: *s\nevery: *s\nrules: *s\n",
        "rules: &r [*r]\n",
        "strategy: s\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n" + "  - name: r\n" * 5000,
        "{" * 5000,
        "- " * 5000 + "x",
        "strategy: s\n" + "  " * 3000 + "x: 1\n",
    ],
    ids=["alias-bomb", "aliases", "recursive", "5000-rules", "braces", "nested-lists", "indent"],
)
def test_hostile_yaml_shapes_are_refused_quickly(text: str) -> None:
    _check_one("hostile.yaml", text.encode())


def test_botkit_check_prints_located_lines_and_no_traceback(tmp_path: Path) -> None:
    """The command over a folder of mutations, as an operator runs it (one subprocess)."""
    cases = [
        b"strategy: x\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    when: (\n",
        b"strategy: [\n",
        b"\xff\xfe not utf-8",
        b"strategy: y\nsymbol: NOPE\nevery: 0s\nrules: []\n",
        b"strategy: z\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n"
        b"  - name: r\n    when: price.mark.__class__ > 0\n    cancel: {}\n",
    ]
    for index, raw in enumerate(cases):
        (tmp_path / f"case{index}.yaml").write_bytes(raw)
    result = subprocess.run(
        [sys.executable, "-m", "botkit", "check", str(tmp_path), "--instruments", "sim"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Traceback" not in output
    problems = [line for line in output.splitlines() if str(tmp_path) in line]
    assert len(problems) >= len(cases)
    for index in range(len(cases)):
        assert f"case{index}.yaml:" in output, output
