"""What a player's mail client does, for ``pbem send``/``pbem mailbox`` and the end-to-end tests:
write a new mail, or reply to one the way clients do (to the Reply-To, ``Re:`` subject, threading
headers, the previous mail quoted below the answer)."""

from __future__ import annotations

import email
import email.policy
from datetime import UTC, datetime
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses, make_msgid, parseaddr
from pathlib import Path


def new_mail(from_addr: str, to: str, body: str, subject: str = "") -> EmailMessage:
    message = EmailMessage()
    message["From"] = from_addr
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime.now(UTC))
    message["Message-ID"] = make_msgid(domain=from_addr.rsplit("@", 1)[-1] or "localhost")
    message.set_content(body)
    return message


def plain_text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain",))
    return part.get_content() if part is not None else ""


def reply_to(original: EmailMessage, from_addr: str, body: str) -> EmailMessage:
    """A top-posted reply with the original quoted below, as Gmail/Thunderbird write it."""
    target = original.get("Reply-To") or original.get("From") or ""
    subject = str(original.get("Subject", ""))
    if not subject.lower().startswith("re:"):
        subject = f"Re: {subject}"
    reply = new_mail(from_addr, target, "", subject)
    msgid = original.get("Message-ID")
    if msgid:
        reply["In-Reply-To"] = msgid
        refs = str(original.get("References", "")).split()
        reply["References"] = " ".join([*refs, msgid])
    sender = parseaddr(str(original.get("From", "")))
    quoted = "\n".join(f"> {line}" if line else ">" for line in plain_text(original).splitlines())
    when = str(original.get("Date", "some day"))
    reply.set_content(f"{body}\n\nOn {when}, {sender[0] or sender[1]} <{sender[1]}> wrote:\n{quoted}\n")
    return reply


def read_maildir(path: Path) -> list[tuple[Path, EmailMessage]]:
    """Every mail in a Maildir (new/ and cur/), oldest first by file name and mtime."""
    found = []
    for sub in ("new", "cur"):
        folder = Path(path) / sub
        if folder.is_dir():
            found += [p for p in folder.iterdir() if p.is_file()]
    found.sort(key=lambda p: (p.stat().st_mtime, p.name))
    return [(p, email.message_from_bytes(p.read_bytes(), policy=email.policy.default))  # type: ignore[misc]
            for p in found]


def mails_for(path: Path, address: str) -> list[EmailMessage]:
    address = address.lower()
    result = []
    for _path, message in read_maildir(path):
        recipients = [a.lower() for _n, a in getaddresses([str(message.get("To", ""))])]
        if address in recipients:
            result.append(message)
    return result
