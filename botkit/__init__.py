"""botkit: a declarative, rule-driven order executor for the futures v3 REST API."""

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    """``__version__``, read from the installed package's metadata when first asked for:
    ``importlib.metadata`` and its search of the installed packages cost every command tens
    of milliseconds at start-up, and most never print the version."""
    if name != "__version__":
        raise AttributeError(f"module 'botkit' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("botkit")
    except PackageNotFoundError:  # pragma: no cover - a source tree without install
        value = "0.0.0"
    globals()["__version__"] = value
    return value
