"""Archives of finished games: export to record files and back, search, and a static HTML site.

Finished games stay in the store; this package moves them out (``export``), back in (``importer``),
finds them (``search``) and shows them (``site`` with ``svg``). ``progress`` is what the long runs
report to (a tqdm bar from the CLI), ``sample`` makes random finished games for tests and benchmarks.
"""
