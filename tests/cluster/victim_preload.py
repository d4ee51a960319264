"""A ``dask worker --preload`` for the worker-death test: the first variant this worker is given
writes the worker's pid to ``$BOTKIT_TEST_VICTIM_SIGNAL`` and then never finishes, so the test
kills the process while the variant is running (not before it starts, not after it ends)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import botkit.app.cluster as cluster
from botkit.app.cluster import Payload
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.sweep import VariantOutcome

_real = cluster.run_cluster_variant
_signal = Path(os.environ["BOTKIT_TEST_VICTIM_SIGNAL"])
_taken = threading.Lock()


def _victim(payload: Payload, options: BacktestOptions, index: int) -> VariantOutcome:
    if not _taken.acquire(blocking=False):
        return _real(payload, options, index)
    part = _signal.with_suffix(".part")
    part.write_text(f"{os.getpid()} {index}")
    part.replace(_signal)
    threading.Event().wait()  # until the test kills this process
    raise AssertionError("unreachable")


cluster.run_cluster_variant = _victim  # what the scheduler's pickled reference resolves to
