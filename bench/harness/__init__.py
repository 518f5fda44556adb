"""What the benchmark scenarios share.

``report``: machine, commit, load average, percentiles, the engine timing loops; ``pbem_api``: every
name taken from ``pbem``; the rest serves the mail scenarios: ``daemon`` (the daemon in a process of
its own, its stage and CPU recorder, py-spy), ``sink`` (the relay that timestamps arrivals), ``players``
(tables, game setup by mail, SMTP submission), ``stages`` (per-move stages read back from the daemon's
store) and ``mailrun`` (command line, run loop and markdown report).
"""
