"""The simulator checks signed requests as the exchange does: key, signature, passphrase, clock.

Both schemes of :mod:`botkit.exchange.signing` are verified (``AuthConfig.schemes`` says which are
accepted): ``pf`` (``PF-API-*`` headers, string ``ts + METHOD + path[?rawquery] + body``) and
``v3`` (``key`` / ``signTimestamp`` / ``signature``, string ``METHOD\\npath\\nparams`` where the
parameter string is rebuilt from the received query with :func:`signing.encode_query`, or
``requestBody=<raw body>&signTimestamp=<ts>``). Signatures and passphrases are compared with
:func:`hmac.compare_digest`.

Answers (one wording for both schemes; the simulator always uses ``msg``, never ``message``):

* no signature headers, a scheme not accepted, an unknown key, a bad signature or a wrong
  passphrase → HTTP 401, envelope code 401;
* a timestamp that is not integer milliseconds → HTTP 400, code 400;
* the clock rule: ``|timestamp - server now| >= tolerance_ms`` → HTTP 400, code 400,
  ``"Request expired: signTimestamp is more than 5000 ms from system time"`` (the configured
  tolerance in the text). The clock is checked after the signature, so an expired answer means the
  credentials were good.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import parse_qsl

from pydantic import SecretStr

from botkit.errors import UsageError
from botkit.exchange import signing
from botkit.sim.config import ApiKeyConfig, AuthConfig

__all__ = [
    "AuthRefused",
    "Authenticator",
    "effective_auth",
    "expired_message",
]


class AuthRefused(Exception):
    """A request the simulator refuses before it reaches the engine (status, code, msg)."""

    def __init__(self, http_status: int, code: int, msg: str) -> None:
        super().__init__(msg)
        self.http_status = http_status
        self.code = code
        self.msg = msg


def expired_message(tolerance_ms: int) -> str:
    """The clock-rule answer's text, with the configured tolerance."""
    return f"Request expired: signTimestamp is more than {tolerance_ms} ms from system time"


@dataclass(frozen=True, slots=True)
class _Credential:
    secret: str
    passphrase: str


def _unauthorized(reason: str) -> AuthRefused:
    return AuthRefused(401, 401, f"Unauthorized: {reason}")


def _same(expected: str, received: str) -> bool:
    return hmac.compare_digest(expected.encode(), received.encode())


class Authenticator:
    """Verifies one request's signature headers against the configured keys and clock rule."""

    def __init__(self, auth: AuthConfig) -> None:
        self._keys = {
            k.key: _Credential(k.secret.get_secret_value(), k.passphrase.get_secret_value())
            for k in auth.keys
        }
        self.schemes: frozenset[str] = frozenset(auth.schemes)
        self.tolerance_ms = auth.tolerance_ms

    def __repr__(self) -> str:
        return (
            f"Authenticator(keys={len(self._keys)}, schemes={sorted(self.schemes)}, "
            f"tolerance_ms={self.tolerance_ms})"
        )

    def verify(
        self,
        method: str,
        path: str,
        raw_query: str,
        headers: Mapping[str, str],
        body: bytes,
        now_ms: int,
    ) -> str:
        """Check a request (``headers`` with lower-case names); returns the key, or raises
        :class:`AuthRefused`."""
        if "pf-api-key" in headers:
            scheme = "pf"
            key, ts_text, sig = (
                headers["pf-api-key"],
                headers.get("pf-api-timestamp", ""),
                headers.get("pf-api-sign", ""),
            )
        elif "key" in headers or "signature" in headers:
            scheme = "v3"
            key, ts_text, sig = (
                headers.get("key", ""),
                headers.get("signtimestamp", ""),
                headers.get("signature", ""),
            )
        else:
            raise _unauthorized("signature headers missing (key, signTimestamp, signature)")
        if scheme not in self.schemes:
            accepted = ", ".join(sorted(self.schemes)) or "none"
            raise _unauthorized(f"signing scheme {scheme} is not accepted (accepted: {accepted})")
        credential = self._keys.get(key)
        if credential is None:
            raise _unauthorized("unknown API key")
        ts_name = "PF-API-TIMESTAMP" if scheme == "pf" else "signTimestamp"
        try:
            timestamp = int(ts_text)
        except ValueError:
            raise AuthRefused(
                400, 400, f"Param error: {ts_name} must be integer milliseconds"
            ) from None
        text = body.decode("utf-8", errors="replace")
        if scheme == "pf":
            message = signing.pf_string_to_sign(timestamp, method, path, raw_query, text)
        else:
            params = dict(parse_qsl(raw_query, keep_blank_values=True))
            message = signing.v3_string_to_sign(timestamp, method, path, params, text)
        if not _same(signing.sign(credential.secret, message), sig):
            raise _unauthorized("signature does not match")
        if scheme == "pf" and not _same(
            credential.passphrase, headers.get("pf-api-passphrase", "")
        ):
            raise _unauthorized("wrong passphrase")
        if abs(timestamp - now_ms) >= self.tolerance_ms:
            raise AuthRefused(400, 400, expired_message(self.tolerance_ms))
        return key


def effective_auth(
    auth: AuthConfig,
    *,
    key: str | None = None,
    secret: str | None = None,
    passphrase: str | None = None,
) -> AuthConfig:
    """The keys a simulator accepts: the given credential alone when one is given (flags or
    ``BOTKIT_API_*``), else those of the config. A key needs its secret; a missing passphrase
    falls back to the simulator's default."""
    if not key and not secret:
        return auth
    if not key or not secret:
        missing = "secret" if key else "key"
        raise UsageError(
            f"an API {missing} is missing: give both --key and --secret "
            "(or BOTKIT_API_KEY and BOTKIT_API_SECRET), or neither for the simulator's defaults"
        )
    credential = ApiKeyConfig(
        key=key,
        secret=SecretStr(secret),
        passphrase=SecretStr(passphrase) if passphrase else AuthConfig().keys[0].passphrase,
    )
    return auth.model_copy(update={"keys": [credential]})
