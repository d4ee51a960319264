"""Fixtures of the HTTP-face tests: a SimHttp over the echoing stand-in API on a manual clock."""

from __future__ import annotations

import pytest

from botkit.clock import ManualClock
from botkit.sim.config import AuthConfig
from botkit.sim.faults import FaultPlan
from botkit.sim.http import SimHttp
from tests.sim_http.support import T0, EchoApi


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock(T0)


@pytest.fixture
def api() -> EchoApi:
    return EchoApi()


@pytest.fixture
def http(api: EchoApi, clock: ManualClock) -> SimHttp:
    return SimHttp(api, clock=clock, auth=AuthConfig(), faults=FaultPlan(clock=clock))
