"""Mail that nobody typed (bounces, vacation replies, list traffic, our own mail coming back):
answering it starts mail loops, so the reader says why it must be left unanswered, and for a
bounce, which addresses failed.

The surest sign of a bounce is the null envelope sender (``MAIL FROM:<>``, RFC 5321 4.5.5; RFC 3834
says never to answer it). It lives outside the message: each door keeps it (the SMTP listener from
MAIL FROM, ``pbem deliver`` from ``-f`` or the MTA's Return-Path, IMAP from the Return-Path the
delivering server wrote) and the reader gets it as ``envelope_from``. Mail systems also mark
bounces in other ways, all checked here: Return-Path ``<>``, ``X-Envelope-From: <>``, a From or
Sender of MAILER-DAEMON or postmaster, ``X-Failed-Recipients`` (Exim), a delivery-status report.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from email.message import Message

from pbem.plainaddress import getaddresses, parseaddr
from pbem.reading.addresses import normalize, same_mailbox
from pbem.reading.body import content_param, decode_bytes, part_bytes, walk_parts
from pbem.reading.headers import LEADING_BRACKET, clean_str, first_raw, header_text, raw_values

_VACATION = re.compile(
    r"(?i)^(?:out of (?:the )?office|auto:|automatic reply|auto[- ]?reply|autoreply"
    r"|abwesenheitsnotiz|automatische antwort|r[ée]ponse automatique|vacation"
    r"|risposta automatica|respuesta autom[áa]tica|automatisch antwoord|autosvar)"
)


_DAEMONS = ("mailer-daemon", "postmaster", "mail-daemon", "mailerdaemon", "double-bounce")

#: Subjects of delivery reports from the common MTAs and providers. Only a hint: the processor
#: treats such a mail as a bounce when no command was found in it, since a player may well write
#: "Re: Undeliverable" about a real problem.
DSN_SUBJECT = re.compile(
    r"(?i)(?:undeliver|undelivered mail|returned mail|mail delivery (?:failed|failure|subsystem)"
    r"|delivery (?:status notification|failure|has failed|notification|report)|failure notice"
    r"|non[- ]?deliver|could not be delivered|message not delivered|mail system error"
    r"|unzustellbar|nicht zustellbar|non remis|no entregado|non recapitabile|onbestelbaar)"
)


def _is_daemon(address: str) -> bool:
    local = address.strip().strip("<>").rpartition("@")[0] or address.strip().strip("<>")
    return local.lower() in _DAEMONS


def is_null_sender(value: str | None) -> bool:
    """``<>`` (or empty) as an envelope sender: the mark of a bounce."""
    return value is not None and value.replace(" ", "").strip("<>") == ""


def automatic_kind(msg: Message, subject: str, from_spec: str, own: Collection[str],
                   envelope_from: str | None = None) -> str | None:
    """Why this mail must not be answered, or None when a person wrote it.

    ``envelope_from``: the SMTP envelope sender as the door saw it ("" for ``<>``), or None when
    the door did not know it (then the headers are all there is)."""
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
    spec = from_spec or parseaddr(first_raw(msg, "From"))[1]
    local = spec.rpartition("@")[0] if "@" in spec else spec
    if (
        is_null_sender(envelope_from)
        or (envelope_from is not None and _is_daemon(envelope_from))
        or (return_path and is_null_sender(return_path))
        or any(is_null_sender(v) for v in raw_values(msg, "X-Envelope-From"))
        or local.lower() in _DAEMONS
        or any(_is_daemon(parseaddr(v)[1]) for v in raw_values(msg, "Sender"))
        or raw_values(msg, "X-Failed-Recipients")
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


def _address(value: str) -> str | None:
    """A reported address fit to store and compare, or None (garbage, or bytes that were no text)."""
    addr = normalize(clean_str(value))
    if "@" not in addr or "\ufffd" in addr or any(ch.isspace() for ch in addr) or len(addr) > 320:
        return None
    return addr


def _failures_in_dsn(text: str) -> dict[str, str]:
    """Each failed recipient of a delivery-status text, with what the remote server said about it
    (Diagnostic-Code: "550 5.1.1 User unknown"; "" when the report does not say)."""
    found: dict[str, str] = {}
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
        diagnostic = fields.get("diagnostic-code", "")
        reason = clean_str(diagnostic.partition(";")[2] if ";" in diagnostic else diagnostic).strip()
        reason = " ".join(reason.split())[:300]
        for key in ("original-recipient", "final-recipient"):
            value = fields.get(key, "")
            addr = value.partition(";")[2] if ";" in value else value
            if key == "original-recipient":
                addr = _xtext_decode(addr)
            clean = _address(addr)
            if clean and clean not in found:
                found[clean] = reason
    return found


def failure_reasons(msg: Message) -> dict[str, str]:
    """What a delivery report says about each failed recipient, where it says something (for the
    people told that our mail to a player bounces)."""
    found: dict[str, str] = {}
    for part in walk_parts(msg):
        try:
            if part.get_content_type() in _DSN_TYPES:
                for addr, reason in _failures_in_dsn(_dsn_text(part)).items():
                    if reason:
                        found.setdefault(addr, reason)
        except Exception:
            continue
    return found


_DSN_TYPES = ("message/delivery-status", "message/global-delivery-status")


_TEXT_ADDRESS = re.compile(
    r"[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}")


def bounce_recipients(msg: Message, text: str = "", own: Collection[str] = ()) -> list[str]:
    """The addresses a bounce reports as failed: from its delivery-status parts and Exim's
    X-Failed-Recipients, else (a plain-text bounce) every address named in the first lines of its
    text other than our own; the caller keeps only addresses it knows (players' seats)."""
    found = _reported_recipients(msg)
    if found or _has_report(msg):
        return found  # a report that names no failure (a delay notice) names no one
    for line in text[:20_000].split("\n")[:200]:
        for found_addr in _TEXT_ADDRESS.findall(line):
            addr = _address(found_addr)
            if addr and addr not in found and not any(same_mailbox(addr, o) for o in own):
                found.append(addr)
    return found


def _has_report(msg: Message) -> bool:
    for part in walk_parts(msg):
        try:
            if part.get_content_type() in _DSN_TYPES:
                return True
        except Exception:
            continue
    return False


def _reported_recipients(msg: Message) -> list[str]:
    found: list[str] = []
    for part in walk_parts(msg):
        try:
            if part.get_content_type() in _DSN_TYPES:
                found.extend(a for a in _failures_in_dsn(_dsn_text(part)) if a not in found)
        except Exception:
            continue
    for value in raw_values(msg, "X-Failed-Recipients"):  # Exim
        for _name, spec in getaddresses([value[:2000]]):
            addr = _address(spec)
            if addr and addr not in found:
                found.append(addr)
    return found
