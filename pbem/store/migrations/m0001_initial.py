"""Schema version 1: everything the server keeps.

Conventions kept portable to PostgreSQL: timestamps are fixed-width UTC text
("YYYY-MM-DDTHH:MM:SS.ffffffZ", sortable as text), JSON is text, booleans are 0/1 integers, upserts use
``ON CONFLICT ... DO UPDATE``. Statuses are checked in Python rather than with CHECK constraints,
because widening a CHECK in SQLite means rebuilding the table.

Large values (raw messages, game records) are the last column of their table: SQLite stores a row's
columns in order and has to walk a big value's overflow pages to reach any column after it, so a
status scan over the outbox would otherwise read every stored message. (Columns added later by
ALTER TABLE land after them; keep those small or indexed.)
"""

from pbem.store.migrations.dialects import postgresql_from_sqlite

SQLITE = """
-- The durable intake queue. A message is stored once: its bytes (sha256) and its Message-ID are
-- both unique, so an SMTP retry, an IMAP re-fetch or a second `pbem deliver` is recognised.
CREATE TABLE inbound (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,  -- never reused: ids appear in logs
    message_id   TEXT,                               -- normalised "<...>", NULL when absent
    sha256       TEXT    NOT NULL UNIQUE,
    source       TEXT    NOT NULL,                   -- smtp | imap | deliver | cli
    source_ref   TEXT,                               -- e.g. IMAP "mailbox:uidvalidity:uid"
    received_at  TEXT    NOT NULL,
    status       TEXT    NOT NULL DEFAULT 'pending', -- pending | done | ignored | failed
    outcome      TEXT,
    sender       TEXT,
    game_id      TEXT,                               -- no foreign key: may name an unknown game
    processed_at TEXT,
    raw          BLOB    NOT NULL                    -- last: see the module docstring
);
CREATE UNIQUE INDEX inbound_message_id ON inbound (message_id);
CREATE INDEX inbound_status ON inbound (status, id);

CREATE TABLE games (
    id          TEXT PRIMARY KEY,                    -- "ac-17"
    game        TEXT NOT NULL,                       -- "alien-city"
    status      TEXT NOT NULL,
    to_move     TEXT,
    thread_id   TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    record      TEXT NOT NULL                        -- the pbem-record/1 document, JSON; last
);
CREATE INDEX games_status ON games (status, updated_at);

CREATE TABLE seats (
    game_id     TEXT    NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    seat        TEXT    NOT NULL,
    position    INTEGER NOT NULL,                    -- keeps GameRow.seats in its given order
    email       TEXT    NOT NULL,
    name        TEXT    NOT NULL DEFAULT '',
    token_hash  TEXT    NOT NULL DEFAULT '',
    accepted    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX seats_email ON seats (email);
CREATE UNIQUE INDEX seats_token_hash ON seats (token_hash) WHERE token_hash <> '';

-- Per-prefix game numbers ("ac" -> next number to hand out).
CREATE TABLE game_counters (
    prefix  TEXT    PRIMARY KEY,
    next    INTEGER NOT NULL
);

-- The transactional outbox: written in the same transaction as the move it reports.
CREATE TABLE outbound (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id      TEXT    NOT NULL UNIQUE,
    sender          TEXT    NOT NULL,
    recipients      TEXT    NOT NULL,                -- JSON list of addresses
    created_at      TEXT    NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT,
    sent_at         TEXT,
    last_error      TEXT,
    raw             BLOB    NOT NULL                 -- last
);
CREATE INDEX outbound_due ON outbound (sent_at, next_attempt_at);

CREATE TABLE imap_state (
    mailbox     TEXT    PRIMARY KEY,
    uidvalidity INTEGER NOT NULL,
    last_uid    INTEGER NOT NULL
);

-- Rate limits for notices (e.g. "failed authentication" to one seat at most once an hour).
CREATE TABLE notices (
    key     TEXT PRIMARY KEY,
    last_at TEXT NOT NULL
);

CREATE TABLE bounces (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    email   TEXT NOT NULL,
    at      TEXT NOT NULL,
    detail  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX bounces_email ON bounces (email, at);
"""

# The same tables in PostgreSQL; only the integer and blob types differ (written with the PostgreSQL
# backend, before any PostgreSQL database existed).
POSTGRESQL = postgresql_from_sqlite(SQLITE)
