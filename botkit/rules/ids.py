"""Deterministic client order ids: (strategy, rule, evaluation slot, leg) → a clOrdId.

Shape: ``bk`` + 6 characters hashing the strategy name + 4 hashing the rule name + ``-`` + the
slot in base 36 + ``-`` + the leg in base 36, e.g. ``bkq3xz7mab2c-hx0k9c-0``. Only A-Z a-z 0-9
``_`` ``-``, at most 32 characters. The same decision (same strategy, rule, slot and leg) always
gives the same id, so re-running a decision can never double an order; the hashes let the bot
attribute an open order to its strategy and rule without any state.

A declared (``keep:``) order has the same shape with ``_`` for ``-``: ``bk`` + the two hashes +
``_`` + its generation in base 36 + ``_`` + its rung in base 36, e.g. ``bkq3xz7mab2c_hx0k9c_3``
(:func:`kept_order_id`). The rung is its stable identity within the rule; the generation grows
with every order sent for the rung (never below the evaluation slot it was sent in), so a
replacement's id is new and no id is sent twice.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from operator import index

from botkit.frozen import quick_init

__all__ = [
    "MAX_LENGTH",
    "PREFIX",
    "ParsedOrderId",
    "belongs_to",
    "client_order_id",
    "kept_order_id",
    "leg_id",
    "parse_client_order_id",
    "rule_tag",
    "slot_prefix",
    "strategy_tag",
    "tag_clash",
    "tag_rename",
    "tag_twin",
    "twin_clash",
]

PREFIX = "bk"
MAX_LENGTH = 32
_STRATEGY_TAG_LEN = 6
_RULE_TAG_LEN = 4
_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"
_PATTERN = re.compile(r"bk([a-z2-7]{6})([a-z2-7]{4})([-_])([0-9a-z]+)\3([0-9a-z]+)")


@quick_init
@dataclass(frozen=True, slots=True)
class ParsedOrderId:
    """The parts of a botkit client order id (names are only known as their hashes)."""

    strategy_tag: str
    rule_tag: str
    slot: int
    """The evaluation slot (a declared order: its generation)."""
    leg: int
    """The leg (a declared order: its rung, the stable identity within the rule)."""
    kept: bool = False
    """A declared (``keep:``) order's id: ``slot`` is the generation, ``leg`` the rung."""


def _tag(text: str, length: int) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:length]


@lru_cache(maxsize=4096)
def strategy_tag(strategy: str) -> str:
    """The 6-character hash of a strategy name used inside its client order ids."""
    return _tag(strategy, _STRATEGY_TAG_LEN)


def tag_twin(name: str, others: Iterable[str]) -> str | None:
    """The first of ``others`` (other than ``name``) whose :func:`strategy_tag` is ``name``'s, or
    None: two strategies of one tag would make the same client order ids, and each would take
    the other's orders for its own (cancel them, count their fills)."""
    tag = strategy_tag(name)
    return next((o for o in others if o != name and strategy_tag(o) == tag), None)


def tag_clash(name: str, twin: str, where: str) -> str:
    """What is wrong when strategy ``name`` has the tag of ``twin`` (in ``where``: its file, or
    the journal that knows it)."""
    return (
        f"strategy name '{name}' has the same client order id tag ({strategy_tag(name)}) as"
        f" '{twin}' in {where}: their orders could not be told apart"
    )


def tag_rename(name: str, twin: str, *, ran: bool = False) -> str:
    """What to do about :func:`tag_clash`: rename one of the two strategies, or — ``ran``:
    ``twin`` is not loaded but the journal knows it (it ran, its file is gone; its orders may
    still rest and fill) — rename ``name``, the new one."""
    if not ran:
        return "rename one of the two strategies"
    return (
        f"rename '{name}': '{twin}' ran before and its orders (open ones, fills to come) carry"
        " that tag"
    )


def twin_clash(
    name: str,
    running: Mapping[str, str],
    ran: Callable[[], Mapping[str, str]] | None = None,
) -> tuple[str, str] | None:
    """What is wrong and what to do (:func:`tag_clash`, :func:`tag_rename`) when strategy
    ``name`` has the tag of another one (:func:`tag_twin`): of ``running`` (the other strategies
    loaded: name → file), else of those that ``ran`` (the journal's: name → where it is known,
    asked only here: a strategy that ran and is gone may still have orders at the exchange and
    fills to come, which the new one would take for its own); None when it has its own tag.
    The same name is the same strategy: never its own twin."""
    twin = tag_twin(name, running)
    if twin is not None:
        return tag_clash(name, twin, running[twin]), tag_rename(name, twin)
    known = ran() if ran is not None else {}
    twin = tag_twin(name, known)
    if twin is None:
        return None
    return tag_clash(name, twin, known[twin]), tag_rename(name, twin, ran=True)


@lru_cache(maxsize=4096)
def rule_tag(rule: str) -> str:
    """The 4-character hash of a rule name used inside its client order ids."""
    return _tag(rule, _RULE_TAG_LEN)


def _base36(value: int) -> str:
    if value == 0:
        return "0"
    out: list[str] = []
    while value:
        value, digit = divmod(value, 36)
        out.append(_DIGITS[digit])
    return "".join(reversed(out))


def client_order_id(strategy: str, rule: str, slot: int, leg: int) -> str:
    """The client order id of leg ``leg`` of what ``rule`` decided in evaluation slot ``slot``."""
    return leg_id(slot_prefix(strategy, rule, slot), leg)


def slot_prefix(strategy: str, rule: str, slot: int) -> str:
    """The part of the ids shared by every leg of one decision (``leg_id`` adds the leg)."""
    if slot < 0:
        raise ValueError(f"slot must be >= 0 (got slot={slot})")
    return f"{PREFIX}{strategy_tag(strategy)}{rule_tag(rule)}-{_generation(slot)}-"


def leg_id(prefix: str, leg: int) -> str:
    """``prefix`` (from :func:`slot_prefix`) completed with the leg index."""
    if leg < 0:
        raise ValueError(f"leg must be >= 0 (got leg={leg})")
    text = prefix + _leg(leg)
    if len(text) > MAX_LENGTH:
        raise ValueError(f"{text!r} is longer than {MAX_LENGTH} characters")
    return text


def kept_order_id(strategy: str, rule: str, generation: int, rung: int) -> str:
    """The client order id of generation ``generation`` of rung ``rung`` of a declared
    (``keep:``) rule's orders."""
    if generation < 0 or rung < 0:
        raise ValueError(f"generation and rung must be >= 0 (got {generation}, {rung})")
    text = f"{_kept_prefix(strategy, rule)}{_generation(generation)}_{_leg(rung)}"
    if len(text) > MAX_LENGTH:
        raise ValueError(f"{text!r} is longer than {MAX_LENGTH} characters")
    if text not in _PARSED:  # its parts, as the parse gives them (each id is parsed later)
        _PARSED.remember(
            text,
            ParsedOrderId(
                strategy_tag(strategy), rule_tag(rule), index(generation), index(rung), True
            ),
        )
    return text


_LEGS = tuple(_base36(k) for k in range(256))


def _leg(leg: int) -> str:
    return _LEGS[leg] if leg < len(_LEGS) else _base36(leg)


@lru_cache(maxsize=256)
def _kept_prefix(strategy: str, rule: str) -> str:
    return f"{PREFIX}{strategy_tag(strategy)}{rule_tag(rule)}_"


@lru_cache(maxsize=1024)
def _generation(generation: int) -> str:
    """``_base36(generation)``, kept for the newest generations (and slots): a cycle names every
    rung it places with the same one (its slot), and the next cycles mostly the next ones; the
    strategies of one period share a slot."""
    return _base36(generation)


def _parse(cl_ord_id: str) -> ParsedOrderId | None:
    """The parts of a botkit client order id, or None for an id botkit did not make."""
    match = _PATTERN.fullmatch(cl_ord_id)
    if match is None:
        return None
    return ParsedOrderId(
        match[1], match[2], int(match[4], 36), int(match[5], 36), kept=match[3] == "_"
    )


_KEPT_IDS = 65536
"""At most this many ids' parts are kept (then forgotten at once, and parsed again when
asked)."""


class _Parsed(dict[str, ParsedOrderId | None]):
    """The parts of the ids parsed or made last (:func:`_parse`'s answer; the ones
    :func:`kept_order_id` made recorded when made, each the same value as its parse:
    ``tests/rules/test_ids_parts.py`` compares them). A hit is a dict lookup."""

    __slots__ = ()

    def __missing__(self, cl_ord_id: str) -> ParsedOrderId | None:
        parsed = _parse(cl_ord_id)
        self.remember(cl_ord_id, parsed)
        return parsed

    def remember(self, cl_ord_id: str, parsed: ParsedOrderId | None) -> None:
        if len(self) >= _KEPT_IDS:
            self.clear()
        self[cl_ord_id] = parsed


_PARSED = _Parsed()


def parse_client_order_id(cl_ord_id: str) -> ParsedOrderId | None:
    """The parts of a botkit client order id, or None for an id botkit did not make (:func:`_parse`,
    kept for the ids seen or made last: a resting order's id is parsed at every cycle and quiet
    check, and each id a ``keep:`` rule's reconcile makes is parsed once it rests)."""
    return _PARSED[cl_ord_id]


def belongs_to(cl_ord_id: str, strategy: str, rule: str | None = None) -> bool:
    """Whether the order was placed by ``strategy`` (and by ``rule`` of it, when given)."""
    parsed = parse_client_order_id(cl_ord_id)
    if parsed is None or parsed.strategy_tag != strategy_tag(strategy):
        return False
    return rule is None or parsed.rule_tag == rule_tag(rule)
