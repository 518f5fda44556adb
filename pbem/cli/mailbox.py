"""``pbem send|mailbox``: a player's mail client for trying the server on one machine.

It does what a mail client does, for these commands and the end-to-end tests: write a new mail, or
reply to one the way clients do (to the Reply-To, ``Re:`` subject, threading headers, the previous
mail quoted below the answer), and read what an address received from the outbox Maildir."""

from __future__ import annotations

import argparse
import email
import email.policy
import smtplib
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from email.headerregistry import Address
from email.message import EmailMessage
from email.utils import format_datetime, getaddresses, make_msgid, parseaddr
from pathlib import Path

from pbem.cli.common import add_command, config_of


def new_mail(from_addr: str, to: str, body: str, subject: str = "") -> EmailMessage:
    message = EmailMessage()
    message["From"] = from_addr
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = format_datetime(datetime.now(UTC))
    message["Message-ID"] = make_msgid(domain=parseaddr(from_addr)[1].rpartition("@")[2] or "localhost")
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


def address_argument(text: str) -> str:
    """``--from``/``--to``: one address, ``ann@example.org`` or ``Ann <ann@example.org>``.

    The stdlib parser is lenient (``parseaddr("ann@x y")`` gives ``ann@xy``), so the address part
    is parsed strictly as an addr-spec, and it must have a local part and a domain.
    """
    name, spec = "", text.strip()
    if spec.endswith(">") and "<" in spec:
        name, _, spec = spec[:-1].rpartition("<")
    try:
        address = Address(display_name=name.strip().strip('"'), addr_spec=spec)
    except Exception:  # the parser raises ValueError, HeaderParseError and IndexError alike
        address = None
    if address is None or not address.username or not address.domain:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a mail address: it needs a local part and a domain, like "
            "ann@example.org or \"Ann <ann@example.org>\"")
    return str(address)


def addr_spec(address: str) -> str:
    """The bare address of an ``address_argument`` value (mail is looked up by it)."""
    return parseaddr(address)[1]


# --- the commands ---------------------------------------------------------------------------------

def cmd_send(args: argparse.Namespace, extra: list[str]) -> int:
    """Submit a mail to the local listener as a player's mail client would."""
    config = config_of(args)
    body = " ".join(args.text).replace("\\n", "\n")
    if args.reply:
        received = mails_for(config.outbox_maildir, addr_spec(args.sender))
        if not received:
            print(f"pbem send: {args.sender} has received no mail to reply to", file=sys.stderr)
            return 2
        message = reply_to(received[-1], args.sender, body)
    else:
        message = new_mail(args.sender, args.to or config.address, body, args.subject or "")
    host, port = args.host or config.smtp_host, args.port or config.smtp_port
    try:
        with smtplib.SMTP(host, port, timeout=30) as smtp:
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as exc:
        print(f"pbem send: cannot submit to {host}:{port}: {exc} (is `pbem serve` running?)",
              file=sys.stderr)
        return 1
    subject = str(message["Subject"] or "")
    print(f"sent {subject!r} from {args.sender} to {message['To']}" if subject
          else f"sent (no subject) from {args.sender} to {message['To']}")
    return 0


def cmd_mailbox(args: argparse.Namespace, extra: list[str]) -> int:
    """What an address received, read from the outbox Maildir of the embedded setup."""
    config = config_of(args)
    received = mails_for(config.outbox_maildir, args.address)
    if not received:
        print(f"no mail for {args.address} in {config.outbox_maildir}")
        return 0
    shown = received if args.all else received[-1:]
    for message in shown:
        print(f"From: {message['From']}\nTo: {message['To']}\nReply-To: {message.get('Reply-To', '')}")
        print(f"Date: {message['Date']}\nSubject: {message['Subject']}\n")
        print(plain_text(message))
        print("=" * 72)
    if not args.all and len(received) > 1:
        print(f"({len(received)} mails in all; --all shows every one)")
    return 0


def register_all(sub: argparse._SubParsersAction) -> None:
    def add(name: str, func: Callable[..., int], help_text: str) -> argparse.ArgumentParser:
        return add_command(sub, name, func, help_text)

    p = add("send", cmd_send, "send a mail to the local listener as a player would")
    p.add_argument("--from", dest="sender", required=True, type=address_argument, metavar="ADDRESS",
                   help="the player's address")
    p.add_argument("--to", type=address_argument, metavar="ADDRESS",
                   help="the recipient (default: the server address)")
    p.add_argument("--subject", help="the subject line (default: none)")
    p.add_argument("--reply", action="store_true",
                   help="reply to the newest mail this address received (Reply-To, Re:, quoting)")
    p.add_argument("--host", help="the SMTP listener's host (default: [smtp] host of the configuration)")
    p.add_argument("--port", type=int, help="its port (default: [smtp] port of the configuration)")
    p.add_argument("text", nargs="+", help="the body; \\n starts a new line")
    p = add("mailbox", cmd_mailbox, "show the mail an address received (embedded Maildir outbox)")
    p.add_argument("address", help="the player's address")
    p.add_argument("--all", action="store_true", help="every mail, oldest first (default: the newest)")
