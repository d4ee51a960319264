"""botkit.ports: the protocols the engine reaches its adapters through, and their values.

:mod:`botkit.ports.journal`: the journal's port (:class:`~botkit.ports.journal.JournalPort`) and
its record values. The exchange's port is :mod:`botkit.exchange.port` (see docs/architecture.md).
"""
