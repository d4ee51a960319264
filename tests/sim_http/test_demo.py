"""``botkit demo`` (first version): server time, instruments and balance via the real client."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from botkit.cli import main
from botkit.cli.demo_cmd import STEPS, DemoContext, format_table, run_demo
from botkit.clock import ManualClock
from botkit.sim.config import load_sim_config
from botkit.sim.inprocess import make_sim

T0 = 1_700_000_000_000


def test_demo_shows_time_instruments_and_balance_from_the_simulator() -> None:
    sim = make_sim(load_sim_config(None), ManualClock(T0))
    out = io.StringIO()
    run_demo(sim=sim, out=out)
    text = out.getvalue()
    assert "Server time: 2023-11-14T22:13:20.000+00:00 (1700000000000 ms)" in text
    for symbol in ("BTC_USDT_PERP", "ETH_USDT_PERP", "SOL_USDT_PERP"):
        assert symbol in text
    assert "Balance: equity 10000, available margin 10000" in text
    assert sim.http.requests >= 4  # it went through the HTTP face, not around it


@pytest.mark.parametrize("signing", ["v3", "pf"])
def test_demo_runs_with_either_signing_scheme(signing: str) -> None:
    out = io.StringIO()
    run_demo(sim=make_sim(load_sim_config(None), ManualClock(T0)), out=out, signing=signing)
    assert "== balance" in out.getvalue()


def test_demo_steps_can_be_extended() -> None:
    seen: list[str] = []

    def extra(ctx: DemoContext) -> None:
        seen.append(ctx.client.instruments()[0].symbol)
        ctx.say("extra step ran")

    out = io.StringIO()
    sim = make_sim(load_sim_config(None), ManualClock(T0))
    run_demo(sim=sim, out=out, steps=[*STEPS, ("extra", extra)])
    assert seen == ["BTC_USDT_PERP"]
    assert out.getvalue().rstrip().endswith("extra step ran")


def test_botkit_demo_command_exits_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Instruments (3):" in out


def test_format_table_aligns_numbers_right() -> None:
    table = format_table(("name", "px"), [("a", "1.5"), ("bb", "10")])
    assert table.splitlines() == ["name   px", "----  ---", "a     1.5", "bb     10"]


def test_a_journal_path_that_cannot_be_replaced_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a-file").write_text("not a folder\n")
    code = main(["demo", "--journal", str(tmp_path / "a-file" / "j.sqlite"), "--hours", "1"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert "j.sqlite: cannot start it afresh (Not a directory): name a file in a folder" in err
