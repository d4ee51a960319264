"""botkit: a declarative, rule-driven order executor for the futures v3 REST API."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("botkit")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0"

__all__ = ["__version__"]
