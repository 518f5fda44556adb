"""The doors of the server: mail in (SMTP listener, IMAP watcher, ``pbem deliver``) and mail out
(the outbox sender, to a relay or a Maildir). Nothing here knows about any game: messages are raw
bytes handed to and taken from the store."""

from pbem.transport.deliver import EX_DATAERR, EX_OK, EX_TEMPFAIL, deliver, read_message
from pbem.transport.imap_watcher import ImapWatcher
from pbem.transport.maildir import Maildir
from pbem.transport.sender import OutboxSender
from pbem.transport.smtp_listener import SmtpListener, is_server_address

__all__ = [
    "EX_DATAERR",
    "EX_OK",
    "EX_TEMPFAIL",
    "ImapWatcher",
    "Maildir",
    "OutboxSender",
    "SmtpListener",
    "deliver",
    "is_server_address",
    "read_message",
]
