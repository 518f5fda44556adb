"""Schema version 4: what the mail experience needs — threads per recipient and the daily digest.

Every mail of a game joins one thread per recipient: ``mail_threads`` keeps, for each game and
address, the first and the latest Message-ID sent there, so the next mail's In-Reply-To names a mail
that recipient has. (Not in the game record: the record is the game, and mail bookkeeping changes
with every mail, even a refused move's answer.)

A player who chose ``set notify digest`` gets at most one mail a day. What happened in their games
meanwhile waits in ``digest_items``, one line per event, until the scheduler sends the digest (and
deletes the lines in the same transaction, so a crash sends it again rather than losing it).
"""

SQLITE = """
CREATE TABLE digest_items (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    email      TEXT NOT NULL,
    game_id    TEXT,
    headline   TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX digest_items_email ON digest_items (email, id);

CREATE TABLE mail_threads (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    email   TEXT NOT NULL,
    root_id TEXT NOT NULL,
    last_id TEXT NOT NULL,
    PRIMARY KEY (game_id, email)
);
"""

POSTGRESQL = """
CREATE TABLE digest_items (
    id         BIGSERIAL PRIMARY KEY,
    email      TEXT NOT NULL,
    game_id    TEXT,
    headline   TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX digest_items_email ON digest_items (email, id);

CREATE TABLE mail_threads (
    game_id TEXT NOT NULL REFERENCES games (id) ON DELETE CASCADE,
    email   TEXT NOT NULL,
    root_id TEXT NOT NULL,
    last_id TEXT NOT NULL,
    PRIMARY KEY (game_id, email)
);
"""
