"""Secrets at rest: files holding credentials must be private, and live trading never sends
them over plain HTTP to another machine.

* :func:`refuse_exposed` — a file holding a credential (``.env``, the settings TOML, the
  credentials file) that grants any permission to "other" users (mode ``o+r``, ``o+w`` or
  ``o+x``) is refused with the ``chmod`` that fixes it. Group access is allowed (``640`` with a
  group the service user is in is how ``/etc`` files are usually shared).
* :func:`read_credentials_file` — ``BOTKIT_CREDENTIALS_FILE``: ``KEY=value`` lines holding only
  ``BOTKIT_API_KEY``, ``BOTKIT_API_SECRET`` and ``BOTKIT_API_PASSPHRASE``; always checked.
* :func:`check_transport` — ``exchange = "live"`` over ``http://`` only to a loopback host
  (a local proxy or the simulator); anything else must be ``https://`` (TLS verified: the
  client never turns verification off).

No message ever holds a secret's value.
"""

from __future__ import annotations

import ipaddress
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from dotenv import dotenv_values

from botkit.errors import Location, SettingsError

__all__ = [
    "SECRET_FIELDS",
    "check_transport",
    "exposure",
    "holds_secret",
    "is_file",
    "read_credentials_file",
    "refuse_exposed",
]

SECRET_FIELDS = ("api_key", "api_secret", "api_passphrase")
_SECRET_VARS = {f"BOTKIT_{name.upper()}": name for name in SECRET_FIELDS}


def exposure(path: Path) -> str | None:
    """``"mode 0644"`` when ``path`` grants anything to other users, else None."""
    if os.name != "posix":
        return None
    mode = stat.S_IMODE(path.stat().st_mode)
    return f"mode {mode:04o}" if mode & 0o007 else None


def refuse_exposed(path: Path, what: str) -> None:
    """Raise a located :class:`SettingsError` when ``path`` (holding secrets) is exposed."""
    try:
        exposed = exposure(path)
    except OSError as exc:
        raise SettingsError(
            f"cannot read the {what}: {exc.strerror}", where=Location(file=str(path))
        ) from None
    if exposed:
        raise SettingsError(
            f"the {what} holds credentials and is readable by other users ({exposed})",
            where=Location(file=str(path)),
            hint=f"chmod 600 {path} (or 640 with a group the service user is in)",
        )


def holds_secret(values: Mapping[str, object], names: Iterable[str]) -> bool:
    """Whether ``values`` sets any of ``names`` (case-insensitive) to a non-empty value."""
    wanted = {n.lower() for n in names}
    return any(k.lower() in wanted and str(v or "").strip() for k, v in values.items())


def is_file(path: Path, what: str) -> bool:
    """``path.is_file()``, with a path the system refuses outright (a name too long, a
    component that is a file) a located :class:`SettingsError` instead of an OSError."""
    try:
        return path.is_file()
    except OSError as exc:
        raise SettingsError(
            f"cannot use the {what}: {exc.strerror or type(exc).__name__}",
            where=Location(file=str(path)[:120]),
            hint="fix the path",
        ) from None


def check_dotenv(env_file: str | Path | None) -> None:
    """Refuse a ``.env`` that holds a ``BOTKIT_API_*`` value and is exposed."""
    if env_file is None:
        return
    path = Path(env_file)
    if is_file(path, "environment file") and holds_secret(dotenv_values(path), _SECRET_VARS):
        refuse_exposed(path, "environment file")


def check_toml(path: Path, data: Mapping[str, object]) -> None:
    """Refuse a settings file that holds an ``api_*`` value and is exposed."""
    if is_file(path, "settings file") and holds_secret(data, SECRET_FIELDS):
        refuse_exposed(path, "settings file")


def read_credentials_file(path: Path) -> dict[str, str]:
    """The credentials in ``path`` as ``{"api_key": ..., ...}`` (only the ones it sets)."""
    if not is_file(path, "credentials file"):
        raise SettingsError(
            "credentials file not found",
            where=Location(file=str(path)),
            hint="fix BOTKIT_CREDENTIALS_FILE or create the file (mode 600)",
        )
    refuse_exposed(path, "credentials file")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"cannot read the credentials file ({type(exc).__name__})",
            where=Location(file=str(path)),
        ) from None
    found: dict[str, str] = {}
    allowed = ", ".join(_SECRET_VARS)
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.removeprefix("export ").partition("=")
        name = name.strip().upper()
        if not eq or not name:
            raise SettingsError(
                "not a NAME=value line",
                where=Location(file=str(path), line=number),
                hint=f"write one of {allowed} = value per line",
            )
        if name not in _SECRET_VARS:
            raise SettingsError(
                f"{name} does not belong here: the credentials file holds only {allowed}",
                where=Location(file=str(path), line=number),
                hint="put other settings in the settings file or the environment",
            )
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        found[_SECRET_VARS[name]] = value
    return found


_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_transport(base_url: str | None) -> None:
    """Refuse plain ``http://`` to anything but a loopback host (credentials would travel in
    clear: request signatures, and the passphrase header of the pf scheme)."""
    if base_url is None:
        return
    parts = urlsplit(base_url)
    if parts.scheme.lower() == "http" and not _is_loopback(parts.hostname or ""):
        raise SettingsError(
            f"exchange=live over plain http:// to {parts.hostname or base_url}",
            where=Location(field="BOTKIT_BASE_URL"),
            hint="use https:// (http:// is accepted only for a loopback host such as 127.0.0.1)",
        )
