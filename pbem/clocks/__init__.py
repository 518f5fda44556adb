"""Move clocks of every kind: time controls (days per move, a Fischer bank, a total for the game),
time that does not count (weekends, the player's nights, vacations, pauses), the clock log kept in
each game record, the yearly vacation allowance, each player's reliability, and the movable clock
for end-to-end checks and demos.

Nothing here sends mail or knows a command: the deadline commands and the scheduler
(``pbem.community``) use it, and so do the record replay, the standings and the archive site.
"""
