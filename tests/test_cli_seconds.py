"""Durations in seconds on the command line (``botkit serve --exchange-every``, ``--max-age``,
``botkit status --max-age``): a negative, infinite or NaN value is a one-line usage error,
before anything is read or served."""

from __future__ import annotations

import pytest

from botkit.cli import main

NOWHERE = ["--host", "192.0.2.1"]
"""Should the value be taken, serve stops at once (beyond loopback without a token)."""


@pytest.mark.parametrize(
    "argv",
    [
        ["serve", "--exchange-every", "-1", *NOWHERE],
        ["serve", "--exchange-every", "inf", *NOWHERE],
        ["serve", "--max-age", "nan", *NOWHERE],
        ["serve", "--max-age", "-5", *NOWHERE],
        ["status", "--max-age", "-5"],
        ["status", "--max-age", "infinity"],
    ],
)
def test_a_duration_that_is_not_a_finite_count_of_seconds_is_refused(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert argv[1] in err
    assert "not a number of seconds" in err
