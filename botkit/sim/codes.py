"""Answer codes of the paper exchange and :class:`SimError`, the one way the engine says "no".

Codes come from the live-API notes' list; ``400`` ("Param error: ...") covers what no listed code
fits. docs/simulator.md has the full table of which rule answers which code.
"""

from __future__ import annotations

__all__ = [
    "BAD_INTERVAL",
    "BAD_PARAM",
    "BATCH_CANCEL_TOO_LARGE",
    "BATCH_TOO_LARGE",
    "CANCEL_ONLY",
    "CLOSE_ONLY",
    "DUPLICATE",
    "INVALID_SYMBOL",
    "NOT_CANCELABLE",
    "NOT_FOUND",
    "NO_POSITION",
    "ORDER_NOT_FOUND",
    "PAUSED",
    "POSITION_NOT_FOUND",
    "PRICE_BAND",
    "PRICE_LIMIT",
    "SUCCESS",
    "SYMBOL_NOT_FOUND",
    "SYMBOL_NOT_TRADING",
    "SimError",
]

SUCCESS = 200
DUPLICATE = 250
BAD_PARAM = 400
NOT_FOUND = 404
SYMBOL_NOT_TRADING = 10000
SYMBOL_NOT_FOUND = 10001
PRICE_LIMIT = 10002
PAUSED = 10005
CANCEL_ONLY = 10006
PRICE_BAND = 10014
CLOSE_ONLY = 10015
BATCH_TOO_LARGE = 10016
BATCH_CANCEL_TOO_LARGE = 10017
NO_POSITION = 10018
NOT_CANCELABLE = 11004
ORDER_NOT_FOUND = 11008
POSITION_NOT_FOUND = 21001
INVALID_SYMBOL = 24101
BAD_INTERVAL = 24102


class SimError(Exception):
    """An answer with a non-200 envelope code (and the HTTP status to send it with)."""

    def __init__(self, code: int, msg: str, http_status: int = 200) -> None:
        self.code = code
        self.msg = msg
        self.http_status = http_status
        super().__init__(f"{code}: {msg}")

    @classmethod
    def param(cls, what: str) -> SimError:
        """``400 Param error: <what>`` — a request parameter is missing or wrong."""
        return cls(BAD_PARAM, f"Param error: {what}", http_status=400)
