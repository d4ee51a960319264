"""Notifications: what the service tells an operator's phone, chat or mailbox, through Apprise.

:class:`Notifications` is a background worker with a bounded queue. The loop hands it
:class:`Note` values (:meth:`Notifications.post` never blocks: a full queue drops the note and
counts it), the worker groups what waits (forty fills queued together are one message per
target), sends each group to the targets that asked for its event, and counts what was sent,
what failed and what was dropped in the service's Prometheus metrics. A failing target is logged
once (its scheme and position, never its URL: Apprise URLs embed tokens) until it works again;
nothing is raised into the loop. :meth:`Notifications.close` flushes with a bounded wait.

The composition root (:mod:`botkit.app.notifications`) turns what the loop sees into notes.
"""

from __future__ import annotations

import contextlib
import difflib
import logging
import queue
import threading
import time
import warnings
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loguru import logger

from botkit.errors import Location, SettingsError
from botkit.settings import NOTIFY_EVENTS, NotifyTarget

if TYPE_CHECKING:
    from botkit.service.metrics import Metrics

__all__ = [
    "MAX_LINES",
    "Note",
    "Notifications",
    "Send",
    "Target",
    "apprise_targets",
    "group",
]

MAX_LINES = 20
"""Lines one grouped message lists; the rest is counted ("... and 12 more")."""

Send = Callable[[str, str], bool]
"""Sends (title, body) to one target; False (or an exception) when it failed."""


@dataclass(frozen=True, slots=True)
class Note:
    """One thing to tell: its event (a key of :data:`~botkit.settings.NOTIFY_EVENTS`) and one
    or more lines (forty fills are forty lines of one note, or forty notes grouped later)."""

    event: str
    lines: tuple[str, ...]
    title: str = ""


@dataclass(frozen=True, slots=True)
class Target:
    """Where notes go: a label safe to log (``notify[0] (json)``), its events and its sender."""

    label: str
    events: frozenset[str]
    send: Send = field(repr=False)


def apprise_targets(targets: Sequence[NotifyTarget], *, timeout_s: float = 10.0) -> list[Target]:
    """One :class:`Target` per configured URL, each an Apprise object holding that URL alone.
    A URL Apprise does not accept is one :class:`SettingsError` naming its position and scheme
    (never the URL)."""
    if not targets:
        return []
    with warnings.catch_warnings():  # Apprise's plugins import imghdr (deprecated on 3.11+)
        warnings.simplefilter("ignore", DeprecationWarning)
        return _apprise_targets(targets, timeout_s)


def _apprise_targets(targets: Sequence[NotifyTarget], timeout_s: float) -> list[Target]:
    try:
        import apprise
    except ImportError:  # the optional extra is not installed
        raise SettingsError(
            "notifications are configured but Apprise is not installed",
            where=Location(field="notify"),
            hint="pip install 'botkit[notify]' (or remove the [[notify]] tables)",
        ) from None
    logging.getLogger("apprise").disabled = True  # its own log lines quote URLs: we log ours
    out: list[Target] = []
    for index, target in enumerate(targets):
        url = target.url.get_secret_value()
        scheme = url.split(":", 1)[0].lower()
        label = f"notify[{index}] ({scheme})"
        sender = apprise.Apprise()
        if not sender.add(_with_timeouts(url, timeout_s)):
            close = difflib.get_close_matches(scheme, _schemes(sender), n=1)
            raise SettingsError(
                f"Apprise does not accept this {scheme}:// URL",
                where=Location(field=f"notify[{index}].url"),
                hint=(f"did you mean {close[0]}://? " if close else "")
                + "see Apprise's list of services for the URL's form",
            )

        def send(title: str, body: str, _a: apprise.Apprise = sender) -> bool:
            return bool(_a.notify(title=title, body=body))

        out.append(Target(label, frozenset(target.events), send))
    return out


def _schemes(sender: object) -> list[str]:
    details = sender.details()  # type: ignore[attr-defined]
    found: list[str] = []
    for schema in details.get("schemas", []):
        for key in ("protocols", "secure_protocols"):
            value = schema.get(key) or ()
            found += [value] if isinstance(value, str) else list(value)
    return found


def _with_timeouts(url: str, timeout_s: float) -> str:
    """Apprise's connect (``cto``) and read (``rto``) timeouts, unless the URL sets them."""
    extra = [f"{k}={timeout_s:g}" for k in ("cto", "rto") if f"{k}=" not in url]
    if not extra:
        return url
    return url + ("&" if "?" in url else "?") + "&".join(extra)


def group(notes: Iterable[Note]) -> list[Note]:
    """Notes of the same event merged into one, in the order each event first came; a group
    of more than :data:`MAX_LINES` lines lists the first ones and counts the rest."""
    merged: dict[str, list[str]] = {}
    titles: dict[str, list[str]] = {}
    for note in notes:
        merged.setdefault(note.event, []).extend(note.lines)
        titles.setdefault(note.event, []).append(note.title)
    out: list[Note] = []
    for event, lines in merged.items():
        shown = tuple(lines[:MAX_LINES])
        if len(lines) > MAX_LINES:
            shown += (f"... and {len(lines) - MAX_LINES} more",)
        named = [t for t in titles[event] if t]
        title = (
            named[0]
            if len(titles[event]) == 1 and named
            else f"botkit: {len(lines)} {_plural(event, len(lines))}"
        )
        out.append(Note(event, shown, title))
    return out


_NOUNS = {
    "fill": ("fill", "fills"),
    "refused": ("order refused by the exchange", "orders refused by the exchange"),
    "guard": ("order refused by a guard", "orders refused by a guard"),
    "kill_switch": ("kill switch change", "kill switch changes"),
    "cycle_failed": ("cycle failure", "cycle failures"),
    "read_failed": ("read failure", "read failures"),
    "unsettled": ("unsettled order", "unsettled orders"),
    "reload_error": ("reload error", "reload errors"),
}


def _plural(event: str, count: int) -> str:
    one, many = _NOUNS.get(event, (event.replace("_", " "), event.replace("_", " ")))
    return one if count == 1 else many


_STOP = object()


class Notifications:
    """The notification worker: :meth:`post` from the loop, sent from its own thread."""

    def __init__(
        self,
        targets: Sequence[Target],
        *,
        metrics: Metrics | None = None,
        queue_size: int = 1000,
    ) -> None:
        self.targets = tuple(targets)
        self.metrics = metrics
        self.events = frozenset().union(*(t.events for t in self.targets))
        self._queue: queue.Queue[object] = queue.Queue(maxsize=queue_size)
        self._failing: set[str] = set()
        self._dropped_logged = False
        self.sent = 0
        self.failed = 0
        self.dropped = 0
        self.idle = threading.Event()
        """Set whenever the worker has nothing left to send (tests wait on it)."""
        self.idle.set()
        self._thread = threading.Thread(target=self._work, name="botkit-notify", daemon=True)
        if self.targets:
            self._thread.start()

    def wants(self, event: str) -> bool:
        """Does any target ask for ``event``? (Lets the caller skip work nobody reads.)"""
        return event in self.events

    def post(self, *notes: Note) -> None:
        """Queue ``notes`` for sending; never blocks. A full queue drops them (counted, and
        logged once)."""
        for note in notes:
            if note.event not in NOTIFY_EVENTS:
                raise ValueError(f"unknown notification event {note.event!r}")
            if not self.wants(note.event):
                continue
            self.idle.clear()
            try:
                self._queue.put_nowait(note)
            except queue.Full:
                self.dropped += 1
                if self.metrics is not None:
                    self.metrics.notify_dropped.inc()
                if not self._dropped_logged:
                    self._dropped_logged = True
                    logger.warning(
                        "notification queue full ({} waiting): new notifications are dropped"
                        " (counted in botkit_notifications_dropped_total)",
                        self._queue.maxsize,
                    )
                if self._queue.empty():
                    self.idle.set()

    def close(self, wait_s: float = 5.0) -> None:
        """Send what waits, waiting at most ``wait_s`` seconds; what is left then is lost
        (said in the log) and the worker (a daemon thread) ends with the process."""
        if not self._thread.is_alive():
            return
        deadline = time.monotonic() + wait_s
        with contextlib.suppress(queue.Full):
            self._queue.put(_STOP, timeout=wait_s)
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            left = self._queue.qsize()
            logger.warning("stopped with {} notification(s) not sent (a target is slow)", left)

    def _work(self) -> None:
        while True:
            first = self._queue.get()
            batch = [first]
            while True:  # what is queued now goes with it: a burst is one message
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            stop = any(item is _STOP for item in batch)
            notes = [item for item in batch if isinstance(item, Note)]
            for note in group(notes):
                self._deliver(note)
            if self._queue.empty():
                self.idle.set()
            if stop:
                return

    def _deliver(self, note: Note) -> None:
        body = "\n".join(note.lines)
        for target in self.targets:
            if note.event not in target.events:
                continue
            try:
                ok = target.send(note.title or f"botkit: {note.event}", body)
                why = "the service did not accept it"
            except Exception as exc:  # a target's failure must never reach the loop
                ok, why = False, type(exc).__name__
            if ok:
                self.sent += 1
                if self.metrics is not None:
                    self.metrics.notify_sent.labels(target=target.label).inc()
                if target.label in self._failing:
                    self._failing.discard(target.label)
                    logger.info("notifications to {} work again", target.label)
                continue
            self.failed += 1
            if self.metrics is not None:
                self.metrics.notify_failed.labels(target=target.label).inc()
            if target.label not in self._failing:  # once, until it works again
                self._failing.add(target.label)
                logger.warning(
                    "notification to {} failed ({}); further failures are counted in"
                    " botkit_notifications_failed_total",
                    target.label,
                    why,
                )
