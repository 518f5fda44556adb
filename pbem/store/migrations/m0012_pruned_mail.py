"""Schema version 12: the raw mail of finished messages can be dropped (``pbem admin prune``).

Every mail received and every reply sent stays in ``inbound.raw`` and ``outbound.raw``, most of
what a move leaves in the database (README "Numbers"), and nothing needs them once a message is
done: the game state comes from the records. Pruning replaces ``raw`` with an empty value and
stamps ``pruned_at``; the row itself stays (its Message-ID and hash still recognise a copy sent
again, and the counts, the rate limits and ``pbem admin status`` read the small columns). An empty
value rather than NULL: ``raw`` is ``NOT NULL`` since version 1, and lifting that in SQLite means
rebuilding the two biggest tables.

The partial indexes hold exactly the rows a prune still has to look at, in the order it takes them
(oldest first), so a daily prune on a server with years of mail reads only the day's rows and never
walks the ones pruned before. ``pruned_at`` lands after ``raw`` (ALTER TABLE appends: see
``m0005_hostile_mail``), so it is read only with ``raw`` or through these indexes.
"""

SQLITE = """
ALTER TABLE inbound ADD COLUMN pruned_at TEXT;
ALTER TABLE outbound ADD COLUMN pruned_at TEXT;
CREATE INDEX inbound_unpruned ON inbound (processed_at)
    WHERE pruned_at IS NULL AND status IN ('done', 'ignored');
CREATE INDEX outbound_unpruned ON outbound (COALESCE(sent_at, given_up_at))
    WHERE pruned_at IS NULL AND (sent_at IS NOT NULL OR given_up_at IS NOT NULL);
"""

POSTGRESQL = SQLITE
