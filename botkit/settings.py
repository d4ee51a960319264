"""Settings: ``BOTKIT_*`` environment variables, a ``.env`` file and ``configs/botkit.toml``.

Precedence, highest first: keyword overrides given to :func:`load_settings`, the environment,
the ``.env`` file, the TOML settings file (``configs/botkit.toml``, or the path in
``BOTKIT_CONFIG``), then the defaults below. The settings file is TOML (stdlib ``tomllib``
through pydantic-settings' ``TomlConfigSettingsSource``) so it cannot be mistaken for a
strategy file, which is YAML.

:func:`load_settings` is the one entry point for programs: every problem becomes a
:class:`~botkit.errors.SettingsError` naming the variable (``BOTKIT_EXCHANGE``) or the file and
line (``configs/botkit.toml:3``) and the fix. Secrets are ``SecretStr``: they never appear in
``repr``, ``str``, :meth:`Settings.describe` or an error message.

To add a setting, add a field to :class:`Settings` (with a ``description``); its environment
variable is ``BOTKIT_<NAME>``, its TOML key is the field name, and a nested model becomes a TOML
table and ``BOTKIT_<TABLE>__<KEY>`` variables.

A name that is not a setting stops start-up (a misspelt ``BOTKIT_DRYRUN`` must not be ignored
while orders go out): every ``BOTKIT_*`` environment variable, every ``.env`` key and every TOML
key must name a setting, or be one of :data:`NOT_SETTINGS` (read by botkit, but not settings).
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from contextvars import ContextVar
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Literal

from dotenv import dotenv_values
from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)
from pydantic_settings import SettingsError as _SourceError

from botkit import credentials
from botkit.errors import Location, SettingsError

__all__ = [
    "CONFIG_ENV",
    "DEFAULT_CONFIG",
    "ENV_PREFIX",
    "NOTIFY_EVENTS",
    "NOT_SETTINGS",
    "SIM_DEFAULT_KEY",
    "SIM_DEFAULT_PASSPHRASE",
    "SIM_DEFAULT_SECRET",
    "Credentials",
    "NotifyTarget",
    "Settings",
    "check_live",
    "env_name",
    "load_settings",
    "setting_variables",
]

ENV_PREFIX = "BOTKIT_"
CONFIG_ENV = "BOTKIT_CONFIG"
DEFAULT_CONFIG = Path("configs/botkit.toml")

NOT_SETTINGS: dict[str, str] = {
    CONFIG_ENV: "the settings file's path (environment or .env; the systemd units set it)",
}
"""``BOTKIT_*`` variables botkit reads that are not settings: allowed beside the settings.
Everything else under the prefix must be a setting (``botkit.settings.setting_variables``)."""

# The embedded simulator accepts these by default; used when exchange=sim and none are set.
SIM_DEFAULT_KEY = "sim-key"
SIM_DEFAULT_SECRET = "sim-secret"  # noqa: S105 - a well-known placeholder, not a secret
SIM_DEFAULT_PASSPHRASE = "sim-passphrase"  # noqa: S105 - same

_MASK = "********"
_NOT_SET = "(not set)"

# The TOML file the next Settings() reads; set by load_settings for the duration of one load.
_toml_file: ContextVar[Path | None] = ContextVar("botkit_settings_toml", default=None)


def _config_path() -> Path:
    explicit = _toml_file.get()
    if explicit is not None:
        return explicit
    from_env = os.environ.get(CONFIG_ENV, "").strip()
    return Path(from_env) if from_env else DEFAULT_CONFIG


@dataclass(frozen=True, slots=True)
class Credentials:
    """Key, secret and passphrase as the client uses them; ``repr`` shows none of them."""

    key: str = field(repr=False)
    secret: SecretStr
    passphrase: SecretStr


NOTIFY_EVENTS: dict[str, str] = {
    "fill": "the account's orders filled (grouped: one message per burst)",
    "refused": "orders the exchange refused (code and message)",
    "guard": "orders a guard refused locally (limits, price band, kill switch, halt)",
    "kill_switch": "the kill switch or the halt engaged or released",
    "cycle_failed": "a cycle failed (a strategy, a rule or the cycle itself)",
    "read_failed": "a cycle's exchange reads failed",
    "unsettled": "orders whose outcome is still unknown after a cycle",
    "start": "the service started (synced with the exchange)",
    "stop": "the service stopped",
    "reload_error": "a reload (SIGHUP) found a bad settings or strategy file",
    "daily_summary": "once a UTC day: fills, fees and realized PnL per strategy",
}
"""The events a notification target may ask for (``notify[].events``), with what each says."""

_NOTIFY_URL = re.compile(r"^[a-z][a-z0-9+.\-]*://\S+$", re.IGNORECASE)


class NotifyTarget(BaseModel):
    """One notification target: an Apprise URL (a secret: it embeds tokens) and its events."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    url: SecretStr = Field(description="Apprise URL (json://host/path, tgram://TOKEN/CHAT, ...)")
    events: tuple[str, ...] = Field(
        default=tuple(NOTIFY_EVENTS), description="events sent to it; unset: every event"
    )

    @field_validator("url")
    @classmethod
    def _url_shape(cls, value: SecretStr) -> SecretStr:
        if not _NOTIFY_URL.match(value.get_secret_value().strip()):
            raise ValueError(
                "not a notification URL: write scheme://... (json://, tgram://, slack://, "
                "mailto://, ntfy://, ...; see Apprise's list of services)"
            )
        return SecretStr(value.get_secret_value().strip())

    @field_validator("events", mode="before")
    @classmethod
    def _event_names(cls, value: Any) -> Any:
        names = [value] if isinstance(value, str) else value
        if not isinstance(names, list | tuple):
            return value
        for name in names:
            if not isinstance(name, str) or name.strip().lower() not in NOTIFY_EVENTS:
                close = difflib.get_close_matches(str(name).strip().lower(), NOTIFY_EVENTS, n=1)
                hint = (
                    f"did you mean '{close[0]}'?"
                    if close
                    else "events: " + ", ".join(NOTIFY_EVENTS)
                )
                raise ValueError(f"unknown event {str(name)!r} — {hint}")
        return tuple(dict.fromkeys(n.strip().lower() for n in names))


class Settings(BaseSettings):
    """Every setting of botkit. Build it with :func:`load_settings`."""

    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_file=".env",
        env_file_encoding="utf-8",
        env_nested_delimiter="__",
        extra="ignore",
        frozen=True,
        validate_default=True,
    )

    exchange: Literal["sim", "live"] = Field(
        default="sim", description="sim: the embedded simulator (no network); live: base_url"
    )
    base_url: str | None = Field(
        default=None, description="REST address of the exchange, e.g. https://api.example.com"
    )
    api_key: SecretStr | None = Field(default=None, description="API key (secret)")
    api_secret: SecretStr | None = Field(default=None, description="API secret (secret)")
    api_passphrase: SecretStr | None = Field(
        default=None, description="API passphrase (secret; needed by the pf scheme)"
    )
    signing: Literal["v3", "pf"] = Field(
        default="v3", description="request signing scheme: v3 (current host) or pf (legacy)"
    )
    strategies_dir: Path = Field(default=Path("strategies"), description="strategy YAML folder")
    allow_strategy_symlinks: bool = Field(
        default=False,
        description="load strategy files that are symlinks to a file outside their folder",
    )
    journal: Path = Field(default=Path("var/journal.sqlite"), description="journal database")
    dry_run: bool = Field(default=False, description="decide and journal, never send orders")
    request_timeout: float = Field(
        default=10.0, gt=0, le=300, description="seconds to wait for connect / read / write"
    )
    request_deadline: float | None = Field(
        default=None,
        gt=0,
        le=600,
        description="seconds one request may take in all, connect to last byte; unset: "
        "request_timeout",
    )
    max_answer_bytes: int = Field(
        default=8 * 1024 * 1024,
        ge=1024,
        le=1024**3,
        description="largest answer accepted, in bytes; a larger one is refused as malformed",
    )
    clock_resync_interval: float = Field(
        default=300.0, ge=0, description="seconds between server-clock re-syncs; 0: on demand"
    )
    recv_window: int | None = Field(
        default=None, ge=1, le=60_000, description="v3 recvWindow header in ms; unset: not sent"
    )
    sim_config: Path = Field(
        default=Path("configs/sim.toml"), description="settings file of the embedded simulator"
    )
    paper_state: Path | None = Field(
        default=None,
        description="the paper account's state file (exchange = sim); unset: paper.sqlite"
        " beside the journal; :memory: keeps it in memory",
    )
    paper_balance: Decimal | None = Field(
        default=None,
        gt=0,
        allow_inf_nan=False,
        description="starting balance of a fresh paper account; unset: the simulator config's",
    )
    paper_synchronous: Literal["NORMAL", "FULL"] = Field(
        default="NORMAL",
        description="paper state SQLite synchronous mode (NORMAL: survives any process death;"
        " FULL: also a power loss)",
    )
    # --- risk guards and kill switch (the pipeline's GuardSettings.from_settings reads them) ---
    kill_switch: bool = Field(
        default=False,
        description="stop new risk: only reduce-only orders and cancels are sent"
        " (reads and journaling go on)",
    )
    kill_switch_file: Path | None = Field(
        default=None, description="while this file exists, the kill switch is engaged"
    )
    halt: bool = Field(
        default=False,
        description="send nothing at all: no order, no cancel (reads and journaling go on)",
    )
    halt_file: Path | None = Field(
        default=None, description="while this file exists, the halt is engaged"
    )
    max_orders_per_cycle: int | None = Field(
        default=None, ge=0, description="orders one cycle may send, all strategies together"
    )
    max_notional_per_order: Decimal | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="sz × ctVal × price of one order"
    )
    max_notional_per_cycle: Decimal | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="notional one cycle may send"
    )
    max_position: Decimal | None = Field(
        default=None, ge=0, allow_inf_nan=False, description="|position| in contracts per leg"
    )
    price_band_margin_bps: Decimal = Field(
        default=Decimal(10),
        ge=0,
        lt=10_000,
        allow_inf_nan=False,
        description="a price must lie this many bps of the band's bound inside the price band",
    )
    price_band_recheck: bool = Field(
        default=True, description="re-read the price band before each batch is sent"
    )
    journal_synchronous: Literal["NORMAL", "FULL"] = Field(
        default="FULL", description="journal SQLite synchronous mode (FULL: fsync per commit)"
    )
    journal_evaluations: Literal["all", "changes"] = Field(
        default="all",
        description="rule evaluations journaled: every rule every cycle, or only changes",
    )
    # --- the service ---------------------------------------------------------------------------
    log_level: Literal["TRACE", "DEBUG", "INFO", "SUCCESS", "WARNING", "ERROR"] = Field(
        default="INFO", description="least severe log level written"
    )
    log_format: Literal["auto", "text", "json"] = Field(
        default="auto", description="text on a terminal, JSON lines otherwise (journald)"
    )
    metrics_port: int | None = Field(
        default=None, ge=1, le=65535, description="Prometheus metrics on 127.0.0.1:PORT; unset: off"
    )
    credentials_file: Path | None = Field(
        default=None,
        description="BOTKIT_API_* lines (mode 600/640) filling the credentials not set otherwise",
    )
    notify: tuple[NotifyTarget, ...] = Field(
        default=(),
        description="notification targets ([[notify]] tables: url, events); unset: none",
    )
    notify_queue: int = Field(
        default=1000,
        ge=1,
        le=1_000_000,
        description="notifications waiting to be sent; beyond it new ones are dropped (counted)",
    )

    @field_validator("paper_state", mode="before")
    @classmethod
    def _empty_paper_state(cls, value: Any) -> Any:
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("paper_synchronous", mode="before")
    @classmethod
    def _upper_sync(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("exchange", "signing", "log_format", "journal_evaluations", mode="before")
    @classmethod
    def _lower_word(cls, value: Any) -> Any:
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("log_level", mode="before")
    @classmethod
    def _upper_word(cls, value: Any) -> Any:
        return value.strip().upper() if isinstance(value, str) else value

    @field_validator("base_url", mode="before")
    @classmethod
    def _url(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = value.strip().rstrip("/")
            if not value:
                return None
            if not re.match(r"^https?://[^/\s]+", value):
                raise ValueError("must start with http:// or https:// and name a host")
        return value

    @field_validator("kill_switch_file", "halt_file", mode="before")
    @classmethod
    def _empty_switch_file(cls, value: Any) -> Any:
        # an emptied line (BOTKIT_HALT_FILE=) is no file, not Path("") == the working directory
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("kill_switch_file", "halt_file")
    @classmethod
    def _switch_file(cls, value: Path | None) -> Path | None:
        """A switch file the operator could never create or remove is a control that does not
        work: refuse it when the settings are read."""
        if value is None:
            return None
        try:
            folder_missing = not value.parent.is_dir()
            is_folder = value.is_dir()
        except OSError:  # cannot be checked now: the control counts it as engaged each cycle
            return value
        if folder_missing:
            raise ValueError(
                f"its folder {value.parent} does not exist, so the file could never be created"
                " — create the folder or name a file in one that exists"
            )
        if is_folder:
            raise ValueError(
                f"{value} is a folder — name a file (touched to engage, removed to release)"
            )
        return value

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, toml_file=_config_path())
        return (init_settings, env_settings, dotenv_settings, toml)

    def credentials(self) -> Credentials:
        """The credentials to sign with; the simulator's defaults in sim mode when unset."""
        sim = self.exchange == "sim"
        key = self.api_key.get_secret_value() if self.api_key else ""
        secret = self.api_secret or SecretStr(SIM_DEFAULT_SECRET if sim else "")
        passphrase = self.api_passphrase or SecretStr(SIM_DEFAULT_PASSPHRASE if sim else "")
        return Credentials(key or (SIM_DEFAULT_KEY if sim else ""), secret, passphrase)

    def paper_state_file(self) -> Path | None:
        """Where the paper account is kept (``exchange = "sim"``): ``paper_state``, else
        ``paper.sqlite`` in the journal's folder; None: in memory (``:memory:``, or a journal
        in memory)."""
        if self.paper_state is not None:
            return None if str(self.paper_state) == ":memory:" else self.paper_state
        if str(self.journal) == ":memory:":
            return None
        return Path(self.journal).parent / "paper.sqlite"

    def describe(self) -> dict[str, str]:
        """Every setting as display text, secrets masked: safe to print and log."""
        shown: dict[str, str] = {}
        for name in type(self).model_fields:
            value = getattr(self, name)
            if value is None:
                shown[name] = _NOT_SET
            elif isinstance(value, SecretStr):
                shown[name] = _MASK
            elif isinstance(value, bool):
                shown[name] = str(value).lower()
            elif name == "notify":  # the URLs are secrets: their scheme and events only
                shown[name] = (
                    "; ".join(
                        f"{t.url.get_secret_value().split(':', 1)[0]}://{_MASK}"
                        f" ({', '.join(t.events)})"
                        for t in value
                    )
                    or "(none)"
                )
            else:
                shown[name] = str(value)
        return shown


def env_name(field: str) -> str:
    """``request_timeout`` → ``BOTKIT_REQUEST_TIMEOUT``; nested ``a.b`` → ``BOTKIT_A__B``."""
    return ENV_PREFIX + field.replace(".", "__").upper()


def check_live(settings: Settings) -> None:
    """Refuse ``exchange=live`` without an address or the credentials its scheme needs."""
    if settings.exchange != "live":
        return
    if settings.base_url is None:
        raise SettingsError(
            "exchange=live needs the exchange's address",
            where=Location(field="BOTKIT_BASE_URL"),
            hint="set BOTKIT_BASE_URL (or base_url in the settings file) to https://…",
        )
    credentials.check_transport(settings.base_url)
    needed = ["api_key", "api_secret"] + (["api_passphrase"] if settings.signing == "pf" else [])
    missing = [env_name(n) for n in needed if not _secret_set(getattr(settings, n))]
    if missing:
        raise SettingsError(
            f"exchange=live (signing={settings.signing}) needs credentials; missing: "
            + ", ".join(missing),
            where=Location(field=missing[0]),
            hint="set them in the environment or in .env (keep them out of the settings file)",
        )


def _secret_set(value: SecretStr | None) -> bool:
    return value is not None and bool(value.get_secret_value().strip())


def load_settings(
    *,
    config: str | Path | None = None,
    env_file: str | Path | None = ".env",
    **overrides: Any,
) -> Settings:
    """Read the settings; raise :class:`SettingsError` (one line, where + fix) on any problem.

    ``config`` overrides ``BOTKIT_CONFIG`` (default ``configs/botkit.toml``); a missing default
    file is fine, a missing file named explicitly is an error. ``env_file=None`` reads no
    ``.env``. ``overrides`` win over every source (tests, command-line options).
    """
    _refuse_unknown_variables()
    credentials.check_dotenv(env_file)
    dotenv = _read_dotenv(env_file)
    _refuse_unknown_dotenv_keys(dotenv, env_file)
    if config is None and not os.environ.get(CONFIG_ENV, "").strip():
        config = next((v for k, v in dotenv.items() if k.upper() == CONFIG_ENV and v), None)
    explicit = config is not None or bool(os.environ.get(CONFIG_ENV, "").strip())
    path = Path(config) if config is not None else _config_path()
    toml_data, toml_lines = _read_toml(path, required=explicit)
    _refuse_unknown_keys(toml_data, toml_lines, path)
    credentials.check_toml(path, toml_data)
    token = _toml_file.set(path)
    try:
        settings = Settings(_env_file=env_file, **overrides)
    except ValidationError as exc:
        raise _explain(exc, path, toml_lines, env_file, overrides) from None
    except _SourceError as exc:
        raise SettingsError(
            str(exc).splitlines()[0], hint="check the BOTKIT_* variables and the .env file"
        ) from None
    finally:
        _toml_file.reset(token)
    if settings.credentials_file is not None:  # fills what no other source set
        found = credentials.read_credentials_file(Path(settings.credentials_file))
        fill = {k: SecretStr(v) for k, v in found.items() if getattr(settings, k) is None}
        settings = settings.model_copy(update=fill)
    check_live(settings)
    return settings


# --- names that are not settings ------------------------------------------------------------


def _names(model: type[BaseModel], prefix: str) -> set[str]:
    """The environment names of ``model``'s fields (a nested model: ``PREFIX_TABLE__KEY``)."""
    out: set[str] = set()
    for name, info in model.model_fields.items():
        out.add(prefix + name.upper())
        kind = info.annotation
        if isinstance(kind, type) and issubclass(kind, BaseModel):
            out |= _names(kind, prefix + name.upper() + "__")
    return out


def setting_variables() -> frozenset[str]:
    """Every environment variable (upper case) that names a setting, or is in NOT_SETTINGS."""
    return frozenset(_names(Settings, ENV_PREFIX) | set(NOT_SETTINGS))


def _suggest(name: str, known: frozenset[str]) -> str:
    """``did you mean BOTKIT_DRY_RUN?`` for ``BOTKIT_DRYRUN`` or ``DRY_RUN`` (compared without
    the shared prefix, which would make every name look alike)."""
    upper = name.upper()
    bare = upper.removeprefix(ENV_PREFIX)
    by_bare = {k.removeprefix(ENV_PREFIX): k for k in known}
    close = difflib.get_close_matches(bare, sorted(by_bare), n=1)
    if close:
        return f"did you mean {by_bare[close[0]]}?"
    return "settings are listed in docs/configuration.md"


def _refuse_unknown_variables() -> None:
    """A ``BOTKIT_*`` environment variable that is not a setting stops start-up."""
    known = setting_variables()
    for name in sorted(os.environ):
        if name.upper().startswith(ENV_PREFIX) and name.upper() not in known:
            raise SettingsError(
                "not a botkit setting",
                where=Location(field=name),
                hint=_suggest(name, known) + f" (or unset {name})",
            )


def _read_dotenv(env_file: str | Path | None) -> dict[str, str | None]:
    if env_file is None or not credentials.is_file(Path(env_file), "environment file"):
        return {}
    try:
        return dict(dotenv_values(env_file, encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"cannot read the environment file ({type(exc).__name__})",
            where=Location(file=str(env_file)),
            hint="fix its permissions, or save it as UTF-8",
        ) from None


def _refuse_unknown_dotenv_keys(values: dict[str, str | None], env_file: str | Path | None) -> None:
    """Every key of ``.env`` must be a setting's variable (``BOTKIT_DRY_RUN``, not
    ``DRY_RUN`` or ``BOTKIT_DRYRUN``): the file is botkit's."""
    known = setting_variables()
    for name in values:
        if name.upper() not in known:
            path = Path(str(env_file))
            raise SettingsError(
                f"'{name}' is not a botkit setting",
                where=Location(file=str(path), line=_dotenv_line(path, name)),
                hint=_suggest(name, known) + " (or delete the line)",
            )


# --- the settings file -------------------------------------------------------------------


def _read_toml(path: Path, *, required: bool) -> tuple[dict[str, Any], dict[tuple[str, ...], int]]:
    if not credentials.is_file(path, "settings file"):
        if required:
            raise SettingsError(
                "settings file not found",
                where=Location(file=str(path)),
                hint=f"create it (see configs/botkit.toml) or fix {CONFIG_ENV}",
            )
        return {}, {}
    try:
        # the bytes as they are (no newline translation): what the settings source reads
        # again with tomllib.load, so a lone carriage return fails here, located
        text = path.read_bytes().decode("utf-8")
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise SettingsError(
            f"cannot read the settings file: {exc}", where=Location(file=str(path))
        ) from None
    except tomllib.TOMLDecodeError as exc:
        line, column = _toml_error_position(str(exc))
        raise SettingsError(
            f"not valid TOML: {str(exc).split(' (at ')[0]}",
            where=Location(file=str(path), line=line, column=column),
            hint='write key = value, strings in quotes (exchange = "sim")',
        ) from None
    return data, _key_lines(text)


def _toml_error_position(message: str) -> tuple[int | None, int | None]:
    match = re.search(r"line (\d+), column (\d+)", message)
    return (int(match.group(1)), int(match.group(2))) if match else (None, None)


_TABLE = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\-\s\"']+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"""^\s*["']?([A-Za-z0-9_\-]+)["']?\s*=""")


def _key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Line number of each ``key = value`` (and ``[table]``), keyed by its dotted path."""
    lines: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        if match := _TABLE.match(line):
            table = tuple(p.strip().strip("\"'") for p in match.group(1).split("."))
            lines.setdefault(table, number)
        elif match := _KEY.match(line):
            lines.setdefault((*table, match.group(1)), number)
    return lines


def _refuse_unknown_keys(
    data: dict[str, Any], lines: dict[tuple[str, ...], int], path: Path
) -> None:
    known = set(Settings.model_fields)
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, sorted(known), n=1)
            hint = f"did you mean '{close[0]}'?" if close else "see docs/configuration.md"
            raise SettingsError(
                f"unknown setting '{key}'",
                where=Location(file=str(path), line=lines.get((key,))),
                hint=hint,
            )


# --- turning a ValidationError into one located line -------------------------------------


def _explain(
    exc: ValidationError,
    path: Path,
    toml_lines: dict[tuple[str, ...], int],
    env_file: str | Path | None,
    overrides: dict[str, Any],
) -> SettingsError:
    first = exc.errors()[0]
    loc = tuple(str(p) for p in first["loc"])
    dotted = ".".join(loc) or "settings"
    secret = bool(loc) and loc[0] in {"api_key", "api_secret", "api_passphrase", "notify"}
    got = "" if secret or "input" not in first else f" (got {first['input']!r})"
    more = exc.error_count() - 1
    message = f"{dotted}: {first['msg']}{got}" + (f" (+{more} more)" if more > 0 else "")
    where = _where(loc, path, toml_lines, env_file, overrides)
    target = f"'{dotted}' there" if where.file else env_name(dotted)
    hint = f"fix {target}; settings are listed in docs/configuration.md"
    if first["type"] == "extra_forbidden" and loc[0] == "notify":  # a key of a [[notify]] table
        close = difflib.get_close_matches(loc[-1], sorted(NotifyTarget.model_fields), n=1)
        keys = ", ".join(sorted(NotifyTarget.model_fields))
        hint = (f"did you mean '{close[0]}'? " if close else "") + f"a [[notify]] table has {keys}"
    return SettingsError(message, where=where, hint=hint)


def _where(
    loc: tuple[str, ...],
    path: Path,
    toml_lines: dict[tuple[str, ...], int],
    env_file: str | Path | None,
    overrides: dict[str, Any],
) -> Location:
    """Which source gave the value that failed: argument, environment, .env, TOML, default."""
    if not loc:
        return Location(field="settings")
    name = env_name(".".join(loc))
    if loc[0] in overrides:
        return Location(field=loc[0])
    if any(k.upper() == name for k in os.environ):
        return Location(field=name)
    if env_file is not None and Path(env_file).is_file():
        values = dotenv_values(env_file)
        if any(k.upper() == name for k in values):
            return Location(file=str(env_file), line=_dotenv_line(Path(env_file), name))
    if loc in toml_lines or loc[:1] in toml_lines:
        return Location(file=str(path), line=toml_lines.get(loc, toml_lines.get(loc[:1])))
    return Location(field=name)


def _dotenv_line(path: Path, name: str) -> int | None:
    pattern = re.compile(rf"^\s*(export\s+)?{re.escape(name)}\s*=", re.IGNORECASE)
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if pattern.match(line):
            return number
    return None
