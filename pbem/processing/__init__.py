"""Processing: one stored mail in one transaction: authenticate, run its commands, save the games and
plan every reply, which goes into the outbox before the commit."""
