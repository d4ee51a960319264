"""Strategy files the fuzz pass found crashing the loader (a raw ruamel exception, hence a
traceback from ``botkit check`` and a failed reload) instead of a located problem."""

from __future__ import annotations

import pytest

from botkit.errors import StrategyFileError
from botkit.rules.loader import loads_bytes

GOOD = "strategy: s\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    when: true\n"


@pytest.mark.parametrize(
    ("char", "at", "line"),
    [("\x08", 0, 1), ("\x00", 12, 2), ("\x1b", len(GOOD) - 3, 6), ("\ufffe", 30, 2)],
    ids=["backspace-first", "nul", "escape-last-line", "noncharacter"],
)
def test_a_control_character_is_a_located_problem(char: str, at: int, line: int) -> None:
    text = GOOD[:at] + char + GOOD[at:]
    with pytest.raises(StrategyFileError) as info:
        loads_bytes(text.encode("utf-8", errors="surrogatepass"), "s.yaml")
    problem = info.value.problems[0]
    assert problem.where.file == "s.yaml"
    assert problem.where.line == line
    assert "character" in problem.message


@pytest.mark.parametrize(
    "text",
    [
        GOOD.replace("when: true", 'when: "\\ud800 > 0"'),
        GOOD.replace("name: r", 'name: "r\\udc00"'),
        GOOD + '    "\\ud800": 1\n',
        GOOD.replace("when: true", 'when: "\\ud800\\udc00"'),  # a pair YAML does not combine
    ],
    ids=["condition", "rule-name", "key", "pair"],
)
def test_an_escaped_lone_surrogate_is_a_located_problem(text: str) -> None:
    """Found by the fuzz pass: such text crashed ast.parse (UnicodeEncodeError) and could not
    be printed or journaled; YAML's escapes are the only way to write one."""
    with pytest.raises(StrategyFileError) as info:
        loads_bytes(text.encode(), "s.yaml")
    problems = info.value.problems
    assert any("surrogate" in p.message for p in problems), [p.format() for p in problems]
    for problem in problems:
        assert problem.where.line is not None
        problem.format().encode("utf-8")  # printable: no lone surrogate left in the message


@pytest.mark.parametrize("opener", ["{", "[", "[{"])
def test_deeply_nested_flow_collections_are_refused_at_once(opener: str) -> None:
    """Found by the fuzz pass: 2000 '{' took 6 s of ruamel recursion before failing."""
    import time

    started = time.monotonic()
    with pytest.raises(StrategyFileError) as info:
        loads_bytes(("strategy: " + opener * 2000).encode(), "deep.yaml")
    assert time.monotonic() - started < 1.0
    problem = info.value.problems[0]
    assert "nested" in problem.message
    assert problem.where.line == 1
