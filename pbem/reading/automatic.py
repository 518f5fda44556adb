"""Mail that nobody typed (bounces, vacation replies, list traffic, our own mail coming back):
answering it starts mail loops, so the reader says why it must be left unanswered, and for a
bounce, which addresses failed."""

from __future__ import annotations

import re
from collections.abc import Collection
from email.message import Message
from email.utils import getaddresses, parseaddr

from pbem.reading.addresses import normalize, same_mailbox
from pbem.reading.body import content_param, decode_bytes, part_bytes, walk_parts
from pbem.reading.headers import LEADING_BRACKET, first_raw, header_text, raw_values

_VACATION = re.compile(
    r"(?i)^(?:out of (?:the )?office|auto:|automatic reply|auto[- ]?reply|autoreply"
    r"|abwesenheitsnotiz|automatische antwort|r[ée]ponse automatique|vacation"
    r"|risposta automatica|respuesta autom[áa]tica|automatisch antwoord|autosvar)"
)


def automatic_kind(msg: Message, subject: str, from_spec: str, own: Collection[str]) -> str | None:
    """Why this mail must not be answered, or None when a person wrote it."""
    try:
        ctype = msg.get_content_type()
        report_type = content_param(msg, "report-type")
    except Exception:
        ctype, report_type = "", ""
    parts = []
    for part in walk_parts(msg):
        try:
            parts.append(part.get_content_type())
        except Exception:
            continue

    return_path = first_raw(msg, "Return-Path").strip()
    local = from_spec.rpartition("@")[0] if "@" in from_spec else from_spec
    if not from_spec:
        local = parseaddr(first_raw(msg, "From"))[1].rpartition("@")[0]
    if (
        return_path.replace(" ", "") == "<>"
        or local.lower() in ("mailer-daemon", "postmaster")
        or (ctype == "multipart/report" and report_type == "delivery-status")
        or any(t in parts for t in _DSN_TYPES)
    ):
        return "bounce"

    if any(same_mailbox(from_spec, addr) for addr in own) or raw_values(msg, "X-Pbem-Server"):
        return "own-mail"

    auto_submitted = (header_text(msg, "Auto-Submitted") or "").split(";")[0].strip().lower()
    lead = LEADING_BRACKET.match(subject)
    bare_subject = subject[lead.end() :] if lead else subject
    if (
        (auto_submitted and auto_submitted != "no")
        or raw_values(msg, "X-Autoreply")
        or raw_values(msg, "X-Autorespond")
        or _VACATION.match(subject.strip())
        or _VACATION.match(bare_subject)
        or ctype == "multipart/report"  # read receipts, abuse and TLS reports
        or "message/disposition-notification" in parts
    ):
        return "auto-reply"

    precedence = (header_text(msg, "Precedence") or "").strip().lower()
    if precedence in ("bulk", "junk"):
        return "bulk"
    if precedence == "list" or raw_values(msg, "List-Id") or raw_values(msg, "List-Unsubscribe"):
        return "list"
    if precedence == "auto_reply":
        return "auto-reply"
    return None


def _dsn_text(part: Message) -> str:
    payload = part.get_payload()
    if isinstance(payload, list):  # the parser splits delivery-status into header blocks
        blocks = []
        for block in payload:
            if isinstance(block, Message):
                blocks.append("\n".join(f"{k}: {v}" for k, v in block.raw_items()))
        return "\n\n".join(blocks)
    return decode_bytes(part_bytes(part), None)


_XTEXT = re.compile(r"\+([0-9A-F]{2})")


def _xtext_decode(value: str) -> str:
    def repl(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if "!" <= ch <= "~" else m.group(0)

    return _XTEXT.sub(repl, value)


def _failed_in_dsn(text: str) -> list[str]:
    found: list[str] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        fields: dict[str, str] = {}
        for line in re.sub(r"\n[ \t]+", " ", block).split("\n"):
            name, colon, value = line.partition(":")
            if colon:
                fields.setdefault(name.strip().lower(), value.strip())
        if not ({"final-recipient", "original-recipient"} & fields.keys()):
            continue
        action = fields.get("action", "").lower()
        if action and not action.startswith("failed"):
            continue  # delayed, delivered, relayed, expanded: not a failure
        for key in ("original-recipient", "final-recipient"):
            value = fields.get(key, "")
            addr = value.partition(";")[2] if ";" in value else value
            if key == "original-recipient":
                addr = _xtext_decode(addr)
            addr = normalize(addr)
            if "@" in addr and addr not in found:
                found.append(addr)
    return found


_DSN_TYPES = ("message/delivery-status", "message/global-delivery-status")


def bounce_recipients(msg: Message) -> list[str]:
    found: list[str] = []
    for part in walk_parts(msg):
        try:
            if part.get_content_type() in _DSN_TYPES:
                found.extend(a for a in _failed_in_dsn(_dsn_text(part)) if a not in found)
        except Exception:
            continue
    for value in raw_values(msg, "X-Failed-Recipients"):  # Exim
        for _name, spec in getaddresses([value]):
            addr = normalize(spec)
            if "@" in addr and addr not in found:
                found.append(addr)
    return found
