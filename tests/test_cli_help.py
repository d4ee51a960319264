"""Every command and subcommand answers --help with a description, and no traceback."""

from __future__ import annotations

import argparse

import pytest

from botkit.cli import build_parser, main


def _commands() -> list[list[str]]:
    found: list[list[str]] = []

    def walk(parser: argparse.ArgumentParser, prefix: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found.append([*prefix, name])
                    walk(sub, [*prefix, name])

    walk(build_parser(), [])
    return found


COMMANDS = _commands()


def test_the_main_commands_are_all_there() -> None:
    top = {c[0] for c in COMMANDS}
    assert {
        "run",
        "plan",
        "status",
        "demo",
        "check",
        "schema",
        "journal",
        "exchange",
        "sim",
        "data",
        "cancel",
        "flatten",
    } <= top


@pytest.mark.parametrize("command", COMMANDS, ids=[" ".join(c) for c in COMMANDS])
def test_help_of_every_command(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([*command, "--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: botkit " + " ".join(command))
    assert len(out.splitlines()) >= 3
