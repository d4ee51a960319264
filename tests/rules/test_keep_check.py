"""keep: rules through the public loader: what they compile to, and every mistake located."""

# ruff: noqa: E501  (the tables hold one YAML snippet and its message per line, unwrapped)

from __future__ import annotations

from decimal import Decimal

import pytest

from botkit.intents import KeepIntent, KeepPolicy
from botkit.rules import RuleStatus, evaluate, loads
from botkit.rules.ids import kept_order_id, parse_client_order_id
from tests.rules.helpers import snapshot
from tests.rules.test_check_messages import HEAD, problems

LADDER = "      ladder: {side: BUY, count: 3, from_px: 100, step_px: 1, sz: 1}\n"

CASES: list[tuple[str, str, str]] = [
    ("unknown-key", HEAD + "    keep:\n" + LADDER + "      tolerence: 5 bps\n",
     "s.yaml:8:7: unknown key 'tolerence' — did you mean 'tolerance'?"),
    ("rule-key-typo", HEAD + "    kep:\n" + LADDER,
     "s.yaml:6:5: unknown key 'kep' — did you mean 'keep'?"),
    ("bad-tolerance", HEAD + "    keep:\n" + LADDER + "      tolerance: 5 percent\n",
     "s.yaml:8:18: tolerance: '5 percent' is not a tolerance — write '10 bps' or '3 ticks'"),
    ("bad-refill", HEAD + "    keep:\n" + LADDER + "      refill: sometimes\n",
     "s.yaml:8:15: refill: 'sometimes' is not a refill policy — write 'never', 'at once' or 'after 5m'"),
    ("keep-and-place", HEAD + "    keep:\n" + LADDER + "    place:\n" + LADDER,
     "s.yaml:8:5: place: a keep: rule only declares orders — move place: to a rule of its own"),
    ("keep-and-cooldown", HEAD + "    cooldown: 5m\n    keep:\n" + LADDER,
     "s.yaml:6:5: cooldown: a keep: rule never fires, it is kept every cycle — remove cooldown (use keep: min_rest / max_replacements to limit churn)"),
    ("market-kept", HEAD + "    keep:\n      order: {side: BUY, sz: 1}\n",
     "s.yaml:7:14: a kept order must rest: a MARKET order cannot — give it a px (LIMIT or LIMIT_MAKER), or use place: for a market order"),
    ("nothing-kept", HEAD + "    keep: {tolerance: 5 bps}\n",
     "s.yaml:6:11: keep: nothing to place — add order:, orders:, ladder: or grid:"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_keep_mistake_is_reported_where_it_is(text: str, expected: str) -> None:
    assert expected in problems(text)


def test_a_keep_rule_compiles_its_policy() -> None:
    strategy = loads(
        HEAD + "    keep:\n" + LADDER
        + "      tolerance: 3 ticks\n      refill: after 1m30s\n      min_rest: 20s\n      max_replacements: 4\n",
        "s.yaml",
    )  # fmt: skip
    assert strategy.rules[0].keep == KeepPolicy(
        tolerance=Decimal(3),
        tolerance_ticks=True,
        refill_ms=90_000,
        min_rest_ms=20_000,
        max_replacements=4,
    )
    assert loads(HEAD + "    keep:\n" + LADDER, "s.yaml").rules[0].keep == KeepPolicy()


def test_a_keep_rule_declares_its_rungs_and_never_fires() -> None:
    strategy = loads(HEAD + "    keep:\n" + LADDER, "s.yaml")
    result = evaluate(strategy, snapshot(), {}, 60_000)
    (rule,) = result.results
    assert rule.status is RuleStatus.DECLARED
    assert not rule.fired
    (intent,) = rule.intents
    assert isinstance(intent, KeepIntent)
    assert [(o.rung, o.px) for o in intent.orders] == [
        (0, Decimal(100)),
        (1, Decimal(99)),
        (2, Decimal(98)),
    ]


def test_kept_ids_are_attributed_like_any_other() -> None:
    cl = kept_order_id("btc-dip-ladder", "ladder-on-dip", 28_333_333, 11)
    assert cl == "bklmfrzw2l7e_gva51_b"
    parsed = parse_client_order_id(cl)
    assert parsed is not None
    assert (parsed.slot, parsed.leg, parsed.kept) == (28_333_333, 11, True)
    assert parse_client_order_id("bklmfrzw2l7e_gva51-b") is None  # one separator or the other
