"""Schema version 11: PostgreSQL keeps its statistics of ``inbound`` fresh during a backlog.

Autovacuum analyses a table after a tenth of its rows changed. ``inbound`` keeps every message ever
received, so on a server that has stored many, a burst of waiting mail is over before the planner
hears of it: during the burst it plans on statistics with almost nothing pending, and a join that
reads every pending row looks cheap (measured: a claim's test for an earlier message of the same
game took 0.6-0.7 ms with 600 waiting, planned that way; ``pbem.store.sql`` now fences it, but a
statement added later should not have to know). Here it analyses after 500 changed rows, and
vacuums after 2 % of the table plus 1,000 rows (the done rows' updates leave dead versions that the
pending-row indexes must skip): a few milliseconds each, at most every few seconds under load.

SQLite analyses only when asked (``ANALYZE``), and its planner does not need to for these
statements: nothing to do there.
"""

SQLITE = "SELECT 1;  -- nothing to do on SQLite (see above)"

POSTGRESQL = """
ALTER TABLE inbound SET (autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 500,
                         autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000);
"""
