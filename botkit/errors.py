"""The one error tree of botkit. The class of an error says what the caller does next.

::

    BotkitError                   base; str(e) is one line an operator can act on
    ├── ConfigError               stop start-up; says where (file:line:column, setting) + fix
    │   ├── SettingsError         a setting (env, .env, settings file) is missing or invalid
    │   ├── StrategyFileError     a strategy file is invalid; carries every located problem
    │   └── DataFileError         a market-data file (candles) is invalid; every located problem
    ├── UsageError                a CLI argument is wrong; exit 2 with the message
    ├── RequestValidationError    refused *before it left* (batch > 10, limit > 100, enum
    │                             word): a caller bug, never sent, never retried
    ├── ExchangeError             what the exchange (or the road to it) answered; .context
    │   ├── TransientError        retry with backoff: the request had no effect
    │   │   ├── ConnectFailed     the request never left (DNS, refused, connect timeout)
    │   │   ├── ServerUnavailable HTTP 5xx, or envelope code 500 / 503 / 1002
    │   │   ├── RateLimited       HTTP 429 or code 429; .retry_after when the answer says
    │   │   ├── TimestampExpired  clock rule: re-sync the offset, re-sign, re-send
    │   │   └── ReadTimedOut      a *read* timed out or lost its connection: repeatable
    │   ├── OutcomeUnknown        a *write* left, fate unknown (timeout, connection lost
    │   │                         after sending): look the client order ids up, never resend
    │   ├── ExchangeRejected      envelope code not 200; not retried. .code, .msg
    │   │   ├── AuthFailed        401 / 403: key, signature, passphrase or permission
    │   │   └── NotFoundError     404 / 11008 / 21001: the thing asked for does not exist
    │   ├── MalformedResponse     not JSON, no envelope, or a payload the models refuse
    │   │   ├── MalformedWriteResponse  …to a write that got HTTP 2xx: also OutcomeUnknown
    │   │   └── BatchMismatch     batch results do not match the orders by position and clOrdId
    │   └── ReadFailed            a read of a cycle's snapshot failed (past its retries): the
    │                             cycle ends as a failed read; .part says which, .cause why
    ├── JournalError              the journal database cannot be opened, migrated or written:
    │   │                         the service stops (trading on could send an order twice)
    │   ├── JournalLocked         another process holds the journal (its pid, host, since
    │   │                         when): this one refuses to start
    │   ├── DuplicateOrderId      a live client order id the journal already holds: nothing
    │   │                         of that write was written (the executor skips those ids)
    │   └── JournalUntrusted      the journal is corrupt, or no longer the file this process
    │                             opened (deleted, replaced): stop, never read or write on
    ├── PaperStateError           the paper account's state file (exchange = sim) cannot be
    │   │                         opened, read or written: stop (it is the account's truth)
    │   └── PaperStateLocked      another process holds the paper account: refuse to start
    └── StopRequested             a stop (SIGTERM / SIGINT) came during a wait, backoff or retry:
                                  unwind now; what is still open stays unsettled for reconcile

Per-order outcomes of a batch are *values* (``PlaceResult`` with its own code), not exceptions:
one rejected order never aborts its batch.

Every ``ExchangeError`` carries a :class:`RequestContext` (method, path, query, the orders'
client ids) built by the adapter that raised it. Contexts never hold headers, signatures or
credentials, so ``str()`` and ``repr()`` of any error are safe to log.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from botkit.frozen import quick_init

__all__ = [
    "AuthFailed",
    "BatchMismatch",
    "BotkitError",
    "ConfigError",
    "ConnectFailed",
    "DataFileError",
    "DuplicateOrderId",
    "ExchangeError",
    "ExchangeRejected",
    "JournalError",
    "JournalLocked",
    "JournalUntrusted",
    "Location",
    "MalformedResponse",
    "MalformedWriteResponse",
    "NotFoundError",
    "OutcomeUnknown",
    "PaperStateError",
    "PaperStateLocked",
    "RateLimited",
    "ReadFailed",
    "ReadTimedOut",
    "RequestContext",
    "RequestValidationError",
    "ServerUnavailable",
    "SettingsError",
    "StopRequested",
    "StrategyFileError",
    "TimestampExpired",
    "TransientError",
    "UsageError",
    "printable",
]


class BotkitError(Exception):
    """Base of every error botkit raises on purpose. ``str(e)`` is a one-line message."""


@dataclass(frozen=True, slots=True)
class Location:
    """Where a configuration problem is: a file position, or a setting name."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    field: str | None = None

    def __str__(self) -> str:
        if self.file is None:
            return self.field or "<settings>"
        parts = [printable(self.file)]
        if self.line is not None:
            parts.append(str(self.line))
            if self.column is not None:
                parts.append(str(self.column))
        return ":".join(parts)


def printable(text: str) -> str:
    """``text`` with control characters escaped, so a message stays one line on a terminal."""
    if all(" " <= c != "\x7f" for c in text):
        return text
    return "".join(c if " " <= c != "\x7f" else c.encode("unicode_escape").decode() for c in text)


class ConfigError(BotkitError):
    """Configuration is wrong: start-up stops with a message that says where and what to do."""

    def __init__(self, message: str, *, where: Location | None = None, hint: str = "") -> None:
        self.message = message
        self.where = where or Location()
        self.hint = hint
        super().__init__(self.format())

    def format(self) -> str:
        text = f"{self.where}: {self.message}"
        return f"{text} — {self.hint}" if self.hint else text


class SettingsError(ConfigError):
    """A setting (environment, .env or settings file) is missing or invalid."""


class StrategyFileError(ConfigError):
    """A strategy file is invalid; ``problems`` holds every located problem, one per line."""

    def __init__(self, problems: Sequence[ConfigError]) -> None:
        self.problems = list(problems)
        first = self.problems[0] if self.problems else ConfigError("invalid strategy file")
        super().__init__(first.message, where=first.where, hint=first.hint)

    def __str__(self) -> str:
        return "\n".join(p.format() for p in self.problems)


class DataFileError(ConfigError):
    """A candle file is invalid; ``problems`` holds every located problem (file:line)."""

    def __init__(self, problems: Sequence[ConfigError]) -> None:
        self.problems = list(problems)
        first = self.problems[0] if self.problems else ConfigError("invalid data file")
        super().__init__(first.message, where=first.where, hint=first.hint)

    def __str__(self) -> str:
        return "\n".join(p.format() for p in self.problems)


class UsageError(BotkitError):
    """A command-line argument is wrong."""


class RequestValidationError(BotkitError):
    """A request was refused before it left the process: it was never sent."""


@quick_init  # one per request
@dataclass(frozen=True, slots=True)
class RequestContext:
    """What was asked, for messages and the journal. Never holds headers or credentials."""

    method: str = ""
    path: str = ""
    query: Mapping[str, str] = field(default_factory=dict)
    client_order_ids: tuple[str, ...] = ()
    http_status: int | None = None

    def __str__(self) -> str:
        text = f"{self.method} {self.path}".strip()
        if self.query:
            text += "?" + "&".join(f"{k}={v}" for k, v in self.query.items())
        if self.client_order_ids:
            ids = ",".join(self.client_order_ids[:3])
            more = len(self.client_order_ids) - 3
            text += f" [clOrdId {ids}{f' +{more}' if more > 0 else ''}]"
        if self.http_status is not None:
            text += f" (HTTP {self.http_status})"
        return text


class ExchangeError(BotkitError):
    """Something the exchange, or the road to it, answered or failed to answer."""

    def __init__(self, message: str, *, context: RequestContext | None = None) -> None:
        self.message = message
        self.context = context or RequestContext()
        super().__init__(f"{message} — {self.context}" if str(self.context) else message)


class TransientError(ExchangeError):
    """The request had no effect and may be repeated after a wait."""


class ConnectFailed(TransientError):
    """The request never left: name resolution, refused connection, connect timeout."""


class ServerUnavailable(TransientError):
    """HTTP 5xx, or an envelope code that says the system is busy or in maintenance."""


class RateLimited(TransientError):
    """Too many requests. ``retry_after`` is the wait the answer asked for, in seconds."""

    def __init__(
        self,
        message: str,
        *,
        retry_after: float | None = None,
        context: RequestContext | None = None,
    ) -> None:
        self.retry_after = retry_after
        super().__init__(message, context=context)


class TimestampExpired(TransientError):
    """The request's timestamp was outside the exchange's window: re-sync the clock, re-sign."""


class ReadTimedOut(TransientError):
    """A read-only request timed out or lost its connection; repeating it is harmless."""


class OutcomeUnknown(ExchangeError):
    """A write left and its fate is unknown. Look the orders up; never re-send blindly."""


class ExchangeRejected(ExchangeError):
    """The exchange answered with a non-200 code. Not retried."""

    def __init__(self, code: int, msg: str, *, context: RequestContext | None = None) -> None:
        self.code = code
        self.msg = msg
        super().__init__(f"exchange error {code}: {msg}", context=context)


class AuthFailed(ExchangeRejected):
    """Key, signature, passphrase, IP or permission refused (401 / 403)."""


class NotFoundError(ExchangeRejected):
    """The order, position or path asked for does not exist."""


class MalformedResponse(ExchangeError):
    """The answer is not JSON, lacks the envelope, or does not fit the models."""


class MalformedWriteResponse(MalformedResponse, OutcomeUnknown):
    """A write was accepted (HTTP 2xx) but its answer is unreadable: the orders may exist.

    Both a :class:`MalformedResponse` and an :class:`OutcomeUnknown`: resolve it by looking the
    client order ids up, never by sending again.
    """


class BatchMismatch(MalformedResponse):
    """A batch's results do not line up with its orders (count, position or clOrdId).

    The exchange may have placed some orders: the pipeline looks every clOrdId up, never guesses.
    """


class ReadFailed(ExchangeError):
    """A read of a cycle's snapshot failed past its retries (the one read-failure error).

    ``part`` names the read (``balance``, ``tickers``, ``instruments``, ...); ``cause`` is the
    exchange error of the last try (also ``__cause__``), and the message and ``context`` are
    its own, so the failed read reads as the exchange answered it (``read failed: HTTP 503 —
    GET /v3/account/balance``). Nothing was decided on it: the cycle ends as a failed read.
    """

    def __init__(self, part: str, cause: ExchangeError) -> None:
        self.part = part
        self.cause = cause
        super().__init__(cause.message, context=cause.context)


class JournalError(BotkitError):
    """The journal database cannot be opened, migrated or written."""


class DuplicateOrderId(JournalError):
    """An intent named a live client order id the journal already holds (or one twice): the
    write was refused whole, nothing of it written. The executor then asks which ids are
    known and journals the rest (a decision taken again is never journaled or sent twice)."""


class JournalLocked(JournalError):
    """Another live process holds the journal (one process per journal): refuse to start."""


class JournalUntrusted(JournalError):
    """The journal is corrupt (SQLite says malformed / not a database), or the file at its path
    is no longer the one this process opened (deleted, moved, replaced). Nothing it says can be
    believed and nothing written to it would be found again: the service stops."""


class PaperStateError(BotkitError):
    """The paper account's state file (``botkit.sim.state``) cannot be opened, read or written,
    or holds an account the simulator's config cannot continue (another currency, a symbol it
    no longer lists)."""


class PaperStateLocked(PaperStateError):
    """Another live process holds the paper account (one process per state file)."""


class StopRequested(BotkitError):
    """A stop was asked (SIGTERM / SIGINT) while waiting: a backoff, a retry, reconcile's grace.

    Raised by the service's interruptible sleep (:class:`botkit.clock.Stop`), so every wait
    that sleeps through the injected ``sleep`` ends at once. Nothing in flight is settled by it:
    orders whose fate is open stay unsettled and start-up reconcile looks them up.
    """
