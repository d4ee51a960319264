"""An operator's controls, shared by the CLI and ``botkit serve``'s control endpoints.

* **Stop controls** (:func:`switch`): the kill switch and the halt are files
  (``kill_switch_file`` / ``halt_file``, checked by the service at every cycle). Engaging one
  writes its file with who asked and when; the service journals the change (event
  ``controls``, whose text carries that line) at its next cycle. ``botkit control`` and
  ``POST /api/control/kill-switch`` / ``halt`` both come here.
* **Cancel and flatten** (:func:`act`): :class:`~botkit.runner.manual.ManualRun` through the
  service's own assembly — what ``botkit cancel`` / ``flatten`` run. ``botkit serve`` holds
  neither the journal nor the paper account (the service does), so it files a request in the
  journal's request folder (:func:`file_request`); the service runs each at the end of its
  next cycle (:func:`run_requests`), journals who asked (event ``operator``), and writes the
  outcome beside it for the API to answer (:func:`request_state`).
"""

from __future__ import annotations

import json
import os
import re
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from loguru import logger

from botkit.clock import wall_ms
from botkit.errors import BotkitError, Location, SettingsError, UsageError
from botkit.pipeline import GuardSettings
from botkit.runner.killswitch import controls
from botkit.settings import Settings

if TYPE_CHECKING:
    from botkit.app.service import Assembly
    from botkit.runner.manual import Result, Selection

__all__ = [
    "Action",
    "Control",
    "ControlRefused",
    "act",
    "file_request",
    "request_state",
    "requests_dir",
    "result_lines",
    "run_requests",
    "selection_of",
    "switch",
]

Control = Literal["kill_switch", "halt"]
Action = Literal["cancel", "flatten"]
_ID = re.compile(r"^[0-9]{13}-[0-9a-f]{8}$")
REQUEST_TTL_MS = 10 * 60_000
"""A filed request the service has not run within this long is refused as expired, never run:
a flatten filed while the service was down must not fire hours later at its restart."""
ANSWER_KEEP_MS = 7 * 86_400_000
"""How long answered requests stay in the folder (for ``GET /api/control/requests/ID``)."""
_WHO = re.compile(r"[^A-Za-z0-9_.@:-]")


class ControlRefused(BotkitError):
    """A control that cannot be applied as asked (no control file configured, held on by a
    setting, halt engaged for a cancel): one line saying what to do."""


def _who(by: str) -> str:
    return _WHO.sub("?", by)[:60] or "?"


def switch(settings: Settings, which: Control, *, engage: bool, by: str) -> str:
    """Engage or release a stop control by its file; returns what was done (one line).

    Engaging writes the file (mode 600) with ``engaged by BY at TIME``, which the service
    journals with the change at its next cycle; releasing removes it. A control held on by its
    setting (``kill_switch = true``) cannot be released here, and without a control file there
    is nothing to switch: both are :class:`ControlRefused`."""
    guards = GuardSettings.from_settings(settings)
    name = "kill switch" if which == "kill_switch" else "halt"
    setting = guards.kill_switch if which == "kill_switch" else guards.halt
    file = guards.kill_switch_file if which == "kill_switch" else guards.halt_file
    if not file:
        example = "/etc/botkit/STOP" if which == "kill_switch" else "/etc/botkit/HALT"
        raise ControlRefused(
            f"no {which}_file in the settings: the {name} can only be switched through its"
            f" file — set {which}_file (e.g. {example})"
        )
    if setting and not engage:
        raise ControlRefused(
            f"the {name} is held on by the setting {which} = true — set it false (and reload)"
        )
    path = Path(file)
    who = _who(by)
    when = datetime.fromtimestamp(wall_ms() / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    try:
        if engage:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(f"engaged by {who} at {when}\n")
        else:
            path.unlink()
    except FileNotFoundError:  # released already: say so rather than claim a release
        return f"{name} was not engaged: nothing to release"
    except OSError as exc:
        raise SettingsError(
            f"cannot {'write' if engage else 'remove'} the {name} file"
            f" ({exc.strerror or type(exc).__name__})",
            where=Location(field=f"{which}_file", file=str(path)),
            hint="check the folder exists and this user may write it",
        ) from None
    done = f"{name} {'engaged' if engage else 'released'} by {who}"
    logger.warning("control: {} (file {})", done, path)
    return done


def state(settings: Settings) -> dict[str, str | None]:
    ctl = controls(GuardSettings.from_settings(settings))
    return {"halt": ctl.halt, "kill_switch": ctl.kill_switch}


# --- cancel and flatten ----------------------------------------------------------------------


def selection_of(
    parts: Assembly,
    command: str,
    *,
    strategy: str | None,
    symbol: str | None,
    positions: bool,
) -> Selection:
    """The selection of a cancel / flatten, checked against the exchange and the strategy
    files (a :class:`UsageError` saying what to do otherwise)."""
    from botkit.runner.manual import Selection

    if symbol is not None:
        known = parts.runner.reader.instruments(parts.runner.now_ms())
        if symbol not in known:
            from botkit.rules.hints import did_you_mean

            names = sorted(known)
            upper = {name.upper(): name for name in names}.get(symbol.upper())
            hint = f"did you mean '{upper}'?" if upper else did_you_mean(symbol, names)
            raise UsageError(
                f"botkit {command}: no instrument {symbol!r} at the exchange — {hint}"
                " ('botkit exchange instruments' lists them)"
            )
        return Selection(symbol=symbol)
    if strategy is not None:
        parts.runner.store.refresh(None)
        loaded = parts.runner.store.strategies.get(strategy)
        if loaded is None and positions:
            raise UsageError(
                f"botkit {command}: no strategy {strategy!r} is loaded from"
                f" {parts.runner.store.paths[0]} — its positions are not known; use --symbol"
            )
        if loaded is None and (twin := _tag_owner(strategy, parts)) is not None:
            from botkit.rules.ids import strategy_tag

            raise UsageError(
                f"botkit {command}: no strategy {strategy!r} is loaded, and its client order id"
                f" tag ({strategy_tag(strategy)}) is that of {twin!r}: the orders it would"
                f" select are {twin}'s — use --strategy {twin} (or --symbol)"
            )
        symbols = None if loaded is None else frozenset(loaded.symbols)
        return Selection(strategy=strategy, symbols=symbols)
    return Selection()


def _tag_owner(name: str, parts: Assembly) -> str | None:
    """Another strategy (loaded now, or known to the journal) whose client order id tag is
    ``name``'s: the orders a selection by ``name`` finds are that one's (a strategy of that name
    is refused from loading for it: :func:`botkit.rules.ids.twin_clash`)."""
    from botkit.rules.ids import strategy_tag, tag_twin

    known = set(parts.runner.store.strategies)
    known |= {record.name for record in parts.journal.strategies(strategy_tag)}
    return tag_twin(name, sorted(known))


def unknown_strategy(name: str, parts: Assembly) -> str:
    """ "" when ``name`` is a strategy loaded now or known to the journal; else what to say (a
    misspelt name must not pass as "nothing to do")."""
    import difflib

    from botkit.rules.ids import strategy_tag

    known = set(parts.runner.store.strategies)
    known |= {record.name for record in parts.journal.strategies(strategy_tag)}
    if name in known:
        return ""
    close = difflib.get_close_matches(name, sorted(known), n=1)
    hint = f" — did you mean {close[0]!r}?" if close else " — check the name"
    return f"no strategy {name!r} is loaded or known to the journal{hint}"


def result_lines(command: str, result: Result, dry: bool) -> list[str]:
    """What a cancel / flatten did, one line per thing (the CLI prints them, the API answers
    them)."""
    from botkit.journal import Outcome

    lines: list[str] = []
    if result.cancel is not None:
        lines.append(f"{'dry run: would ' if dry else ''}{result.cancel.detail}")
    for row in result.rows:
        code = f" {row.code}" if row.code not in (None, 200) else ""
        why = f" — {'; '.join(row.reasons)}" if row.reasons else ""
        outcome = row.outcome.value if row.outcome is not None else "unsettled"
        msg = f" {row.msg}" if row.msg and row.outcome is not Outcome.ACCEPTED else ""
        lines.append(
            f"{row.cl_ord_id} {row.symbol} {row.side} {row.sz or row.intent_sz} MARKET"
            f" reduce-only: {outcome}{code}{msg}{why}"
        )
    lines.extend(f"still open: {o.clOrdId or o.ordId} {o.symbol}" for o in result.still_open)
    lines.extend(f"still held: {p.symbol} {p.posSide.value} {p.qty}" for p in result.still_held)
    if dry:
        lines.append(f"dry run: botkit {command} sent nothing (dry_run is set)")
    elif result.ok:
        lines.append(f"botkit {command}: done")
    else:
        lines.append(f"botkit {command}: NOT complete — see above and 'botkit journal tail'")
    return lines


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a filed request came to: ``done`` (``ok``: nothing of the selection left),
    ``refused`` (halt engaged, unknown strategy or symbol) or ``failed``."""

    status: Literal["done", "refused", "failed"]
    ok: bool
    lines: tuple[str, ...]


def act(
    parts: Assembly,
    action: Action,
    *,
    strategy: str | None = None,
    symbol: str | None = None,
    by: str,
) -> Outcome:
    """Cancel or flatten the selection now, in a process holding the journal (the service
    running a filed request): journaled as ``@operator`` with who asked. Refused under the
    halt, as ``botkit cancel`` / ``flatten`` are."""
    halt = controls(parts.runner.guards).halt
    if halt is not None:
        return Outcome("refused", False, (f"botkit {action}: nothing sent — {halt}",))
    flatten = action == "flatten"
    selection = selection_of(parts, action, strategy=strategy, symbol=symbol, positions=flatten)
    from botkit.runner.manual import OPERATOR

    parts.journal.record_event(
        "operator",
        f"{action} ({selection}) asked by {_who(by)} through botkit serve",
        strategy=OPERATOR,
        rule=action,
        detail={"by": _who(by), "selection": str(selection)},
    )
    manual = parts.manual()
    preview = manual.preview(selection, positions=flatten)
    if preview.empty:
        what = "open order or position" if flatten else "open order"
        nothing = f"botkit {action}: no {what} for {selection}"
        if strategy is not None and (unknown := unknown_strategy(strategy, parts)):
            return Outcome("refused", False, (f"{nothing}; {unknown}",))
        return Outcome("done", True, (nothing,))
    result = manual.flatten(selection, preview) if flatten else manual.cancel(selection, preview)
    return Outcome(
        "done",
        result.ok or parts.dry,
        (*preview.lines(), *result_lines(action, result, parts.dry)),
    )


# --- the request folder ------------------------------------------------------------------------


def requests_dir(settings: Settings) -> Path:
    """Where ``botkit serve`` files cancel / flatten requests for the service: beside the
    journal (``JOURNAL.requests/``)."""
    journal = Path(settings.journal)
    return journal.with_name(journal.name + ".requests")


def file_request(
    settings: Settings,
    action: Action,
    *,
    strategy: str | None = None,
    symbol: str | None = None,
    by: str,
) -> str:
    """File a cancel / flatten for the service's next cycle; returns the request's id."""
    folder = requests_dir(settings)
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        request_id = f"{wall_ms():013d}-{secrets.token_hex(4)}"
        body = {
            "id": request_id,
            "action": action,
            "strategy": strategy,
            "symbol": symbol,
            "by": _who(by),
            "filed_ms": wall_ms(),
        }
        tmp = folder / f".{request_id}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(body, out)
        tmp.replace(folder / f"{request_id}.json")
    except OSError as exc:
        raise SettingsError(
            f"cannot file the request ({exc.strerror or type(exc).__name__})",
            where=Location(field="journal", file=str(folder)),
            hint="botkit serve must be able to write beside the journal",
        ) from None
    logger.warning("control: {} ({}) filed by {} as request {}", action, body, by, request_id)
    return request_id


def request_state(settings: Settings, request_id: str) -> dict[str, Any] | None:
    """A filed request: ``pending`` until the service ran it, then its outcome; ``None`` for
    an id never filed (or a malformed one)."""
    if not _ID.match(request_id):
        return None
    folder = requests_dir(settings)
    done = folder / f"{request_id}.done.json"
    try:
        if done.exists():
            value: dict[str, Any] = json.loads(done.read_text(encoding="utf-8"))
            return value
        pending = folder / f"{request_id}.json"
        if pending.exists():
            return {**json.loads(pending.read_text(encoding="utf-8")), "status": "pending"}
    except (OSError, ValueError):
        return None
    return None


class _Expired(Exception):
    """A filed request older than :data:`REQUEST_TTL_MS`."""


def _forget_old_answers(folder: Path) -> None:
    cutoff = wall_ms() - ANSWER_KEEP_MS
    for done in folder.glob("*.done.json"):
        try:
            if done.stat().st_mtime * 1000 < cutoff:
                done.unlink()
        except OSError:
            continue


def run_requests(parts: Assembly, settings: Settings) -> int:
    """Run the requests ``botkit serve`` filed (oldest first), each journaled with who asked;
    one older than :data:`REQUEST_TTL_MS` is refused as expired. Returns how many were
    answered. Never raises: a request that fails is answered ``failed`` and the
    service goes on. The answers pass through the journal's redaction (``botkit serve``
    serves them): an exchange error quoting a credential shows it as ``***``."""
    from botkit.app.service import secrets_of
    from botkit.redaction import Redactor

    redact = Redactor(secrets_of(settings))
    folder = requests_dir(settings)
    try:
        filed = sorted(p for p in folder.glob("*.json") if not p.name.endswith(".done.json"))
        if filed:
            _forget_old_answers(folder)
    except OSError:
        return 0
    for path in filed:
        body: dict[str, Any] = {}
        try:
            loaded = json.loads(path.read_text(encoding="utf-8"))
            body = loaded if isinstance(loaded, dict) else {}
            action = body.get("action")
            if action not in ("cancel", "flatten"):
                raise ValueError(action)
            age_ms = wall_ms() - int(body.get("filed_ms", 0))
            if age_ms > REQUEST_TTL_MS:
                raise _Expired(
                    f"expired: filed {age_ms // 1000} s ago, not run — the service runs a request"
                    f" within {REQUEST_TTL_MS // 60_000} minutes or never; file it again"
                )
            outcome = act(
                parts,
                action,
                strategy=body.get("strategy"),
                symbol=body.get("symbol"),
                by=str(body.get("by", "?")),
            )
        except (UsageError, _Expired) as exc:
            outcome = Outcome("refused", False, (str(exc),))
        except Exception as exc:  # a request must never stop the service
            logger.exception("control: request {} failed", path.name)
            outcome = Outcome("failed", False, (f"{type(exc).__name__}: {exc}",))
        answer = {
            **body,
            "id": path.name.removesuffix(".json"),
            "status": outcome.status,
            "ok": outcome.ok,
            "lines": [redact(line) for line in outcome.lines],
            "finished_ms": wall_ms(),
        }
        try:
            done = path.with_name(path.name.removesuffix(".json") + ".done.json")
            done.write_text(json.dumps(answer), encoding="utf-8")
            os.chmod(done, 0o600)
            path.unlink()
        except OSError as exc:
            logger.error("control: cannot answer request {}: {}", path.name, exc)
            return len(filed)
        logger.warning("control: request {} {}: {}", answer["id"], outcome.status, outcome.lines)
    return len(filed)
