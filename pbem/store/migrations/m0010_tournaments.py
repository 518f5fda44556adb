"""Schema version 10: tournaments.

A tournament is kept like a game: one JSON document (``doc``: the organizer's settings, the
entrants, the rounds with their games and results, the bracket or ladder or divisions, the
moderators' actions) and the columns that find it: its status, and ``due_at``, the next moment
the scheduler must look at it (the start date, a round's deadline, the next season). The games of
a tournament are ordinary games; their record names the tournament (``record["tournament"]``).

``tournament_entrants`` lists who entered which tournament (also those who withdrew), so that a
player's tournaments are found without reading every document; it is written with the document,
in the same transaction.

The same SQL in both dialects, written once.
"""

SQLITE = """
CREATE TABLE tournaments (
    id          TEXT PRIMARY KEY,                    -- "t-3"
    game        TEXT NOT NULL,                       -- "alien-city"
    format      TEXT NOT NULL,                       -- "swiss", "round-robin", ...
    status      TEXT NOT NULL,                       -- open, running, paused, over, cancelled
    organizer   TEXT NOT NULL,                       -- the address that announced it
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    starts_at   TEXT,
    due_at      TEXT,                                -- when the scheduler must look at it next
    finished_at TEXT,
    doc         TEXT NOT NULL                        -- the tournament document (JSON)
);
CREATE INDEX tournaments_status_due ON tournaments (status, due_at);

CREATE TABLE tournament_entrants (
    tournament_id TEXT NOT NULL REFERENCES tournaments(id),
    email         TEXT NOT NULL,
    status        TEXT NOT NULL,                     -- entered, withdrawn, removed
    entered_at    TEXT NOT NULL,
    PRIMARY KEY (tournament_id, email)
);
CREATE INDEX tournament_entrants_email ON tournament_entrants (email);
"""

POSTGRESQL = SQLITE
