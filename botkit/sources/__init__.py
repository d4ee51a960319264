"""Where the strategies come from: the strategy files on disk (the store's file adapter).

See :mod:`botkit.sources.files`; the port it implements is
:class:`botkit.rules.source.StrategySource`.
"""

from botkit.sources.files import (
    FileSource,
    check_paths,
    discover,
    load,
    read_strategy_file,
)

__all__ = ["FileSource", "check_paths", "discover", "load", "read_strategy_file"]
