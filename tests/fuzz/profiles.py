"""Hypothesis settings for the fuzz tests: ``ci`` (the default: few examples, so ``make test``
stays fast) and ``reliability`` (``make reliability``: many more), picked with
``HYPOTHESIS_PROFILE=reliability``. Applied per test (``@FUZZ``), so other areas' hypothesis
tests keep their own settings. No deadline: a shared 2-core machine makes timings noisy."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

__all__ = ["FUZZ", "PROFILE", "examples"]

_COUNTS = {"ci": 30, "reliability": 1_000}
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
if PROFILE not in _COUNTS:
    PROFILE = "ci"


def examples(ci: int) -> int:
    """``ci`` examples under the ci profile, about 30 times more under ``reliability``."""
    return ci if PROFILE == "ci" else ci * _COUNTS["reliability"] // _COUNTS["ci"]


FUZZ = settings(
    max_examples=_COUNTS[PROFILE],
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,  # fixtures here set up state each example resets
    ],
)
