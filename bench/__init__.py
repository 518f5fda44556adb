"""pbem's benchmarks: one script per scenario, sharing ``bench.harness``.

The scripts import each other and the harness as the package ``bench``, so the repository must be on
``sys.path`` and ``bench/`` itself must not be: run as a script, Python puts ``bench/`` first, where
``bench/engine.py`` would shadow the ``engine`` package. Each script therefore starts with the same two
lines that put the repository first and drop ``bench/``; ``python -m bench.mail`` from the repository
needs neither.
"""
