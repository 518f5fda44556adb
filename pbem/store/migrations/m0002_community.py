"""Schema version 2: what running a community needs — deadlines, observers, per-player settings,
blocked addresses, exactly-once scheduler actions, and the columns the archive searches on."""

SQLITE = """
-- When the seat to move must have moved; NULL while no clock runs (invited, paused, over).
ALTER TABLE games ADD COLUMN deadline_at TEXT;
-- When the game ended (status over/declined/cancelled), for archive searches by date.
ALTER TABLE games ADD COLUMN finished_at TEXT;
CREATE INDEX games_deadline ON games (deadline_at) WHERE deadline_at IS NOT NULL;
CREATE INDEX games_finished ON games (game, finished_at);
CREATE INDEX games_finished_at ON games (finished_at);

CREATE TABLE observers (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    email   TEXT NOT NULL,
    since   TEXT NOT NULL,
    PRIMARY KEY (game_id, email)
);
CREATE INDEX observers_email ON observers (email);

-- Per-address settings as a JSON object: timezone, vacations, reminder bookkeeping.
CREATE TABLE players (
    email    TEXT PRIMARY KEY,
    settings TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE blocked (
    email TEXT PRIMARY KEY,
    at    TEXT NOT NULL,
    by    TEXT NOT NULL DEFAULT '',
    why   TEXT NOT NULL DEFAULT ''
);

-- A scheduler action (reminder, forfeit) happens once: its key is inserted in the same transaction
-- as the action, so a crash before the commit repeats it and a crash after it does not.
CREATE TABLE once_keys (
    key TEXT PRIMARY KEY,
    at  TEXT NOT NULL
);

CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

POSTGRESQL = SQLITE  # nothing in it differs between the two
