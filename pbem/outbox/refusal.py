"""A delivery report for mail the relay refused at RCPT TO.

A relay that answers ``550 5.1.1 User unknown`` to RCPT TO brings the news a bounce brings later
for mail it accepted: our mail does not reach that address. So the sender writes the refusal down
as a bounce, a delivery status report (RFC 3464) from the null sender, which is stored as inbound
mail in the transaction that gives the outbox row up and read by the processor like a report from
any other mail system (``pbem.community.bounces``): the other players are told, an invitation to
an address that takes no mail is cancelled. The report's Message-ID follows from the refused
mail's, so a refusal repeated (after a crash before the mark) is stored once.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from datetime import datetime
from email.utils import format_datetime

from pbem.store.base import Outbound

_STATUS = re.compile(r"^([245]\.\d{1,3}\.\d{1,3})\b")
_KEPT = ("From", "To", "Subject", "Date", "Message-ID")  # of the refused mail, in the report


def _clean(text: str) -> str:
    """One line of printable ASCII: the relay's words go into header-like fields."""
    return " ".join("".join(ch if " " <= ch <= "~" else "?" for ch in text).split())


def _headers(raw: bytes) -> list[str]:
    """The refused mail's identifying header fields (its Reply-To, which holds a seat's token, is
    left out: the report is stored as inbound mail)."""
    head = raw.split(b"\r\n\r\n", 1)[0].split(b"\n\n", 1)[0].decode("ascii", "replace")
    fields: list[str] = []
    for line in re.split(r"\r?\n(?![ \t])", head):
        name = line.partition(":")[0].strip()
        if name.lower() in (k.lower() for k in _KEPT):
            fields.append(_clean(line.replace("\r\n", " ").replace("\n", " ")))
    return fields


def refusal_report(row: Outbound, refused: Mapping[str, tuple[int, str]], relay: str, domain: str,
                   now: datetime) -> bytes:
    """The report of ``refused`` (recipient -> the relay's code and words) for the outbox row."""
    digest = hashlib.sha256(row.message_id.encode("utf-8", "replace")).hexdigest()[:32]
    boundary = f"refused-{digest[:16]}"
    said = {rcpt: _clean(f"{code} {text}") for rcpt, (code, text) in refused.items()}
    human = [f"The mail relay {relay} refused our mail to:", ""]
    human += [f"  <{_clean(rcpt)}>: {words}" for rcpt, words in said.items()]
    status = []
    for rcpt, (code, text) in refused.items():
        enhanced = _STATUS.match(text.strip())
        status += ["", f"Final-Recipient: rfc822; {_clean(rcpt)}", "Action: failed",
                   f"Status: {enhanced.group(1) if enhanced else f'{str(code)[:1]}.0.0'}",
                   f"Remote-MTA: dns; {_clean(relay.rpartition(':')[0] or relay)}",
                   f"Diagnostic-Code: smtp; {said[rcpt]}"]
    lines = [
        f"From: Mail Delivery System <MAILER-DAEMON@{domain}>",
        f"To: <{_clean(row.sender)}>",
        "Subject: Undelivered Mail Returned to Sender",
        f"Date: {format_datetime(now)}",
        f"Message-ID: <refused.{digest}@{domain}>",
        "Auto-Submitted: auto-replied",
        "MIME-Version: 1.0",
        f'Content-Type: multipart/report; report-type=delivery-status; boundary="{boundary}"',
        "",
        f"--{boundary}",
        "Content-Type: text/plain; charset=us-ascii",
        "",
        *human,
        "",
        f"--{boundary}",
        "Content-Type: message/delivery-status",
        "",
        f"Reporting-MTA: dns; {domain}",
        f"Arrival-Date: {format_datetime(row.created_at)}",
        *status,
        "",
        f"--{boundary}",
        "Content-Type: text/rfc822-headers",
        "",
        *_headers(row.raw),
        "",
        f"--{boundary}--",
        "",
    ]
    return "\r\n".join(lines).encode("ascii", "replace")


__all__ = ["refusal_report"]
