"""Schema version 8: each player's own block list (``block ADDRESS`` by mail).

One row per (player, blocked address): an invitation from the blocked address is declined for the
player without a word to them, what it writes does not reach them, and it cannot join their open
challenge (``pbem.players.blocking``). This is not the moderators' ``blocked`` table, whose
addresses the whole server ignores. Rows are looked up both ways: by the player (their list, the
primary key) and by the blocked address (who shuts this sender out, on every mail it writes to
someone: ``player_blocks_blocked``).

The same SQL in both dialects, written once.
"""

SQLITE = """
CREATE TABLE player_blocks (
    email   TEXT NOT NULL,             -- the player whose list it is, lower case
    blocked TEXT NOT NULL,             -- the address they block, lower case
    since   TEXT NOT NULL,             -- when they blocked it
    PRIMARY KEY (email, blocked)
);
CREATE INDEX player_blocks_blocked ON player_blocks (blocked);
"""

POSTGRESQL = SQLITE
