"""Schema version 5: what hostile and broken mail needs — the envelope sender kept with each
message, fair processing by sender, a "given up" state for outbound mail refused for good, and the
addresses our mail bounces from.

The new inbound and outbound columns land after the ``raw`` column (ALTER TABLE appends); they are
read only together with ``raw`` or through the indexes below, never by a scan that would have to
walk every stored message's overflow pages.
"""

_STATEMENTS = """
-- The SMTP envelope sender the door saw: '' for the null sender <> (a bounce), NULL when unknown.
ALTER TABLE inbound ADD COLUMN envelope_from TEXT;
-- Set when only the header of a message over the size limit was kept (the IMAP door): its size.
ALTER TABLE inbound ADD COLUMN original_size INTEGER;
-- Fair processing: each sender's oldest pending message, and how many of a sender's messages
-- were processed in the last minute (sender is now set at intake, from the From header).
CREATE INDEX inbound_pending_sender ON inbound (status, sender, id);
CREATE INDEX inbound_sender_processed ON inbound (sender, processed_at);

-- A permanent refusal (5xx) of an outbound mail: never retried, shown by `pbem admin status`.
ALTER TABLE outbound ADD COLUMN given_up_at TEXT;
CREATE INDEX outbound_waiting ON outbound (sent_at, given_up_at, next_attempt_at);

-- Addresses our mail bounces from: set by a delivery report about a player's address, cleared when
-- mail from that player shows that our mail reaches them again.
CREATE TABLE bouncing (
    email  TEXT PRIMARY KEY,
    since  TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT ''
);
"""

SQLITE = _STATEMENTS

# Standard SQL that PostgreSQL 15 accepts as it is (TEXT, INTEGER, ADD COLUMN, plain indexes).
POSTGRESQL: str | None = _STATEMENTS
