"""Every check message, with its exact file:line:column (1-based), through the public loader."""

# ruff: noqa: E501  (the tables hold one YAML snippet and its message per line, unwrapped)

from __future__ import annotations

import pytest

from botkit.errors import StrategyFileError
from botkit.rules import loads
from tests.rules.helpers import BTC

HEAD = "strategy: t\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n"
"""Lines 1-5; a rule's next key is on line 6, an expression after 'when: ' starts at column 11."""


def when(expr: str, action: str = "    close: {}\n") -> str:
    return HEAD + f"    when: {expr}\n" + action


def problems(text: str, *, instruments: bool = False) -> list[str]:
    with pytest.raises(StrategyFileError) as caught:
        loads(text, "s.yaml", instruments={BTC.symbol: BTC} if instruments else None)
    return [p.format() for p in caught.value.problems]


CASES: list[tuple[str, str, str]] = [
    # --- YAML and structure ----------------------------------------------------------------
    ("yaml-syntax", "strategy: t\nsymbol: [BTC\nevery: 1m\n",
     "s.yaml:3:6: YAML syntax: expected ',' or ']', but got ':' — fix the indentation or punctuation here"),
    ("empty-file", "",
     "s.yaml:1:1: the file is empty — start with 'strategy: NAME', 'symbol: SYMBOL', 'every: 1m' and a list of 'rules:'"),
    ("not-a-mapping", "- a\n- b\n",
     "s.yaml:1:1: a strategy file is a mapping of keys — start with 'strategy: NAME'"),
    ("duplicate-key", "strategy: t\nstrategy: u\n",
     "s.yaml:2:1: duplicate key 'strategy' (first at line 1) — keep one of them"),
    ("merge-key", "strategy: t\n<<: {a: 1}\n",
     "s.yaml:2:1: merge keys (<<) are not supported — write the keys out"),
    ("unknown-top-key", HEAD.replace("symbol:", "symbl:"),
     "s.yaml:2:1: unknown key 'symbl' — did you mean 'symbol'?"),
    ("unknown-rule-key", HEAD + "    cooldwn: 10m\n    close: {}\n",
     "s.yaml:6:5: unknown key 'cooldwn' — did you mean 'cooldown'?"),
    ("unknown-key-in-flow-mapping",
     HEAD + "    place:\n      ladder: {sid: BUY, count: 2, from_px: 10, step_px: 1, sz: 1}\n",
     "s.yaml:7:16: unknown key 'sid' — did you mean 'side'?"),
    ("unknown-key-no-match", HEAD + "    zzz: 1\n    close: {}\n",
     "s.yaml:6:5: unknown key 'zzz' — use one of: name, when, enabled, pos_side, cooldown, "
     "max_fires, keep_open, place, keep, close, cancel, set_leverage, ..."),
    ("comma-in-flow-mapping", HEAD + "    place:\n      order: {side: BUY, sz: min(1, 2)}\n",
     "s.yaml:7:37: unknown key '2)' — a comma inside { ... } ends the value: quote the expression (\"floor(x, 1)\") or write the mapping one key per line"),
    ("missing-key", "strategy: t\nsymbol: BTC_USDT_PERP\nrules:\n  - name: r\n    close: {}\n",
     "s.yaml:1:1: missing key 'every' — add 'every: 1m'"),
    ("missing-rule-key", HEAD + "    place:\n      order: {side: BUY}\n",
     "s.yaml:7:14: missing key 'sz' — add 'sz: 1'"),
    ("enum-word", HEAD + "    place:\n      order: {side: BUYY, sz: 1}\n",
     "s.yaml:7:21: side: 'BUYY' is not allowed — use one of BUY or SELL"),
    ("bool-word", HEAD + "    keep_open: maybe\n    close: {}\n",
     "s.yaml:6:16: keep_open: expected true or false (got 'maybe')"),
    ("whole-number", HEAD + "    set_leverage: {lever: 2.5}\n",
     "s.yaml:6:27: lever: expected a whole number (got 2.5)"),
    ("duration-word", HEAD.replace("every: 1m", "every: 1x"),
     "s.yaml:3:8: every: '1x' is not a duration — write a number and a unit: 30s, 10m, 1h30m, 1d"),
    ("duration-number", HEAD.replace("every: 1m", "every: 60"),
     "s.yaml:3:8: every: 60 is not a duration — write a number and a unit: 30s, 10m, 1h30m, 1d"),
    ("duration-too-short", HEAD.replace("every: 1m", "every: 500ms") + "    close: {}\n",
     "s.yaml:3:8: every: shorter than 1s — use 1s or more"),
    ("bad-name", "strategy: my strategy\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules:\n  - name: r\n    close: {}\n",
     "s.yaml:1:11: strategy: 'my strategy' has characters that are not allowed — use letters, "
     "digits, '_', '-' and '.'"),
    ("no-rules", "strategy: t\nsymbol: BTC_USDT_PERP\nevery: 1m\nrules: []\n",
     "s.yaml:4:8: rules: the list is empty — add at least one item"),
    ("mapping-expected", HEAD + "    place: 3\n",
     "s.yaml:6:12: place: expected a mapping ('key: value' lines or {key: value}) (got 3)"),
    # --- rules and actions -----------------------------------------------------------------
    ("duplicate-rule", HEAD + "    close: {}\n  - name: r\n    cancel: {}\n",
     "s.yaml:7:11: duplicate rule name 'r' (first at line 5) — give every rule its own name"),
    ("rule-does-nothing", HEAD + "    when: position.qty > 0\n",
     "s.yaml:5:5: rule 'r' does nothing — add place:, close:, cancel:, set_leverage: or "
     "set_position_mode:"),
    ("place-nothing", HEAD + "    place: {}\n",
     "s.yaml:6:12: place: nothing to place — add order:, orders:, ladder: or grid:"),
    ("market-with-px", HEAD + "    place:\n      order: {side: BUY, type: MARKET, px: 10, sz: 1}\n",
     "s.yaml:7:44: a MARKET order takes no px — remove px or set type: LIMIT"),
    ("limit-without-px", HEAD + "    place:\n      order: {side: BUY, type: LIMIT, sz: 1}\n",
     "s.yaml:7:14: a LIMIT order needs px — add px: ... or use type: MARKET"),
    ("ladder-step-or-to", HEAD + "    place:\n      ladder: {side: BUY, count: 2, from_px: 10, sz: 1}\n",
     "s.yaml:7:15: a ladder needs exactly one of step_px and to_px — step_px: distance between "
     "rungs, or to_px: the last rung's price"),
    ("ladder-market", HEAD + "    place:\n      ladder: {side: BUY, type: MARKET, count: 2, from_px: 10, step_px: 1, sz: 1}\n",
     "s.yaml:7:33: a ladder places priced orders — use type: LIMIT or LIMIT_MAKER"),
    ("ladder-count", HEAD + "    place:\n      ladder: {side: BUY, count: 500, from_px: 10, step_px: 1, sz: 1}\n",
     "s.yaml:7:34: count: 500 is not a whole number 1..200"),
    ("cancel-unknown-rule", HEAD + "    cancel: {rule: rr}\n",
     "s.yaml:6:20: cancel: no rule named 'rr' — did you mean 'r'?"),
    ("one-way-pos-side", HEAD + "    pos_side: LONG\n    close: {}\n",
     "s.yaml:6:15: pos_side: LONG needs hedge mode — set margin: {position_mode: HEDGE} or "
     "remove pos_side"),
    ("hedge-order-needs-side",
     HEAD.replace("every: 1m\n", "every: 1m\nmargin: {position_mode: HEDGE}\n")
     + "    place:\n      order: {side: BUY, sz: 1}\n",
     "s.yaml:8:14: in hedge mode every order needs pos_side LONG or SHORT — set pos_side on the "
     "order or on the rule"),
    ("hedge-position-needs-side",
     HEAD.replace("every: 1m\n", "every: 1m\nmargin: {position_mode: HEDGE}\n")
     + "    when: position.qty > 0\n    close: {}\n",
     "s.yaml:7:11: when: 'position' needs the rule's pos_side here — set the rule's pos_side: "
     "LONG or SHORT, or use positions.long / positions.short"),
    # --- expressions (column inside the expression) ----------------------------------------
    ("syntax-error", when("position.qty >* 0"),
     "s.yaml:6:25: when: syntax error — write a Python-like expression, e.g. position.qty > 0 "
     "and price.mark < 100"),
    ("ends-too-early", when("position.qty > 0 and"),
     "s.yaml:6:31: when: the expression ends too early — write a Python-like expression, e.g. "
     "position.qty > 0 and price.mark < 100"),
    ("assignment", when("position.qty = 0"),
     "s.yaml:6:24: when: syntax error — compare with '==', not '='"),
    ("unknown-name", when("price.mark > 0 and positon.qty > 0"),
     "s.yaml:6:30: when: unknown name 'positon' — did you mean 'position'?"),
    ("unknown-field", when("position.qtty > 0"),
     "s.yaml:6:20: when: position has no field 'qtty' — did you mean 'qty'?"),
    ("field-of-number", when("price.mark.x > 0"),
     "s.yaml:6:22: when: price.mark is a number; it has no field 'x'"),
    ("not-a-value", when("history.fills > 0"),
     "s.yaml:6:11: when: history.fills is not a value — use a field, e.g. "
     "history.fills.count('1h'), history.fills.sum('px', '1h'), history.fills.last.px"),
    ("method-not-called", when("history.fills.count > 0"),
     "s.yaml:6:25: when: history.fills.count is a function — call it: fills in the window, "
     "e.g. count('1h')"),
    ("bad-window", when("history.fills.count('1 hour') > 0"),
     "s.yaml:6:31: when: '1 hour' is not a duration — write a number and a unit: 30s, 10m, 1h, 1d"),
    ("bad-record-field", when("history.fills.sum('qtty', '1h') > 0"),
     "s.yaml:6:29: when: 'qtty' is not a field here — did you mean 'qty'?"),
    ("window-not-literal", when("history.fills.count(price.mark) > 0"),
     "s.yaml:6:31: when: arguments of history.fills.count() must be quoted literals — fills "
     "in the window, e.g. count('1h')"),
    ("condition-is-number", when("position.qty + 1"),
     "s.yaml:6:11: when: expected true/false, got a number — write a comparison, e.g. "
     "position.qty > 0"),
    ("amount-is-bool", HEAD + "    place:\n      order: {side: BUY, sz: position.is_open}\n",
     "s.yaml:7:30: sz: expected a number, got true/false — write a number or a numeric field, "
     "e.g. price.mark * 0.99"),
    ("mixed-arithmetic", when("position.is_open + 1 > 0"),
     "s.yaml:6:11: when: expected a number, got true/false (arithmetic needs numbers) — write "
     "a number or a numeric field, e.g. price.mark * 0.99"),
    ("not-on-number", when("not position.qty"),
     "s.yaml:6:15: when: expected true/false, got a number ('not' needs true/false) — write a "
     "comparison, e.g. position.qty > 0"),
    ("ordered-bools", when("position.is_open < position.is_long"),
     "s.yaml:6:11: when: cannot compare true/false with '<' — write a number or a numeric "
     "field, e.g. price.mark * 0.99"),
    ("unknown-function", when("maxx(price.mark, 1) > 0"),
     "s.yaml:6:11: when: unknown function 'maxx' — did you mean 'max'?"),
    ("function-arity", when("floor() > 0"),
     "s.yaml:6:11: when: floor() takes 1 to 2 arguments, got 0 — round down to a step: "
     "floor(x, instrument.lotSz)"),
    ("ms-not-literal", when("rule.last_fire_ago > ms(price.mark)"),
     "s.yaml:6:35: when: ms() needs a literal duration — write ms('1h')"),
    ("unknown-param", HEAD.replace("rules:", "params: {drop: 0.03}\nrules:").replace("name: r", "name: r")
     + "    when: price.mark < params.dorp\n    close: {}\n",
     "s.yaml:7:31: when: unknown param 'dorp' — did you mean 'drop'?"),
    ("dunder", when("position.__class__ == 0"),
     "s.yaml:6:11: when: names starting with '_' are not allowed"),
    ("index-outside-ladder", when("i > 0"),
     "s.yaml:6:11: when: 'i' (the rung index) exists only in ladder and grid fields"),
    ("subscript", when("account.ccy['USDT'].avail > 0"),
     "s.yaml:6:11: when: 'Subscript' is not allowed in an expression — use a dot: "
     "account.ccy.USDT.avail, not brackets"),
    ("bit-operator", when("position.qty & 1 > 0"),
     "s.yaml:6:11: when: operator '&' is not allowed — use + - * / // % **"),
    ("constant-division-by-zero", HEAD + "    place:\n      order: {side: BUY, sz: 1 / 0}\n",
     "s.yaml:7:30: sz: division by zero — fix the arithmetic"),
    ("quoted-expression", HEAD + '    when: "position.qty > 0 and prce.mark > 1"\n    close: {}\n',
     "s.yaml:6:33: when: unknown name 'prce' — did you mean 'price'?"),
    ("folded-expression", HEAD + "    when: >\n      position.qty > 0 and\n      prce.mark > 1\n    close: {}\n",
     "s.yaml:8:7: when: unknown name 'prce' — did you mean 'price'?"),
    ("literal-block-expression", HEAD + "    when: |\n      position.qty > 0\n        and prce.mark > 1\n    close: {}\n",
     "s.yaml:8:13: when: unknown name 'prce' — did you mean 'price'?"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_problem_is_reported_where_it_is(text: str, expected: str) -> None:
    assert expected in problems(text)


INSTRUMENT_CASES: list[tuple[str, str, str]] = [
    ("unknown-symbol", HEAD.replace("BTC_USDT_PERP", "BTC_USDT_PERPP") + "    close: {}\n",
     "s.yaml:2:9: unknown symbol 'BTC_USDT_PERPP' — did you mean 'BTC_USDT_PERP'?"),
    ("ladder-below-min-price",
     HEAD + "    place:\n      ladder: {side: BUY, count: 3, from_px: 0.09, step_px: 0.01, sz: 1}\n",
     "s.yaml:7:15: all 3 ladder prices (0.09 .. 0.07) are below minPx 0.1 of BTC_USDT_PERP — "
     "raise from_px or shorten the ladder"),
    ("ladder-above-max-price",
     HEAD + "    place:\n      ladder: {side: SELL, count: 2, from_px: 2000000, step_px: 1, sz: 1}\n",
     "s.yaml:7:15: all 2 ladder prices (2000000 .. 2000001) are above maxPx 1000000 of "
     "BTC_USDT_PERP — lower from_px or shorten the ladder"),
    ("ladder-outside-band",
     HEAD + "    place:\n      ladder: {side: BUY, count: 3, from_px: price.mark * 0.9, step_px: price.mark * 0.01, sz: 1}\n",
     "s.yaml:7:15: every ladder price is more than 5% (ordPxRange) from the mark, so "
     "BTC_USDT_PERP would refuse all 3 orders — start the ladder nearer the mark or use a "
     "smaller step"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in INSTRUMENT_CASES], ids=[c[0] for c in INSTRUMENT_CASES]
)
def test_instrument_problem_is_reported_where_it_is(text: str, expected: str) -> None:
    assert expected in problems(text, instruments=True)


def test_a_ladder_partly_inside_the_limits_is_fine() -> None:
    text = HEAD + (
        "    place:\n      ladder: {side: BUY, count: 3, from_px: price.mark * 0.96,"
        " step_px: price.mark * 0.01, sz: 1}\n"
    )
    assert loads(text, "s.yaml", instruments={BTC.symbol: BTC}).name == "t"


def test_every_problem_of_a_file_is_reported_at_once() -> None:
    text = (
        "strategy: t\nsymbol: BTC_USDT_PERP\nevery: 1x\nrules:\n  - name: r\n"
        "    cooldwn: 1m\n    when: positon.qty > 0\n    close: {}\n"
        "  - name: r\n    cancel: {rule: q}\n"
    )
    assert problems(text) == [
        "s.yaml:3:8: every: '1x' is not a duration — write a number and a unit: 30s, 10m, "
        "1h30m, 1d",
        "s.yaml:6:5: unknown key 'cooldwn' — did you mean 'cooldown'?",
        "s.yaml:7:11: when: unknown name 'positon' — did you mean 'position'?",
        "s.yaml:9:11: duplicate rule name 'r' (first at line 5) — give every rule its own name",
        "s.yaml:10:20: cancel: no rule named 'q' — use one of: r",
    ]


def test_error_message_is_one_line_per_problem() -> None:
    with pytest.raises(StrategyFileError) as caught:
        loads(when("positon.qty > 0 and prce.mark > 0"), "s.yaml")
    assert str(caught.value).splitlines() == [p.format() for p in caught.value.problems]
    assert len(caught.value.problems) == 1  # the compiler stops at an expression's first problem
