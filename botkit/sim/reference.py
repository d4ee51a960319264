"""Static reference data of the spot side: markets (2.1) and currencies (2.2, 2.3).

The simulator trades futures only; these views exist so every reference path of the spec answers
with the spec's shapes. Values are fixed and JSON-ready (amounts as strings).
"""

from __future__ import annotations

from copy import deepcopy
from typing import Any

__all__ = ["currencies_v1", "currencies_v2", "markets"]

_LISTED_MS = 1_577_836_800_000  # 2020-01-01


def _market(
    base: str, quote: str, price_scale: int, qty_scale: int, min_qty: str
) -> dict[str, Any]:
    symbol = f"{base}_{quote}"
    return {
        "symbol": symbol,
        "baseCurrencyName": base,
        "quoteCurrencyName": quote,
        "displayName": f"{base}/{quote}",
        "state": "NORMAL",
        "visibleStartTime": _LISTED_MS,
        "tradableStartTime": _LISTED_MS,
        "symbolTradeLimit": {
            "symbol": symbol,
            "priceScale": price_scale,
            "quantityScale": qty_scale,
            "amountScale": 2,
            "minQuantity": min_qty,
            "minAmount": "1",
            "maxQuantity": "0",
            "maxAmount": "0",
            "highestBid": "0",
            "lowestAsk": "0",
        },
        "crossMargin": {"supportCrossMargin": True, "maxLeverage": 3},
    }


_MARKETS: list[dict[str, Any]] = [
    _market("BTC", "USDT", 2, 6, "0.000001"),
    _market("ETH", "USDT", 2, 4, "0.0001"),
    _market("SOL", "USDT", 3, 3, "0.001"),
]

# name -> (id, description/blockchain, withdrawal fee, min confirmations, child chains)
_CURRENCIES: dict[str, tuple[int, str, str, int, list[str]]] = {
    "BTC": (28, "BTC", "0.0001", 2, []),
    "ETH": (267, "ETH", "0.002", 64, []),
    "SOL": (1000, "SOL", "0.01", 32, []),
    "USDT": (214, "OMNI", "1", 2, ["USDTETH", "USDTTRON"]),
    "USDTETH": (315, "ETH", "5", 64, []),
    "USDTTRON": (316, "TRX", "1", 20, []),
}
_PARENT = {"USDTETH": "USDT", "USDTTRON": "USDT"}


def markets(symbol: str | None = None) -> list[dict[str, Any]]:
    """Every spot market, or the one named (empty list when unknown)."""
    return [deepcopy(m) for m in _MARKETS if symbol is None or m["symbol"] == symbol.upper()]


def _v1(name: str, multi: bool) -> dict[str, Any]:
    cid, chain, fee, conf, children = _CURRENCIES[name]
    body: dict[str, Any] = {
        "id": cid,
        "name": name,
        "description": chain,
        "type": "address",
        "withdrawalFee": fee,
        "minConf": conf,
        "depositAddress": None,
        "blockchain": chain,
        "delisted": False,
        "tradingState": "NORMAL",
        "walletState": "ENABLED",
        "walletDepositState": "ENABLED",
        "walletWithdrawalState": "ENABLED",
        "supportCollateral": name in {"BTC", "ETH", "USDT"},
        "supportBorrow": name in {"BTC", "ETH", "USDT"},
    }
    if multi:
        body["parentChain"] = _PARENT.get(name)
        body["isMultiChain"] = bool(children) or name in _PARENT
        body["isChildChain"] = name in _PARENT
        body["childChains"] = list(children)
    return {name: body}


def currencies_v1(name: str | None = None, *, multi_chain: bool = False) -> list[dict[str, Any]]:
    """The v1 view: objects keyed by currency name; child-chain rows only with ``multi_chain``."""
    names = [n for n in _CURRENCIES if multi_chain or n not in _PARENT]
    if name is not None:
        names = [n for n in names if n == name.upper()]
    return [_v1(n, multi_chain) for n in names]


def currencies_v2(coin: str | None = None) -> list[dict[str, Any]]:
    """The v2 view: one object per coin with its networks (child chains become networks)."""
    out: list[dict[str, Any]] = []
    for name, (cid, chain, fee, conf, children) in _CURRENCIES.items():
        if name in _PARENT or (coin is not None and name != coin.upper()):
            continue
        networks = [(name, cid, chain, fee, conf)] + [
            (child, _CURRENCIES[child][0], *_CURRENCIES[child][1:4]) for child in children
        ]
        out.append(
            {
                "id": cid,
                "coin": name,
                "delisted": False,
                "tradeEnable": True,
                "name": name,
                "supportCollateral": name in {"BTC", "ETH", "USDT"},
                "supportBorrow": name in {"BTC", "ETH", "USDT"},
                "networkList": [
                    {
                        "id": nid,
                        "coin": nname,
                        "name": nchain,
                        "currencyType": "address",
                        "blockchain": nchain,
                        "withdrawalEnable": True,
                        "depositEnable": True,
                        "depositAddress": None,
                        "withdrawMin": "0",
                        "decimals": 8,
                        "withdrawFee": nfee,
                        "minConfirm": nconf,
                        "contractAddress": None,
                    }
                    for nname, nid, nchain, nfee, nconf in networks
                ],
                "externalTransferEnabled": False,
            }
        )
    return out
