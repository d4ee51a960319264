"""A sweep's variants on a Dask cluster (``botkit backtest --sweep ... --cluster ADDRESS``).

The variants are the same independent tasks as in the process pool
(:func:`botkit.app.backtest.run_variant`); here they go to a ``dask.distributed`` scheduler —
an existing one (``tcp://host:8786``) or a :class:`~distributed.LocalCluster` of N worker
processes on loopback (``local:N``).

The files travel with the work: the candle file (a portfolio's one per symbol), the strategy
files and the simulator config are read here once, as bytes (:class:`Payload`), and sent once,
as one task every variant depends on: the scheduler keeps it, a worker fetches its result from
a peer that holds it, and it can be recomputed when every holder is gone (data scattered from
here could not). A worker writes the files once into a folder named by their digest
(:func:`localize`), so every variant it runs reads the same paths and the candles are parsed
once per worker process (the loader's cache is keyed by path). No shared file system is
needed, and nothing on the worker can differ from what was checked here.

A worker that dies while it runs a variant loses nothing: the scheduler gives the variant to
another worker (``distributed.scheduler.allowed-failures``, 3 by default, deaths per task).
Outcomes are sorted into grid order, so the table is the local run's.

``dask.distributed`` is an optional extra (``pip install 'botkit[cluster]'``); it is imported
only when a cluster is asked for, and its absence, an unreachable scheduler, a scheduler with
no workers or workers without botkit are each one line.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from botkit.app.backtest import _quiet_worker, run_variant
from botkit.backtest.setup import BacktestOptions
from botkit.backtest.sweep import Variant, VariantOutcome
from botkit.errors import UsageError
from botkit.sources.files import discover

if TYPE_CHECKING:
    from distributed import Client

__all__ = [
    "CONNECT_TIMEOUT",
    "MAX_LOCAL_WORKERS",
    "ClusterProgress",
    "Payload",
    "cluster_client",
    "localize",
    "make_payload",
    "parse_cluster",
    "run_cluster_variant",
    "run_on_cluster",
    "run_options",
]

CONNECT_TIMEOUT = 10.0
"""Seconds to wait for a scheduler to answer, and then for its first worker, unless Dask's own
setting is given (``DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=3s`` in the environment)."""

_TIMEOUT_ENV = "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT"

MAX_LOCAL_WORKERS = 64

INSTALL_HINT = "install the cluster extra: pip install 'botkit[cluster]'"


def parse_cluster(text: str) -> str:
    """``local:N`` or a scheduler address (``tcp://host:port``; ``host:port`` means tcp)."""
    spec = text.strip()
    if spec.startswith("local:"):
        count = spec.removeprefix("local:")
        if not count.isdigit() or not 1 <= int(count) <= MAX_LOCAL_WORKERS:
            raise UsageError(
                f"--cluster {text}: write local:N with N workers from 1 to {MAX_LOCAL_WORKERS}"
                " (e.g. local:2)"
            )
        return f"local:{int(count)}"
    if "://" not in spec:
        spec = f"tcp://{spec}"
    scheme, _, rest = spec.partition("://")
    host, colon, port = rest.rpartition(":")
    if not scheme or not host or not colon or not port.isdigit():
        raise UsageError(
            f"--cluster {text}: write a scheduler address tcp://HOST:PORT (e.g. "
            "tcp://10.0.0.5:8786) or local:N"
        )
    return spec


@dataclass(frozen=True, slots=True)
class Payload:
    """The files a variant reads, as bytes: the candles (one file, or a portfolio's one per
    symbol), the strategy files (their names kept, each in its own folder so equal names
    cannot collide) and the simulator config."""

    digest: str
    data_name: str
    data: bytes
    strategies: tuple[tuple[str, bytes], ...]
    sim_config: tuple[str, bytes] | None = None
    legs: tuple[tuple[str, str, bytes], ...] = ()
    """A portfolio's candle files: (symbol, file name, bytes) each, in the order of
    ``--data``; ``data`` is then the first of them."""


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise UsageError(f"{what} {path}: cannot read it: {exc.strerror or exc}") from None


def make_payload(options: BacktestOptions) -> Payload:
    """Read the files of ``options`` (checked already by the caller) into a :class:`Payload`."""
    files, _missing = discover(options.strategies)
    legs = tuple((symbol, path.name, _read(path, "--data")) for symbol, path in options.legs)
    data = legs[0][2] if legs else _read(options.data, "--data")
    strategies = tuple((p.name, _read(p, "--strategies")) for p in files)
    sim = options.sim_config
    sim_config = (sim.name, _read(sim, "--sim-config")) if sim is not None else None
    digest = hashlib.sha256()
    named = [(f"{symbol}={name}", blob) for symbol, name, blob in legs] or [
        (options.data.name, data)
    ]
    for name, blob in [*named, *strategies, *([sim_config] if sim_config else [])]:
        digest.update(f"{name}\0{len(blob)}\0".encode())
        digest.update(blob)
    return Payload(digest.hexdigest()[:32], options.data.name, data, strategies, sim_config, legs)


def _write_once(path: Path, blob: bytes) -> None:
    """Write ``path`` whole (a temporary name, then renamed) unless it is already there:
    worker processes of one machine may write the same payload at once."""
    if path.exists() and path.stat().st_size == len(blob):
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(f".{path.name}.{os.getpid()}.part")
    part.write_bytes(blob)
    os.replace(part, path)


def localize(
    options: BacktestOptions, payload: Payload, root: Path | None = None
) -> BacktestOptions:
    """``options`` reading ``payload``'s files, written once under ``root`` (the temporary
    folder by default) in a folder named by the payload's digest."""
    base = (root or Path(tempfile.gettempdir())) / f"botkit-cluster-{payload.digest}"
    legs: list[tuple[str, Path]] = []
    for index, (symbol, name, blob) in enumerate(payload.legs):
        path = base / "data" / str(index) / name
        _write_once(path, blob)
        legs.append((symbol, path))
    data = legs[0][1] if legs else base / "data" / payload.data_name
    if not legs:
        _write_once(data, payload.data)
    strategies: list[Path] = []
    for index, (name, blob) in enumerate(payload.strategies):
        path = base / "strategies" / str(index) / name
        _write_once(path, blob)
        strategies.append(path)
    sim: Path | None = None
    if payload.sim_config is not None:
        sim = base / "sim" / payload.sim_config[0]
        _write_once(sim, payload.sim_config[1])
    return replace(
        options, data=data, legs=tuple(legs), strategies=tuple(strategies), sim_config=sim
    )


_QUIET = False


def run_cluster_variant(payload: Payload, options: BacktestOptions, index: int) -> VariantOutcome:
    """One variant on a worker: the payload's files written once, then
    :func:`~botkit.app.backtest.run_variant` as in the process pool."""
    global _QUIET
    if not _QUIET:
        _quiet_worker()
        _QUIET = True
    return run_variant(localize(options, payload), index)


def _files(payload: Payload) -> Payload:
    """The task that holds the files (its argument is kept by the scheduler)."""
    return payload


def _worker_version() -> str:
    """What a worker runs (checked against this side before any variant is sent)."""
    return metadata.version("botkit")


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError:
        raise UsageError(
            f"--cluster needs Dask distributed, which is not installed — {INSTALL_HINT}"
        ) from None
    return distributed


@contextlib.contextmanager
def cluster_client(spec: str, *, timeout: float | None = None) -> Iterator[Client]:
    """A connected :class:`distributed.Client` for ``spec`` (:func:`parse_cluster`), its
    workers checked to run this botkit; a ``local:N`` cluster is stopped at the end."""
    distributed = _import_distributed()
    if timeout is None:
        timeout = CONNECT_TIMEOUT
        if os.environ.get(_TIMEOUT_ENV):  # read now: Dask's config read it at its import
            from dask.utils import parse_timedelta

            timeout = float(parse_timedelta(os.environ[_TIMEOUT_ENV]))
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with contextlib.ExitStack() as stack:
        if spec.startswith("local:"):
            workers = int(spec.removeprefix("local:"))
            cluster = stack.enter_context(
                distributed.LocalCluster(
                    n_workers=workers,
                    threads_per_worker=1,
                    processes=True,
                    host="127.0.0.1",
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
            )
            address = cluster.scheduler_address
        else:
            address = spec
        try:
            client = stack.enter_context(distributed.Client(address, timeout=timeout))
        except (OSError, TimeoutError) as exc:
            raise UsageError(
                f"--cluster {spec}: no Dask scheduler answers there ({_first_line(exc)}) — start "
                f"one (dask scheduler) or check the address"
            ) from None
        try:
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError):
            raise UsageError(
                f"--cluster {spec}: the scheduler has no workers after {timeout:g} s — start "
                f"some: dask worker {address}"
            ) from None
        _check_workers(client, spec)
        yield client


def _check_workers(client: Client, spec: str) -> None:
    mine = _worker_version()
    try:
        versions: dict[str, str] = client.run(_worker_version)
    except Exception as exc:  # a worker that cannot unpickle botkit's function
        raise UsageError(
            f"--cluster {spec}: a worker cannot run botkit ({_first_line(exc)}) — install "
            f"botkit {mine} with its cluster extra on every worker"
        ) from None
    wrong = sorted(f"{w} has {v}" for w, v in versions.items() if v != mine)
    if wrong:
        raise UsageError(
            f"--cluster {spec}: workers run another botkit ({'; '.join(wrong)}) — install "
            f"botkit {mine} on every worker"
        )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


class ClusterProgress:
    """Variants done / running / failed, one line on stderr (rewritten on a terminal; once,
    at the end, otherwise)."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.running = 0
        self.stream = stream if stream is not None else sys.stderr
        isatty = getattr(self.stream, "isatty", None)
        self.live = bool(isatty()) if callable(isatty) else False

    def text(self) -> str:
        return (
            f"sweep: {self.done}/{self.total} done · {self.running} running · {self.failed} failed"
        )

    def update(self, outcome: VariantOutcome | None, running: int) -> None:
        if outcome is not None:
            self.done += 1
            self.failed += 1 if (outcome.error and not outcome.figures) else 0
        self.running = running
        if self.live:
            self.stream.write("\r" + self.text())
            self.stream.flush()

    def close(self) -> None:
        self.running = 0
        self.stream.write(("\r" if self.live else "") + self.text() + "\n")
        self.stream.flush()


def run_on_cluster(
    client: Client,
    base: BacktestOptions,
    variants: Sequence[Variant],
    *,
    on_done: Callable[[VariantOutcome, int], None] | None = None,
) -> list[VariantOutcome]:
    """Run every variant (``base.params`` plus its values) on ``client``'s workers; outcomes
    in grid order. ``on_done(outcome, running)`` after each, with the variants still running.
    A variant the cluster could not run (its workers kept dying) is an outcome with an error."""
    options = [replace(base, params={**base.params, **v}) for v in variants]
    return run_options(client, options, on_done=on_done)


def run_options(
    client: Client,
    options: Sequence[BacktestOptions],
    *,
    on_done: Callable[[VariantOutcome, int], None] | None = None,
) -> list[VariantOutcome]:
    """Run one backtest per ``options`` (all reading the same files, as a sweep's or a
    study's do) on ``client``'s workers; outcomes in the order of ``options``."""
    distributed = _import_distributed()
    if not options:
        return []
    sweep = uuid.uuid4().hex[:12]  # task names only: the results do not depend on it
    files = make_payload(options[0])
    payload = client.submit(_files, files, key=f"botkit-files-{sweep}", pure=False)
    futures = {
        client.submit(
            run_cluster_variant, payload, o, i, key=f"botkit-variant-{sweep}-{i}", pure=False
        ): i
        for i, o in enumerate(options)
    }
    outcomes: list[VariantOutcome] = []
    try:
        for future in distributed.as_completed(futures):
            index = futures[future]
            try:
                outcome: VariantOutcome = future.result()
            except Exception as exc:  # KilledWorker after allowed-failures, a lost connection
                outcome = VariantOutcome(
                    index, dict(options[index].params), {},
                    error=f"the cluster could not run it: {_first_line(exc)}",
                )  # fmt: skip
            outcomes.append(outcome)
            if on_done is not None:
                on_done(outcome, _running(client, len(options) - len(outcomes)))
    finally:
        client.cancel([*futures, payload])  # type: ignore[no-untyped-call]
    return sorted(outcomes, key=lambda o: o.index)


def _running(client: Client, left: int) -> int:
    """Variants being processed by a worker now (at most ``left``)."""
    try:
        processing: dict[str, Any] = client.processing()  # type: ignore[no-untyped-call]
    except Exception:
        return 0
    count = sum(1 for keys in processing.values() for k in keys if "botkit-variant-" in str(k))
    return min(count, left)
