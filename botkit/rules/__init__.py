"""The strategy language: YAML files → compiled strategies → order intents.

Public API::

    strategy = loads(text, "btc-dip-ladder.yaml", instruments=...)       # StrategyFileError
    result = evaluate(strategy, snapshot, activity, now_ms)               # pure, never raises
    result.intents                                                        # for the pipeline
    client_order_id(strategy.name, rule, slot, leg)                       # deterministic ids
    store = StrategyStore(source); report = store.refresh()               # reload each cycle

The package reads no file: a strategy source hands it the files' text
(:mod:`botkit.rules.source`; the files on disk: :mod:`botkit.sources`).

See docs/strategies.md for the file format.
"""

from botkit.rules.evaluate import Evaluation, RuleResult, RuleStatus, evaluate
from botkit.rules.ids import (
    ParsedOrderId,
    belongs_to,
    client_order_id,
    kept_order_id,
    parse_client_order_id,
)
from botkit.rules.loader import loads, version_of
from botkit.rules.model import OffTick, OnDelete, RiskLimits, Rule, Strategy
from botkit.rules.store import ReloadReport, StrategyStore

__all__ = [
    "Evaluation",
    "OffTick",
    "OnDelete",
    "ParsedOrderId",
    "ReloadReport",
    "RiskLimits",
    "Rule",
    "RuleResult",
    "RuleStatus",
    "Strategy",
    "StrategyStore",
    "belongs_to",
    "client_order_id",
    "evaluate",
    "kept_order_id",
    "loads",
    "parse_client_order_id",
    "version_of",
]
