"""Schema version 9: the yearly vacation allowance, per player and year.

A player's ``vacation`` days and the days spent for them when their time ran out (a timeout spends
the allowance, a day at a time, before a game is lost) come out of one allowance a year
(``[deadlines] vacation_days_per_year``). One row per player and year holds both counts, so the
days spent on timeouts are there to show and to count however long ago the game ended, while the
vacations themselves (the intervals that stop the clocks) stay in the player's settings. A player
without a row has spent nothing on timeouts; their vacation days are counted from their settings
when the row is first written.

The same SQL in both dialects, written once.
"""

SQLITE = """
CREATE TABLE allowance (
    email         TEXT    NOT NULL,
    year          INTEGER NOT NULL,               -- the calendar year, in the player's timezone
    vacation_days INTEGER NOT NULL DEFAULT 0,     -- days of vacations the player asked for
    timeout_days  INTEGER NOT NULL DEFAULT 0,     -- days spent when their time ran out
    updated_at    TEXT    NOT NULL,
    PRIMARY KEY (email, year)
);
"""

POSTGRESQL = SQLITE
