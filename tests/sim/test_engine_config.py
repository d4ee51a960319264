"""The simulator's TOML config: defaults, the shipped file, located errors, and the clocks."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from botkit.clock import ManualClock, WallClock
from botkit.errors import ConfigError
from botkit.sim import load_sim_config, parse_sim_config
from botkit.sim.config import default_config_text

REPO = Path(__file__).resolve().parents[2]

MINIMAL = """
[[instruments]]
symbol = "BTC_USDT_PERP"
tSz = "0.1"
minPx = "0.1"
start_px = "60000"
"""


def test_builtin_defaults_equal_the_shipped_configs_file() -> None:
    assert (REPO / "configs" / "sim.toml").read_text(encoding="utf-8") == default_config_text()
    assert load_sim_config(None) == load_sim_config(REPO / "configs" / "sim.toml")


def test_defaults_have_the_documented_key_and_both_schemes() -> None:
    config = load_sim_config(None)
    assert config.auth.keys[0].key == "sim-key"
    assert config.auth.keys[0].secret.get_secret_value() == "sim-secret"
    assert config.auth.schemes == ["pf", "v3"]
    assert config.auth.tolerance_ms == 5000
    assert config.balance.currency == "USDT"


def test_minimal_instrument_derives_currencies_and_price_scale() -> None:
    inst = parse_sim_config(MINIMAL).instruments[0]
    assert (inst.bAsset, inst.bCcy, inst.qCcy, inst.sCcy) == ("BTC", "BTC", "USDT", "USDT")
    assert inst.pxScale == "1"
    assert inst.start_px == Decimal(60000)


def test_float_literals_are_read_as_exact_decimals() -> None:
    text = MINIMAL.replace('tSz = "0.1"', "tSz = 0.1")
    assert parse_sim_config(text).instruments[0].tSz == Decimal("0.1")


@pytest.mark.parametrize(
    ("text", "where", "words"),
    [
        (MINIMAL.replace('tSz = "0.1"', 'tSz = "-1"'), "<t>:4:1", "instruments.0.tSz"),
        (MINIMAL + "\n[fees]\nmakr = 1\n", "<t>:9:1", "did you mean 'maker'"),
        ("seed = \n", "<t>:1:", "not valid TOML"),
        ('seed = "x"\n' + MINIMAL, "<t>:1:1", "seed"),
        (MINIMAL + MINIMAL, "<t>", "listed twice"),
    ],
)
def test_bad_config_names_file_line_and_setting(text: str, where: str, words: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_sim_config(text, "<t>")
    message = str(info.value)
    assert message.startswith(where), message
    assert words in message


def test_missing_file_is_a_config_error_with_a_hint(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not found"):
        load_sim_config(tmp_path / "nope.toml")


def test_manual_clock_moves_only_when_told_and_applies_offset() -> None:
    clock = ManualClock(1_000)
    assert clock.now_ms() == 1_000
    clock.advance(500)
    clock.offset_ms = 7_000
    assert clock.now_ms() == 8_500
    clock.set(0)
    assert clock.now_ms() == 7_000
    with pytest.raises(ValueError, match=">= 0"):
        clock.advance(-1)


def test_wall_clock_offset_shifts_server_time() -> None:
    plain, ahead = WallClock(), WallClock(offset_ms=7_000)
    assert 6_900 <= ahead.now_ms() - plain.now_ms() <= 7_100
