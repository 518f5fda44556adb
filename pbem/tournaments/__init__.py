"""Tournaments by mail: round robin, Swiss, single and double elimination, ladders and leagues.

The formats are pure modules with no I/O (``roundrobin``, ``swiss``, ``seating``, ``elimination``,
``ladder``, ``league``, and ``table`` for points and tie-breaks): they take players, ratings and
results and return pairings and tables, so a tournament's table is a function of what is stored.
Around them: ``document`` (the stored tournament), ``running`` (games created and results taken
in, inside the transaction of the mail or the scheduler run that caused them), ``commands`` and
``moderating`` (the mail commands), ``texts`` (what the mails show), ``steps`` (the scheduler's
part) and ``site`` (a page per tournament on the archive site). Registered as a feature through
``pbem.processing.features``.
"""
