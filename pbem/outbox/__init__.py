"""Mail out: composing messages from the templates, and the sender that relays outbox rows (or
writes them to a Maildir) with fixed Message-IDs and back-off. Knows no game."""
