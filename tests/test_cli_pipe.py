"""A command whose reader goes away (``botkit ... | head``) ends quietly with exit 141
(128 + SIGPIPE, as any Unix tool reports it), never with "internal error (BrokenPipeError)"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "args",
    [
        ["schema"],
        ["exchange", "instruments"],
        ["check", "strategies", "--instruments", "none"],
        ["sim", "config"],
        ["exchange", "tickers"],
    ],
    ids=lambda a: " ".join(a),
)
def test_a_closed_output_pipe_ends_the_command_quietly_with_141(args: list[str]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "botkit", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the first line is written
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = proc.wait(timeout=60)
    assert err == ""
    assert code == 141
