"""``botkit serve`` with ``exchange = "live"``: the exchange is ``botkit sim serve`` on loopback
(another real process), read with signed requests by one kept client; a ``botkit run`` placed
the order it answers about."""

from __future__ import annotations

from pathlib import Path

from tests.e2e.serving import SECRETS, botkit, call, service_env, serving
from tests.simserve import sim_serve

KEYS = {
    "BOTKIT_API_KEY": "sim-key",
    "BOTKIT_API_SECRET": "sim-secret",
    "BOTKIT_API_PASSPHRASE": "sim-passphrase",
}


def test_serve_reads_a_live_exchange_with_signed_requests(tmp_path: Path) -> None:
    env = {k: v for k, v in service_env(tmp_path).items() if k not in SECRETS}
    with sim_serve(env, cwd=tmp_path) as url:
        live = {**env, **KEYS, "BOTKIT_EXCHANGE": "live", "BOTKIT_BASE_URL": url}
        done = botkit(live, "run", "--once")
        assert done.returncode == 0, done.stderr
        with serving(live, tmp_path, "--exchange-every", "0") as served:
            for _ in range(3):  # the kept client, read again
                orders = call(served.url("/api/orders"))
                assert orders.status == 200, orders.body
                assert [(o["strategy"], o["rule"]) for o in orders.body["open"]] == [
                    ("rest", "rest-one")
                ]
            positions = call(served.url("/api/positions"))
            assert positions.status == 200, positions.body
            assert positions.body["balance"]["eq"] is not None
        for secret in KEYS.values():
            assert secret not in served.log.read_text()
