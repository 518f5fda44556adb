"""Doors in: the ways mail reaches the server (the embedded SMTP listener, the IMAP watcher and
`pbem deliver` for an MTA pipe). Each stores the raw bytes durably (de-duplicated) before it
acknowledges them; nothing here reads the mail or knows a game."""
