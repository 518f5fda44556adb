"""Schema version 7: several ``pbem serve`` workers on one database.

``workers`` holds one row per running server process, refreshed by its heartbeat, so ``pbem status``
can say who is alive and which roles (IMAP watcher, scheduler) each holds. The roles themselves are
locks (advisory locks in PostgreSQL, file locks beside a SQLite file), not rows: a lock is freed when
its holder dies, a row would not be.

``inbound.game_id`` is now also filled at intake, from the seat token in the recipient's
plus-address, so that a worker can tell before reading a message whether an earlier one about the
same game is still pending (one game's moves are applied in arrival order); the partial index keeps
that check to the few pending rows. Likewise ``outbound_unsent`` lets every worker's sender find the
few unsent mails among all the sent ones, oldest first.

The same SQL in both dialects, written once.
"""

SQLITE = """
CREATE TABLE workers (
    id         TEXT    PRIMARY KEY,                  -- "host:pid:start"
    host       TEXT    NOT NULL,
    pid        INTEGER NOT NULL,
    started_at TEXT    NOT NULL,
    seen_at    TEXT    NOT NULL,                     -- the latest heartbeat
    roles      TEXT    NOT NULL DEFAULT ''           -- comma-separated: imap, scheduler
);

CREATE INDEX inbound_pending_game ON inbound (game_id, id) WHERE status = 'pending';
CREATE INDEX outbound_unsent ON outbound (id) WHERE sent_at IS NULL;
"""

POSTGRESQL = SQLITE
