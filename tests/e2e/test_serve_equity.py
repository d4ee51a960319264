"""``/api/equity`` survives a restart of ``botkit serve``: two real serve processes in turn on
one journal, the first killed (as a crash would) and its file's last line torn; the second
answers the first one's samples, then its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.serving import botkit, call, service_env, serving


def _samples(served: Any, reads: int) -> list[dict[str, Any]]:
    for _ in range(reads):  # --exchange-every 0: a sample per read of the account
        answer = call(served.url("/api/equity"))
        assert answer.status == 200, answer.body
    samples: list[dict[str, Any]] = answer.body["samples"]
    return samples


def test_equity_samples_survive_a_restart_and_a_torn_last_line(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    done = botkit(env, "run", "--once")
    assert done.returncode == 0, done.stderr
    kept = tmp_path / "journal.sqlite.equity.jsonl"
    with serving(env, tmp_path, "--exchange-every", "0") as first:
        before = _samples(first, 3)
        assert len(before) == 3
        first.proc.kill()  # no goodbye: what is in the file is what a crash leaves
        first.proc.wait()
    lines = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [{k: v for k, v in line.items() if k != "acct"} for line in lines] == before
    assert len({line["acct"] for line in lines}) == 1  # one account: the paper one
    with kept.open("a") as file:
        file.write('{"ts_ms": 17630')  # a write cut short
    with serving(env, tmp_path, "--exchange-every", "0") as second:
        after = _samples(second, 2)
        assert after[:3] == before
        assert len(after) == 5  # the torn line is gone, nothing else
        assert after[3]["ts_ms"] >= before[-1]["ts_ms"]
        assert "cut short" in second.log.read_text()
        sampled = call(second.url("/api/equity")).body["sampled"]
        assert sampled.endswith(f"kept in {kept}, read back when serve starts"), sampled
    lines = [json.loads(line) for line in kept.read_text().splitlines()]
    assert [{k: v for k, v in line.items() if k != "acct"} for line in lines][:5] == after
