"""Schema version 3: indexes for archive searches over many games.

Searches order and filter by the game's date, ``COALESCE(finished_at, created_at)``; without an index
on that expression SQLite reads every game's record (the large last column) for a search by game or
date. Measured on 100 000 games: 250-520 ms without, 3-74 ms with.
"""

SQLITE = """
CREATE INDEX games_date ON games (COALESCE(finished_at, created_at), id);
CREATE INDEX games_game_date ON games (game, COALESCE(finished_at, created_at), id);
CREATE INDEX games_status_date ON games (status, COALESCE(finished_at, created_at), id);
"""

POSTGRESQL = SQLITE  # nothing in it differs between the two
