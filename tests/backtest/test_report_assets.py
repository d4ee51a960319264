"""The vendored report JavaScript is what web/report/vendor.sh wrote from the locked npm package:
the sums it recorded match the files the package ships, and the version in the file is the
lock's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import botkit.backtest

ASSETS = Path(botkit.backtest.__file__).parent / "assets"
LOCK = Path(__file__).resolve().parents[2] / "web" / "report" / "package-lock.json"


def test_vendored_files_match_their_recorded_sums() -> None:
    lines = (ASSETS / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    for line in lines:
        digest, name = line.split()
        assert hashlib.sha256((ASSETS / name).read_bytes()).hexdigest() == digest, name


def test_the_inlined_library_is_the_locked_version() -> None:
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    version = lock["packages"]["node_modules/lightweight-charts"]["version"]
    head = (ASSETS / "lightweight-charts.standalone.production.js").read_text(encoding="utf-8")
    assert f"TradingView Lightweight Charts™ v{version}\n" in head[:300]
