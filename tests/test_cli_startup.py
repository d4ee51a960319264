"""Start-up stays light: building the parser and answering --help import no command's heavy
implementation (rules, runner, simulator, exchange models and client, journal, settings,
pydantic, httpx, loguru, tenacity). Each command imports what it needs when it runs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from botkit.backtest.fetch import DEFAULT_PAGE_SIZE
from botkit.cli import build_parser, main
from botkit.journal import Outcome

HEAVY = (
    "botkit.rules",
    "botkit.runner",
    "botkit.sim",
    "botkit.exchange.models",
    "botkit.live.client",
    "botkit.app",
    "botkit.intents",
    "botkit.journal",
    "botkit.settings",
    "botkit.service",
    "botkit.backtest.setup",
    "botkit.backtest.fetch",
    "botkit.backtest.driver",
    "httpx",
    "pydantic",
    "pydantic_settings",
    "loguru",
    "tenacity",
)

_PROBE = """
import contextlib, io, json, sys
from botkit.cli import build_parser, main
argv = json.loads(sys.argv[1])
if argv is None:
    build_parser()
else:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):
        main(argv)
heavy = tuple(json.loads(sys.argv[2]))
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
"""


def _imported(argv: list[str] | None, heavy: tuple[str, ...] = HEAVY) -> list[str]:
    """The ``heavy`` modules a fresh interpreter holds after ``build_parser()`` or
    ``main(argv)``."""
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(argv), json.dumps(heavy)],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        cwd=Path(__file__).resolve().parents[1],
    )
    found: list[str] = json.loads(done.stdout.splitlines()[-1])
    return found


def test_building_the_parser_imports_no_heavy_module() -> None:
    assert _imported(None) == []


@pytest.mark.parametrize("argv", [None, ["backtest", "--help"]], ids=str)
def test_the_package_metadata_is_read_only_to_print_the_version(argv: list[str] | None) -> None:
    """``importlib.metadata`` and its search of the installed packages cost every command
    tens of milliseconds (issue 20: a backtest's start-up); only ``--version`` needs them."""
    assert _imported(argv, ("importlib.metadata",)) == []
    assert "importlib.metadata" in _imported(["--version"], ("importlib.metadata",))


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["--help"],
        ["journal", "--help"],
        ["journal", "show", "--help"],
        ["data", "fetch", "--help"],
        ["backtest", "--help"],
        ["exchange", "candles", "--help"],
        ["sim", "serve", "--help"],
        ["run", "--help"],
        ["demo", "--help"],
        ["check", "--help"],
    ],
    ids=" ".join,
)
def test_help_imports_no_heavy_module(argv: list[str]) -> None:
    assert _imported(argv) == []


def test_the_outcome_choices_are_the_journals(capsys: pytest.CaptureFixture[str]) -> None:
    # the journal commands list the outcomes without importing the journal: they must agree
    with pytest.raises(SystemExit):
        main(["journal", "show", "--help"])
    expected = "{" + ",".join([o.value for o in Outcome] + ["unsettled"]) + "}"
    assert expected in capsys.readouterr().out


def test_the_page_size_default_is_the_fetchers() -> None:
    # `botkit data fetch` shows the default without importing the fetcher: they must agree
    args = build_parser().parse_args(
        ["data", "fetch", "--symbol", "BTC_USDT_PERP", "--interval", "1m", "--start", "2024-01-01",
         "--out", "x.csv"]
    )  # fmt: skip
    assert args.page_size == DEFAULT_PAGE_SIZE
