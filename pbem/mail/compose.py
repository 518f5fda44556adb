"""Builds outgoing mails from the templates: a text/plain part, a text/html alternative, attachments.

The text part is what players read and quote back; the HTML part shows the board as a coloured table
because mail clients do not reliably keep monospace. Every header that threading and loop prevention
need is set here, in one place.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, formataddr
from functools import cache
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from pbem.resources import data_dir

SERVER_HEADER = "X-Pbem-Server"


@dataclass
class Section:
    title: str | None = None
    lines: list[str] = field(default_factory=list)
    pre: str | None = None
    board_text: str | None = None
    board_html: str | None = None
    scores: str | None = None
    legal: str | None = None


@dataclass
class Attachment:
    filename: str
    content: bytes
    maintype: str = "application"
    subtype: str = "json"


@cache
def _environment() -> Environment:
    return Environment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=False,
    )


def render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def new_message_id(domain: str, *parts: str) -> str:
    """Our Message-IDs carry game and ply, so a reply's In-Reply-To tells which board it answers."""
    label = ".".join(p for p in parts if p)
    return f"<pbem.{label + '.' if label else ''}{secrets.token_hex(6)}@{domain}>"


def build_message(*, from_addr: str, from_name: str, to: str, subject: str, message_id: str,
                  date: datetime, reply_to: str | None = None, in_reply_to: str | None = None,
                  references: list[str] | None = None, auto_submitted: str = "auto-generated",
                  greeting: str | None = None, intro: list[str] | None = None,
                  sections: list[Section] | None = None, footer: list[str] | None = None,
                  attachments: list[Attachment] | None = None,
                  extra_headers: dict[str, str] | None = None) -> EmailMessage:
    context = {"subject": subject, "greeting": greeting, "intro": intro or [], "sections": sections or [],
               "footer": footer or []}
    message = EmailMessage()
    message["From"] = formataddr((from_name, from_addr))
    message["To"] = to
    if reply_to:
        message["Reply-To"] = formataddr((from_name, reply_to))
    message["Subject"] = subject
    message["Date"] = format_datetime(date)
    message["Message-ID"] = message_id
    if in_reply_to:
        message["In-Reply-To"] = in_reply_to
    refs = [r for r in (references or []) if r]
    if refs:
        message["References"] = " ".join(dict.fromkeys(refs))
    message["Auto-Submitted"] = auto_submitted
    message[SERVER_HEADER] = from_name
    for name, value in (extra_headers or {}).items():
        message[name] = value
    message.set_content(render("mail.txt.j2", **context), subtype="plain", charset="utf-8")
    message.add_alternative(render("mail.html.j2", **context), subtype="html", charset="utf-8")
    for attachment in attachments or []:
        message.add_attachment(attachment.content, maintype=attachment.maintype,
                               subtype=attachment.subtype, filename=attachment.filename)
    return message
