"""Shared fixtures of the reliability tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No BOTKIT_* variables from the machine; run in an empty folder."""
    for name in list(os.environ):
        if name.upper().startswith("BOTKIT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path
