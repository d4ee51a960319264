"""A service assembled like ``botkit run`` (``assemble``), on the in-process simulator with a
manual clock, whose exchange clock can be skewed with the simulator's skew fault."""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
from pydantic import SecretStr

from botkit.app.clients import SIM_BASE_URL
from botkit.app.service import Assembly, assemble
from botkit.clock import ManualClock
from botkit.live.client import ExchangeClient
from botkit.live.clock import ClockSync
from botkit.settings import Settings, load_settings
from botkit.sim.inprocess import SimHandle, make_sim
from tests.pipeline.simharness import static_config

T0 = 1_763_000_000_000 - (1_763_000_000_000 % 60_000)


@dataclass
class Service:
    sim: SimHandle
    clock: ManualClock
    """The simulator's clock; ``clock.offset_ms`` is the exchange's skew from our local clock."""
    client: ExchangeClient
    parts: Assembly
    settings: Settings

    def local_ms(self) -> int:
        return self.clock.now_ms() - self.clock.offset_ms


def settings_for(tmp_path: Path, **values: object) -> Settings:
    config = tmp_path / "botkit.toml"
    config.write_text("")
    return load_settings(
        config=config,
        env_file=None,
        exchange="sim",
        journal=tmp_path / "journal.sqlite",
        strategies_dir=tmp_path / "strategies",
        **values,
    )


@contextmanager
def service(
    tmp_path: Path,
    strategy: str,
    *,
    skew_ms: int = 0,
    local: Callable[[ManualClock], Callable[[], int]] | None = None,
    wrap: Callable[[httpx.BaseTransport], httpx.BaseTransport] | None = None,
) -> Iterator[Service]:
    """``local(clock)``: the client's local clock (default: the simulator's clock without its
    skew), which then also serves as monotonic unless given; ``wrap``: around the transport."""
    clock = ManualClock(T0)
    sim = make_sim(static_config(), clock, auto_step=False)
    sim.faults.set_skew(skew_ms)
    folder = tmp_path / "strategies"
    folder.mkdir()
    (folder / "s.yaml").write_text(textwrap.dedent(strategy))
    settings = settings_for(tmp_path)

    def unskewed() -> int:
        return clock.now_ms() - clock.offset_ms

    sync = (
        ClockSync(local=local(clock), monotonic=unskewed, interval_ms=0)
        if local is not None
        else ClockSync(local=unskewed, interval_ms=0)
    )
    key = sim.config.auth.keys[0]
    client = ExchangeClient(
        SIM_BASE_URL,
        key=key.key,
        secret=SecretStr(key.secret.get_secret_value()),
        passphrase=SecretStr(key.passphrase.get_secret_value()),
        clock=sync,
        transport=wrap(sim.transport) if wrap is not None else sim.transport,
    )
    sim.http.handle("GET", "/timestamp", "", {}, b"")  # applies the skew to the clock
    with client, assemble(settings, client=client) as parts:
        yield Service(sim, clock, client, parts, settings)
