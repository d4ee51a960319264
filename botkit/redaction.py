"""The one redaction of credentials, shared by the log sink and the journal.

:class:`Redactor` holds the configured key, secret and passphrase and replaces every form of each
(as is, percent-encoded, JSON-escaped) by ``***`` in any text. The log sink
(:class:`botkit.service.logs.RedactingSink`) passes every formatted record through it; the
journal (:class:`botkit.journal.Journal`, ``secrets=``) passes every text it stores through it —
exchange messages, errors, events, request bodies — so a credential an exchange echoes back never
reaches the disk. Secrets shorter than 4 characters are ignored: they would redact ordinary words.
"""

from __future__ import annotations

from collections.abc import Iterable
from ipaddress import ip_address
from urllib.parse import parse_qsl, quote, unquote, urlsplit

__all__ = ["MIN_SECRET_LENGTH", "REDACTED", "Redactor", "redact", "url_secrets"]

REDACTED = "***"
MIN_SECRET_LENGTH = 4


def _variants(secret: str) -> set[str]:
    """The forms a secret may take in text: as is, percent-encoded, JSON-escaped."""
    forms = {secret, quote(secret, safe=""), secret.replace("\\", "\\\\").replace('"', '\\"')}
    return {f for f in forms if f}


class Redactor:
    """Replaces every form of every (non-trivial) secret by ``***``; falsy when it has none."""

    __slots__ = ("_forms",)

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if secret and len(secret) >= MIN_SECRET_LENGTH:
                forms |= _variants(secret)
        # longest first: a form that contains another is replaced whole
        self._forms = tuple(sorted(forms, key=lambda f: (-len(f), f)))

    def __bool__(self) -> bool:
        return bool(self._forms)

    def __repr__(self) -> str:
        return f"Redactor({len(self._forms)} forms)"  # never the secrets themselves

    def found_in(self, text: str) -> bool:
        """Whether any form of any secret occurs in ``text`` (what :meth:`__call__` would
        replace something in)."""
        return any(form in text for form in self._forms)

    def __call__(self, text: str) -> str:
        for form in self._forms:
            if form in text:
                text = text.replace(form, REDACTED)
        return text


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every (non-trivial) secret replaced by ``***``."""
    return Redactor(secrets)(text)


def url_secrets(url: str) -> list[str]:
    """The secrets a service URL (an Apprise notification URL) embeds: the URL itself, its
    password, and every other part but the scheme — user, host (``tgram://BOTTOKEN/CHAT`` puts
    the token there), each path segment and each query value — that looks like a token (see
    :func:`_token_like`), so a message quoting any of them is redacted. A plain word of the URL
    (``json://host/botkit/alerts``) is no secret: the redactor replaces every occurrence of a
    secret in every log line and journal text, and would otherwise blank ``alerts`` inside a
    strategy's name. Parts shorter than :data:`MIN_SECRET_LENGTH` are ignored by the redactor."""
    url = url.strip()
    found = [url]
    try:
        parts = urlsplit(url)
        userinfo, _at, hostport = parts.netloc.rpartition("@")
        found += [p for p in (parts.username, parts.password, userinfo) if p]
        host = hostport.rsplit(":", 1)[0] if not hostport.endswith("]") else hostport
        if not _plain_host(host):  # tgram://BOT:TOKEN/CHAT: the "host" (and "port") is a token
            found += [hostport, *hostport.split(":")]
    except ValueError:  # not even a URL: the whole text is the secret
        return found
    found += [unquote(p) for p in parts.path.split("/") if p]
    found += [v for _k, v in parse_qsl(parts.query, keep_blank_values=False)]
    if parts.fragment:
        found.append(parts.fragment)
    password = parts.password
    return [f for f in dict.fromkeys(found) if f and (f in (url, password) or _token_like(f))]


def _token_like(part: str) -> bool:
    """A URL part that may be a credential: it holds a digit (tokens, webhook and chat ids,
    ``hook-TOKEN-5f3a9c``) or is long (16 characters or more); words such as ``botkit``,
    ``alerts`` or ``example.com`` are not."""
    return any(c.isdigit() for c in part) or len(part) >= 16


def _plain_host(host: str) -> bool:
    """An address that is no secret: an IP address or ``localhost``."""
    if host.lower() == "localhost":
        return True
    try:
        ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
