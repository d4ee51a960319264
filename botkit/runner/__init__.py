"""botkit.runner: the engine — the cycle, the loop and what carries a plan out.

:mod:`~botkit.runner.cycle` (read, evaluate, plan, send or record, journal),
:mod:`~botkit.runner.loop` (cycles until stopped, signals, the supervisor),
:mod:`~botkit.runner.execution` (live and dry run, two adapters), :mod:`~botkit.runner.orders`
(the executor, submission, lookups, reconcile), :mod:`~botkit.runner.reader` (the snapshot),
:mod:`~botkit.runner.killswitch` (the halt and kill switch), start-up's checks
(:mod:`~botkit.runner.ownership`, :mod:`~botkit.runner.orphans`, :mod:`~botkit.runner.shared`).
It reaches its adapters through ports only (:mod:`botkit.exchange.port`, :mod:`botkit.ports`);
the composition root (:mod:`botkit.app`) hands them in.
"""
