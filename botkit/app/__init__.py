"""The composition root: settings in, the service, paper trading, the demo and the backtest
built and handed their parts (docs/architecture.md).

Only ``botkit.cli`` (and tests) import this package; nothing below it does, and nothing else
constructs the runner. The package itself imports nothing, so ``botkit --help`` stays light:
each module is imported by the command that needs it.

- :mod:`botkit.app.clients` — the exchange client the settings ask for (live or the embedded
  simulator);
- :mod:`botkit.app.service` — the service's runner (``botkit run``, ``plan``, ``cancel``,
  ``flatten``) and the journal each command opens;
- :mod:`botkit.app.paper` — paper trading on simulated time (``botkit demo``).
"""
