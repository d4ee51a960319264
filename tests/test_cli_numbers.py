"""Numbers are written for people one way (:func:`botkit.numbers.plain`): tables show ``0``, not
``0E-8``, and never an exponent or trailing zeros an amount arrived with."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.cli.demo_cmd import format_table
from botkit.numbers import plain, plain_text

EXPONENT = re.compile(r"\d[eE][+-]?\d")


@pytest.mark.parametrize(
    ("text", "written"),
    [
        ("0E-8", "0"),
        ("0.00000000", "0"),
        ("-0.00", "0"),
        ("12.50", "12.5"),
        ("1E+2", "100"),
        ("-3.1400", "-3.14"),
        ("0.00000001", "0.00000001"),
        ("1.5E-10", "0.00000000015"),
        ("123456789012345678901234567890.123456789", "123456789012345678901234567890.123456789"),
        ("Infinity", "Infinity"),
    ],
)
def test_plain_writes_fixed_point_without_exponent_or_trailing_zeros(
    text: str, written: str
) -> None:
    assert plain(Decimal(text)) == written


def _botkit(tmp_path: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BOTKIT_")}
    done = subprocess.run(
        [sys.executable, "-m", "botkit", *args],
        cwd=tmp_path,  # no settings file: the embedded simulator
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@pytest.mark.parametrize("command", ["balance", "tickers"])
def test_exchange_tables_show_zero_as_0_not_0e_8(tmp_path: Path, command: str) -> None:
    out = _botkit(tmp_path, "exchange", command)
    assert EXPONENT.search(out) is None, out
    header, *rows = out.splitlines()
    column = "mmr" if command == "balance" else "dC"  # the exchange sends "0.00000000"
    index = header.split().index(column)
    assert [row.split()[index] for row in rows] == ["0"] * len(rows)


def test_demo_tables_write_decimals_plainly() -> None:
    table = format_table(["a", "b"], [[Decimal("0E-8"), Decimal("2.500")]])
    assert table.splitlines()[-1].split() == ["0", "2.5"]


@given(st.decimals(allow_nan=False, allow_infinity=False, places=None))
def test_plain_is_the_same_number_written_fixed_point_and_shortest(value: Decimal) -> None:
    text = plain(value)
    assert Decimal(text) == value
    assert "E" not in text.upper()
    assert text != "-0"
    assert "." not in text or not text.endswith(("0", "."))


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN", "-NaN", "sNaN"])
def test_plain_writes_what_is_not_finite_as_str_does(value: str) -> None:
    assert plain(Decimal(value)) == str(Decimal(value))
    assert plain_text(format(Decimal(value), "f")) == str(Decimal(value))
