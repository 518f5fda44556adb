"""The doors of the server: mail in (SMTP listener, IMAP watcher, ``pbem deliver``) and mail out
(the outbox sender, to a relay or a Maildir). Nothing here knows about any game: messages are raw
bytes handed to and taken from the store.

Names are imported lazily: ``pbem deliver`` runs once per message from the MTA and should not pay
for importing aiosmtpd and imapclient, which only the daemon needs. The function ``deliver`` is
not re-exported (its module has the same name); import it from ``pbem.transport.deliver``.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pbem.transport.deliver import EX_DATAERR, EX_OK, EX_TEMPFAIL, read_message
    from pbem.transport.imap_watcher import ImapWatcher
    from pbem.transport.maildir import Maildir
    from pbem.transport.sender import OutboxSender
    from pbem.transport.smtp_listener import SmtpListener, is_server_address

_WHERE = {
    "EX_DATAERR": "deliver",
    "EX_OK": "deliver",
    "EX_TEMPFAIL": "deliver",
    "read_message": "deliver",
    "ImapWatcher": "imap_watcher",
    "Maildir": "maildir",
    "OutboxSender": "sender",
    "SmtpListener": "smtp_listener",
    "is_server_address": "smtp_listener",
}

__all__ = [
    "EX_DATAERR",
    "EX_OK",
    "EX_TEMPFAIL",
    "ImapWatcher",
    "Maildir",
    "OutboxSender",
    "SmtpListener",
    "is_server_address",
    "read_message",
]


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
