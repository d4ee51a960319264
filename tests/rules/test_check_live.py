"""``botkit check`` under ``exchange = "live"``: the symbols are checked against the live
exchange's instruments (here ``botkit sim serve`` on loopback, a real process), an unreachable
exchange is a failure, and ``--offline`` says the symbols were not checked. And ``check``
reports every problem of a file in one pass."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.simserve import sim_serve

ROOT = Path(__file__).resolve().parents[2]
KEY, SECRET = "check-key-1", "check-secret-2"
NO_JOURNAL = (  # the journal setting's default, from the cwd (tmp_path): none there
    "id tags not checked against a journal: none at var/journal.sqlite — pass --journal FILE"
)
GOOD = "strategy: a\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    cancel: {}\n"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("BOTKIT_")}
    (tmp_path / "botkit.toml").write_text("")
    env.update(BOTKIT_CONFIG=str(tmp_path / "botkit.toml"), PYTHONPATH=str(ROOT), **extra)
    return env


@pytest.fixture(scope="module")
def sim_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``botkit sim serve`` on a free loopback port, as an operator starts it."""
    folder = tmp_path_factory.mktemp("sim")
    env = _env(folder, BOTKIT_API_KEY=KEY, BOTKIT_API_SECRET=SECRET)
    with sim_serve(env, log=folder / "sim-serve.err") as url:
        yield url


def _check(
    tmp_path: Path, url: str, *args: str, files: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    env = _env(
        tmp_path,
        BOTKIT_EXCHANGE="live",
        BOTKIT_BASE_URL=url,
        BOTKIT_API_KEY=KEY,
        BOTKIT_API_SECRET=SECRET,
        BOTKIT_REQUEST_TIMEOUT="5",
    )
    return subprocess.run(
        [sys.executable, "-m", "botkit", "check", *args, *(str(tmp_path / n) for n in files)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"  # nothing listens there any more


def test_an_unknown_symbol_is_found_against_the_live_instruments(
    tmp_path: Path, sim_url: str
) -> None:
    doge = GOOD.replace("BTC_USDT_PERP", "DOGE_USDT_PERP")
    done = _check(tmp_path, sim_url, files={"good.yaml": GOOD, "doge.yaml": doge})
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'doge.yaml'}:2:9: unknown symbol 'DOGE_USDT_PERP'")
    assert lines[-1] == "1 problem"


def test_a_good_file_passes_with_the_live_check_named(tmp_path: Path, sim_url: str) -> None:
    done = _check(tmp_path, sim_url, files={"good.yaml": GOOD})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == (
        f"ok: 1 strategy (symbols and limits checked against the live exchange; {NO_JOURNAL})\n"
    )


def test_an_unreachable_live_exchange_is_a_failure_and_the_files_are_still_checked(
    tmp_path: Path,
) -> None:
    url = _closed_port_url()
    bad = GOOD.replace("cancel: {}", "when: price.markk > 0\n    cancel: {}")
    done = _check(tmp_path, url, files={"bad.yaml": bad, "good.yaml": GOOD})
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{tmp_path / 'bad.yaml'}:6:17: when: price has no field 'markk'")
    assert lines[1].startswith(f"error: symbols not checked: cannot read the instruments of {url}")
    assert lines[1].endswith("or pass --offline to check without them")
    assert lines[2:] == ["2 problems"]
    assert "Traceback" not in done.stderr


def test_offline_checks_without_the_exchange_and_says_so(tmp_path: Path) -> None:
    done = _check(tmp_path, _closed_port_url(), "--offline", files={"good.yaml": GOOD})
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == f"ok: 1 strategy (symbols not checked: --offline; {NO_JOURNAL})\n"


SEVERAL = """\
strategy: several
symbol: DOGE_USDT_PERP
every: 1m
params:
  depth: deep
rules:
  - name: dup
    when: price.mark > 0
    when: price.mark > 1
    cancel: {}
  - name: schema
    place:
      order: {side: BUYY, type: LIMIT, px: price.mark, sz: 1}
  - name: expression
    when: price.markk > params.depth
    cancel: {}
"""


def test_every_problem_of_every_file_is_reported_in_one_pass(tmp_path: Path) -> None:
    """A duplicate key (the YAML's structure), a schema error, a bad param value, an expression
    error and an unknown symbol in one file, and a problem in another: all reported at once."""
    other = GOOD.replace("every: 1m", "every: 1x")
    (tmp_path / "several.yaml").write_text(SEVERAL)
    (tmp_path / "other.yaml").write_text(other)
    done = subprocess.run(
        [sys.executable, "-m", "botkit", "check", "--instruments", "sim", str(tmp_path)],
        cwd=tmp_path,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    several, other_file = tmp_path / "several.yaml", tmp_path / "other.yaml"
    assert [line.split(" — ")[0] for line in done.stdout.splitlines()] == [
        f"{other_file}:3:8: every: '1x' is not a duration",
        f"{several}:2:9: unknown symbol 'DOGE_USDT_PERP'",
        f"{several}:5:10: depth: expected a number (got 'deep')",
        f"{several}:9:5: duplicate key 'when' (first at line 8)",
        f"{several}:13:21: side: 'BUYY' is not allowed",
        f"{several}:15:17: when: price has no field 'markk'",
        "6 problems",
    ]
