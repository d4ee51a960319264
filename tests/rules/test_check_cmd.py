"""``botkit check`` and ``botkit schema`` through the real command line entry point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from botkit.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = [REPO / "strategies", REPO / "strategies" / "hedge"]
GOOD = "strategy: a\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    cancel: {}\n"


def test_examples_pass_check_against_the_simulator_instruments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BOTKIT_JOURNAL", str(tmp_path / "none.sqlite"))  # not the checkout's
    assert main(["check", *map(str, EXAMPLES), "--instruments", "sim"]) == 0
    assert capsys.readouterr().out == (
        "ok: 7 strategies (symbols and limits checked; id tags not checked against a journal:"
        f" none at {tmp_path / 'none.sqlite'} — pass --journal FILE)\n"
    )


def test_problems_are_one_line_each_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD.replace("every: 1m", "every: 1x").replace("cancel", "cancl"))
    assert main(["check", str(bad), "--instruments", "none"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{bad}:3:8: every: '1x' is not a duration — write a number and a unit: 30s, 10m, "
        "1h30m, 1d",
        f"{bad}:6:5: unknown key 'cancl' — did you mean 'cancel'?",
        "2 problems",
    ]


def test_symbol_is_checked_against_an_instruments_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.yaml").write_text(GOOD.replace("BTC_USDT_PERP", "DOGE_USDT_PERP"))
    instruments = tmp_path / "instruments.json"
    instruments.write_text(
        json.dumps({"code": 200, "data": [{"symbol": "BTC_USDT_PERP", "tSz": "0.1", "lotSz": 1}]})
    )
    assert main(["check", str(tmp_path / "s.yaml"), "--instruments", str(instruments)]) == 1
    assert (
        "s.yaml:2:9: unknown symbol 'DOGE_USDT_PERP' — did you mean 'BTC_USDT_PERP'?"
        in capsys.readouterr().out
    )


def test_same_strategy_name_in_two_files_is_a_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    (tmp_path / "b.yaml").write_text(GOOD)
    assert main(["check", str(tmp_path), "--instruments", "none"]) == 1
    assert (
        f"{tmp_path / 'b.yaml'}:1:1: strategy name 'a' is already used by {tmp_path / 'a.yaml'}"
        in capsys.readouterr().out
    )


def test_default_path_is_the_strategies_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("BOTKIT_CONFIG", raising=False)
    monkeypatch.delenv("BOTKIT_STRATEGIES_DIR", raising=False)
    monkeypatch.delenv("BOTKIT_JOURNAL", raising=False)
    (tmp_path / "strategies").mkdir()
    (tmp_path / "strategies" / "a.yaml").write_text(GOOD)
    assert main(["check", "--instruments", "none"]) == 0
    assert capsys.readouterr().out == (  # the journal setting's default, from the cwd
        "ok: 1 strategy (symbols not checked; id tags not checked against a journal: none at"
        " var/journal.sqlite — pass --journal FILE)\n"
    )


def test_empty_folder_and_missing_path_are_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check", str(tmp_path), str(tmp_path / "nope.yaml"), "--instruments", "none"]) == 1
    out = capsys.readouterr().out
    assert f"{tmp_path / 'nope.yaml'}: no such file or directory" in out


def test_unreadable_instruments_file_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "a.yaml").write_text(GOOD)
    bad = tmp_path / "i.json"
    bad.write_text("{not json")
    assert main(["check", str(tmp_path), "--instruments", str(bad)]) == 2
    assert capsys.readouterr().err.startswith(f"error: {bad}:1:2: not JSON")


def test_schema_is_written_and_describes_the_format(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "strategy.schema.json"
    assert main(["schema", "--out", str(out)]) == 0
    schema = json.loads(out.read_text())
    assert schema["$schema"].startswith("https://json-schema.org/")
    assert schema["required"] == ["strategy", "symbol", "every", "rules"]
    assert schema["additionalProperties"] is False
    assert "cooldown" in schema["$defs"]["RuleSpec"]["properties"]
    assert main(["schema"]) == 0
    assert json.loads(capsys.readouterr().out.split("\n", 1)[1]) == schema
