"""Community services on top of processing: deadlines and their scheduler, observers and undo,
moderators, standings, and the mail commands that reach them (registered as features)."""
