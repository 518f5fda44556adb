"""Schema version 6: what the classic PBEM commands need — searching games by how they ended, and
moving a player to a new address.

Archive searches by result ("games Ann won", "draws", "forfeits") must not read every record: the
result is copied out of the record into two indexed columns whenever a game is written
(``pbem.store.common.result_columns``): ``games.ending`` is how the game ended (the result's
reason: scored, resigned, forfeit, agreed draw, abandoned by agreement, moderator, declined,
expired, withdrawn) and ``seats.outcome`` what it meant for each seat (win, loss, draw; NULL for
running games and for games that count for nobody, such as abandoned ones). Existing games are
filled in here from their records, with the same rule.

A change of address waits in ``address_changes`` until the new address answers with its one-time
code: only the code's hash is kept, and a used or expired row stays, so that a code sent twice is
answered "already used" rather than "wrong".
"""

SQLITE = """
ALTER TABLE games ADD COLUMN ending TEXT;
ALTER TABLE seats ADD COLUMN outcome TEXT;

UPDATE games SET ending = json_extract(record, '$.result.reason')
 WHERE json_type(record, '$.result.reason') = 'text';

UPDATE seats SET outcome = (
  SELECT CASE
    WHEN g.status <> 'over' OR json_type(g.record, '$.result') IS NOT 'object'
         OR json_extract(g.record, '$.result.reason') = 'abandoned by agreement' THEN NULL
    WHEN (SELECT COUNT(*) FROM json_each(g.record, '$.result.winners')) = 0 THEN 'draw'
    WHEN NOT EXISTS (SELECT 1 FROM seats AS s2 WHERE s2.game_id = g.id AND s2.seat NOT IN
                     (SELECT value FROM json_each(g.record, '$.result.winners'))) THEN 'draw'
    WHEN seats.seat IN (SELECT value FROM json_each(g.record, '$.result.winners')) THEN 'win'
    ELSE 'loss' END
  FROM games AS g WHERE g.id = seats.game_id);

CREATE INDEX games_ending ON games (ending, COALESCE(finished_at, created_at), id);
CREATE INDEX seats_outcome ON seats (email, outcome);
CREATE INDEX seats_drawn ON seats (game_id) WHERE outcome = 'draw';

CREATE TABLE address_changes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    old_email  TEXT NOT NULL,
    new_email  TEXT NOT NULL,
    code_hash  TEXT NOT NULL UNIQUE,   -- sha256 of the one-time code; the code itself is never kept
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT                    -- when the new address confirmed it; NULL while pending
);
CREATE INDEX address_changes_old ON address_changes (old_email, created_at);
"""

POSTGRESQL = """
ALTER TABLE games ADD COLUMN ending TEXT;
ALTER TABLE seats ADD COLUMN outcome TEXT;

UPDATE games SET ending = record::jsonb -> 'result' ->> 'reason'
 WHERE jsonb_typeof(record::jsonb -> 'result' -> 'reason') = 'string';

UPDATE seats AS s SET outcome = CASE
    WHEN g.status <> 'over' OR jsonb_typeof(g.record::jsonb -> 'result') IS DISTINCT FROM 'object'
         OR g.record::jsonb -> 'result' ->> 'reason' = 'abandoned by agreement' THEN NULL
    WHEN COALESCE(jsonb_array_length(g.record::jsonb -> 'result' -> 'winners'), 0) = 0 THEN 'draw'
    WHEN NOT EXISTS (SELECT 1 FROM seats AS s2 WHERE s2.game_id = g.id
                     AND NOT (g.record::jsonb -> 'result' -> 'winners') ? s2.seat) THEN 'draw'
    WHEN (g.record::jsonb -> 'result' -> 'winners') ? s.seat THEN 'win'
    ELSE 'loss' END
  FROM games AS g WHERE g.id = s.game_id;

CREATE INDEX games_ending ON games (ending, (COALESCE(finished_at, created_at)), id);
CREATE INDEX seats_outcome ON seats (email, outcome);
CREATE INDEX seats_drawn ON seats (game_id) WHERE outcome = 'draw';

CREATE TABLE address_changes (
    id         BIGSERIAL PRIMARY KEY,
    old_email  TEXT NOT NULL,
    new_email  TEXT NOT NULL,
    code_hash  TEXT NOT NULL UNIQUE,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL,
    used_at    TEXT
);
CREATE INDEX address_changes_old ON address_changes (old_email, created_at);
"""
