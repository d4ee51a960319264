"""``botkit serve``'s control endpoints through real processes: ``botkit run`` cycles on the
embedded simulator (paper) and a ``botkit serve`` reading the same folder, HTTP over loopback.

The kill switch engaged through the API stops the next cycle's new orders; a cancel and a
flatten filed through the API are run by the service at its next cycle; each is journaled with
the name of the token that asked."""

from __future__ import annotations

import json
import time
from pathlib import Path

from botkit.journal import Journal, OrderFilter, Outcome
from tests.e2e.serving import BTC, Served, botkit, call, service_env, serving


def _journal(folder: Path) -> Journal:
    return Journal(folder / "journal.sqlite", clock=lambda: 0)


def _nothing_cancelled(folder: Path, served: Served, *, apart_s: float) -> None:
    """Every order the two ``botkit run --once`` placed still rests (``/api/orders`` shows
    exactly the journal's accepted ones), and the second run placed its own: ``rest`` fires once
    per 1 s evaluation slot, so it may find the slot already fired only when it started less
    than a second after the first run ended (``apart_s``: that time, as this test measured it
    on its monotonic clock)."""
    with _journal(folder) as journal:
        placed = {o.cl_ord_id for o in journal.orders(OrderFilter(outcome=Outcome.ACCEPTED))}
        (second,) = [e for e in journal.latest_evaluations() if e.rule == "rest-one"]
    resting = {o["cl_ord_id"] for o in call(served.url("/api/orders")).body["open"]}
    assert resting == placed
    if second.fired or apart_s >= 1.0:
        assert len(placed) == 2, (second, apart_s)
    else:  # a fast machine: both cycles in one second, once a slot by design
        assert len(placed) == 1
        assert second.reason == "already fired in this evaluation slot"


def test_control_actions_are_effective_and_journaled_with_who_asked(tmp_path: Path) -> None:
    env = service_env(tmp_path, taker=True)
    first = botkit(env, "run", "--once")
    assert first.returncode == 0, first.stderr
    with serving(env, tmp_path, "--exchange-every", "0") as served:
        held = call(served.url("/api/positions")).body
        assert [(p["symbol"], p["qty"]) for p in held["positions"]] == [(BTC, "1")]
        resting = call(served.url("/api/orders")).body
        assert [(o["strategy"], o["rule"]) for o in resting["open"]] == [("rest", "rest-one")]

        engaged = call(served.url("/api/control/kill-switch"), method="POST", body={"engage": True})
        assert engaged.status == 200, engaged.body
        assert engaged.body["controls"]["kill_switch"]["engaged"] is True
        assert "engaged by api:alice" in engaged.body["controls"]["kill_switch"]["reason"]
        assert (tmp_path / "STOP").exists()

        second = botkit(env, "run", "--once")  # the next cycle: nothing new goes out
        assert second.returncode == 0, second.stderr
        with _journal(tmp_path) as journal:
            cycle = journal.cycles(limit=1)[0].id
            made = journal.orders(OrderFilter(cycle_id=cycle))
            switched = journal.last_event("controls")
        assert {(o.strategy, o.outcome) for o in made} == {
            ("rest", Outcome.REJECTED_LOCAL),
            ("taker", Outcome.REJECTED_LOCAL),
        }
        assert all("engaged by api:alice" in " ".join(o.reasons) for o in made)
        assert switched is not None
        assert "engaged by api:alice" in switched.text
        assert len(call(served.url("/api/orders")).body["open"]) == 1

        cancel = call(served.url("/api/control/cancel"), method="POST", body={"strategy": "rest"})
        flatten = call(served.url("/api/control/flatten"), method="POST", body={"symbol": BTC})
        assert (cancel.status, flatten.status) == (202, 202), (cancel.body, flatten.body)
        pending = call(served.url(cancel.body["href"]))
        assert pending.status == 200
        assert pending.body["status"] == "pending"
        assert pending.body["by"] == "api:alice"

        third = botkit(env, "run", "--once")  # runs the filed requests after its cycle
        assert third.returncode == 0, third.stderr
        for filed in (cancel, flatten):
            done = call(served.url(filed.body["href"])).body
            assert (done["status"], done["ok"]) == ("done", True), done
        assert call(served.url("/api/orders")).body["open"] == []
        assert call(served.url("/api/positions")).body["positions"] == []
        with _journal(tmp_path) as journal:
            asked = [
                e.text
                for e in journal.events_after(0, limit=10_000)
                if e.kind == "operator" and "asked by" in e.text
            ]
            closes = journal.orders(OrderFilter(strategy="@operator"))
        assert asked == [
            "cancel (strategy rest) asked by api:alice through botkit serve",
            f"flatten (symbol {BTC}) asked by api:alice through botkit serve",
        ]
        assert [(o.side, o.reduce_only, o.outcome) for o in closes] == [
            ("SELL", True, Outcome.ACCEPTED)
        ]

        released = call(
            served.url("/api/control/kill-switch"), method="POST", body={"engage": False}
        )
        assert released.status == 200
        assert released.body["controls"]["kill_switch"]["engaged"] is False
        assert not (tmp_path / "STOP").exists()


def test_a_filed_cancel_is_refused_under_the_halt_and_nothing_is_sent(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    assert botkit(env, "run", "--once").returncode == 0
    with serving(env, tmp_path, "--exchange-every", "0") as served:
        halted = call(served.url("/api/control/halt"), method="POST", body={"engage": True})
        assert halted.status == 200
        assert halted.body["controls"]["halt"]["engaged"] is True
        filed = call(served.url("/api/control/cancel"), method="POST", body={"all": True})
        assert filed.status == 202
        assert botkit(env, "run", "--once").returncode == 0
        done = call(served.url(filed.body["href"])).body
        assert done["status"] == "refused"
        assert "halt" in done["lines"][0]
        assert len(call(served.url("/api/orders")).body["open"]) == 1


def test_a_stop_control_without_its_file_is_409_with_what_to_do(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    del env["BOTKIT_KILL_SWITCH_FILE"]
    assert botkit(env, "run", "--once").returncode == 0
    with serving(env, tmp_path) as served:
        answer = call(served.url("/api/control/kill-switch"), method="POST", body={"engage": True})
        assert answer.status == 409
        assert "set kill_switch_file" in answer.body["error"]


def test_botkit_control_engages_and_releases_the_same_file(tmp_path: Path) -> None:
    env = service_env(tmp_path)
    engaged = botkit(env, "control", "kill-switch", "engage", "--by", "ops-carol")
    assert engaged.returncode == 0, engaged.stderr
    assert "engaged by ops-carol at " in (tmp_path / "STOP").read_text()
    shown = botkit(env, "control", "kill-switch", "show")
    assert "ENGAGED" in shown.stdout
    assert "ops-carol" in shown.stdout
    released = botkit(env, "control", "kill-switch", "release", "--by", "ops-carol")
    assert released.returncode == 0
    assert released.stdout.strip() == "kill switch released by ops-carol"
    assert not (tmp_path / "STOP").exists()
    again = botkit(env, "control", "kill-switch", "release", "--by", "ops-carol")
    assert again.returncode == 0
    assert again.stdout.strip() == "kill switch was not engaged: nothing to release"
    assert "released" not in again.stderr  # no log line claims a release either


def test_a_request_the_service_did_not_run_within_ten_minutes_expires(tmp_path: Path) -> None:
    """A flatten filed while the service was down must not fire at its restart hours later."""
    env = service_env(tmp_path)
    assert botkit(env, "run", "--once").returncode == 0
    first_ended = time.monotonic()
    with serving(env, tmp_path, "--exchange-every", "0") as served:
        filed = call(served.url("/api/control/cancel"), method="POST", body={"all": True})
        assert filed.status == 202
        # the service was down for an hour: the request's filing time is an hour back
        path = tmp_path / "journal.sqlite.requests" / f"{filed.body['request']}.json"
        body = json.loads(path.read_text())
        path.write_text(json.dumps({**body, "filed_ms": body["filed_ms"] - 3_600_000}))
        apart_s = time.monotonic() - first_ended
        assert botkit(env, "run", "--once").returncode == 0
        done = call(served.url(filed.body["href"])).body
        assert done["status"] == "refused"
        assert done["lines"][0].startswith("expired: filed 36")  # 3600 s and the run's own
        assert "not run" in done["lines"][0]
        _nothing_cancelled(tmp_path, served, apart_s=apart_s)  # both runs': none cancelled


def test_a_filed_cancel_of_a_misspelt_strategy_is_refused_with_the_name_it_meant(
    tmp_path: Path,
) -> None:
    env = service_env(tmp_path)
    assert botkit(env, "run", "--once").returncode == 0
    first_ended = time.monotonic()
    with serving(env, tmp_path, "--exchange-every", "0") as served:
        filed = call(served.url("/api/control/cancel"), method="POST", body={"strategy": "rets"})
        assert filed.status == 202
        apart_s = time.monotonic() - first_ended
        assert botkit(env, "run", "--once").returncode == 0
        done = call(served.url(filed.body["href"])).body
        assert done["status"] == "refused"
        assert done["lines"] == [
            "botkit cancel: no open order for strategy rets; no strategy 'rets' is loaded or"
            " known to the journal — did you mean 'rest'?"
        ]
        _nothing_cancelled(tmp_path, served, apart_s=apart_s)  # nothing cancelled
