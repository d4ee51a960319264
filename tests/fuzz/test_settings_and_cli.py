"""Hostile settings and command lines: any value of any ``BOTKIT_*`` variable, a garbled
settings file, random options with random values for every command. The answer is a working
setting or one located line (a secret's value never echoed); a command exits 0, 1 or 2, a
usage error is one line, and nothing prints a traceback.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from botkit.cli import build_parser, main
from botkit.errors import SettingsError, UsageError
from botkit.settings import Settings, env_name, load_settings
from tests.fuzz.bounded import within
from tests.fuzz.profiles import FUZZ

ROOT = Path(__file__).resolve().parents[2]
SECRETS = {"api_key", "api_secret", "api_passphrase"}

VALUES = st.one_of(
    st.sampled_from(
        [
            "",
            " ",
            "-1",
            "0",
            "nan",
            "inf",
            "1e999",
            "9" * 400,
            "true",
            "maybe",
            "live",
            "LIVE ",
            "http://",
            "https://",
            "ftp://x",
            "/proc/botkit-nonexistent/x",
            "/dev/null",
            "~",
            "${HOME}",
            "'quoted'",
            '{"a": 1}',
            "[1, 2]",
            "\t\n",
            "é",
            "x" * 5000,
        ]
    ),
    st.text(max_size=40),
).filter(lambda v: "\x00" not in v and v.encode("utf-8", "ignore").decode() == v)


@pytest.fixture
def clean(tmp_path: Path) -> Iterator[Path]:
    """No BOTKIT_* variables from the machine; an empty settings file; cwd in tmp."""
    saved = dict(os.environ)
    cwd = Path.cwd()
    for name in list(os.environ):
        if name.upper().startswith("BOTKIT_"):
            del os.environ[name]
    config = tmp_path / "botkit.toml"
    config.write_text("")
    os.environ["BOTKIT_CONFIG"] = str(config)
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(saved)


@FUZZ
@given(field=st.sampled_from(sorted(Settings.model_fields)), value=VALUES)
def test_any_value_of_any_setting_loads_or_is_one_located_line(
    clean: Path, field: str, value: str
) -> None:
    name = env_name(field)
    os.environ[name] = value
    try:
        load_settings(env_file=None)
    except SettingsError as exc:
        text = str(exc)
        assert "\n" not in text, text
        if field in SECRETS and value.strip():
            assert value not in text
    finally:
        del os.environ[name]


TOML_LINES = st.sampled_from(
    [
        'exchange = "live"',
        "exchange = 5",
        "request_timeout = -1",
        'request_timeout = "soon"',
        "dry_run = 1",
        "[table]",
        "max_notional_per_order = nan",
        "max_notional_per_order = inf",
        "recv_window = 1e99",
        'journal = ""',
        "= 5",
        '"unterminated',
        "unknown_key = 1",
        "metrics_port = 70000",
        "log_level = 'loud'",
        "kill_switch_file = 5",
    ]
)


@FUZZ
@given(lines=st.lists(TOML_LINES | st.text(max_size=30), max_size=6))
def test_a_garbled_settings_file_is_one_located_line(clean: Path, lines: list[str]) -> None:
    path = clean / "fuzz.toml"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    path.chmod(0o600)
    try:
        load_settings(config=path, env_file=None)
    except SettingsError as exc:
        message = str(exc)
    else:
        return
    assert "\n" not in message, message


# --- command lines ---------------------------------------------------------------------------

LONG_RUNNING = {"run", "demo", "sim serve", "journal tail", "data synth", "data fetch", "backtest"}
"""Parsed only: given valid options they would trade, serve, follow or write big files."""


def _commands() -> dict[str, list[str]]:
    """Every command path (``journal show``) and its options."""
    found: dict[str, list[str]] = {}

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*prefix, name])
                return
        found[" ".join(prefix)] = [
            o for a in parser._actions for o in a.option_strings if o not in ("-h", "--help")
        ]

    walk(build_parser(), [])
    return found


COMMANDS = _commands()
# a path nothing can create, root included (CI runs as root: "/nonexistent" was written by
# `schema --out /nonexistent` and then read by a later example)
ARG_VALUES = st.one_of(
    st.sampled_from(
        ["-1", "0", "99999", "nan", "x", "", "1e999", "²", "/proc/botkit-nonexistent", "7d"]
    ),
    st.text(max_size=12),
).filter(lambda v: "\x00" not in v)


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    argv = command.split()
    for _ in range(draw(st.integers(0, 4))):
        options = COMMANDS[command]
        with_option: bool = draw(st.booleans())
        if options and with_option:
            argv.append(draw(st.sampled_from(options)))
        argv.append(draw(ARG_VALUES))
    return argv


@FUZZ
@given(argv=command_lines())
def test_any_command_line_exits_with_a_code_and_at_most_one_error_line(
    clean: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    os.environ["BOTKIT_JOURNAL"] = str(clean / "journal.sqlite")
    os.environ["BOTKIT_STRATEGIES_DIR"] = str(clean / "strategies")
    command = " ".join(argv[:2]) if " ".join(argv[:2]) in COMMANDS else argv[0]
    if command in LONG_RUNNING:
        message, exit_code = "", 0
        try:
            build_parser().parse_args(argv)
        except UsageError as exc:
            message = str(exc)
        except SystemExit as exc:  # --help / --version
            exit_code = int(exc.code or 0)
        assert "\n" not in message
        assert exit_code == 0
        return
    capsys.readouterr()
    with within(30.0, " ".join(argv), wall=True):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (argv, code)
    assert "Traceback" not in out + err
    if code == 2:
        assert err.count("\n") == 1, err
