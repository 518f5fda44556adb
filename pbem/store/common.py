"""Helpers every backend shares, so SQLite and PostgreSQL store the same text for the same value.

Timestamps are stored as fixed-width ISO-8601 UTC text because it sorts correctly as plain text in
any database and reads unambiguously in a dump; JSON is compact to keep game records small.
"""

from __future__ import annotations

import email.parser
import email.policy
import email.utils
import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from pbem.tokens import looks_like_token, split_reply_tag, token_hash


class StoreError(Exception):
    """Base of the errors the storage layer raises on purpose."""


class SchemaVersionError(StoreError):
    """The database was written by a newer pbem; running older code on it could corrupt it."""


class StoreUnavailableError(StoreError):
    """The database is unreachable, or it aborted a transaction to resolve a conflict (deadlock,
    lost connection): nothing was changed, and the same work may be tried again later."""


class StoreClosedError(StoreError):
    """The store was closed; a use after close is a bug in the caller, not a transient failure."""


def now_utc() -> datetime:
    return datetime.now(UTC)


def dt_to_text(value: datetime) -> str:
    """Fixed width, so that text order is time order in SQL comparisons and ORDER BY."""
    if value.tzinfo is None or value.utcoffset() is None:
        # A naive datetime is ambiguous: refusing it catches the bug where it is made, not later
        # when a reminder fires an hour off.
        raise ValueError(f"naive datetime {value!r}: the store needs timezone-aware UTC times")
    v = value.astimezone(UTC)
    return (f"{v.year:04d}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}:"
            f"{v.second:02d}.{v.microsecond:06d}Z")


def dt_from_text(value: str | None) -> datetime | None:
    if value is None:
        return None
    return datetime.fromisoformat(value).astimezone(UTC)


def json_dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def json_loads(value: str | bytes) -> Any:
    return json.loads(value)


def sha256_hex(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


_BLANK_LINE = re.compile(rb"\r?\n\r?\n")
_ANGLE_ID = re.compile(r"<[^<>]+>")


def normalise_message_id(value: str | None) -> str | None:
    """Folding may put whitespace inside an id and some mailers omit the brackets; both copies of
    one message must still compare equal, so whitespace goes and brackets are added."""
    if value is None:
        return None
    compact = "".join(value.split())
    match = _ANGLE_ID.search(compact)
    if match:
        return match.group(0)
    compact = compact.strip("<>")
    return f"<{compact}>" if compact else None


def _header_block(raw: bytes) -> Any:
    """Only the header block is parsed: intake runs before the SMTP 250 and must stay cheap even
    for a large message, and a body can never hold the headers read here anyway."""
    match = _BLANK_LINE.search(raw)
    head = raw[: match.end()] if match else raw
    try:
        msg = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(head)
        str(msg.get("Message-ID", ""))  # the modern parser raises on use, not on parsing
        return msg
    except Exception:
        # The modern header parser has raised on odd input before; the legacy parser never
        # interprets the values, which is all that is needed here. Should even that fail, the
        # message is still accepted, de-duplicated by its bytes alone.
        try:
            return email.parser.BytesHeaderParser().parsebytes(head)
        except Exception:
            return None


_ADDRESS_HEADERS = ("To", "Cc", "Delivered-To", "X-Original-To")


def intake_keys(raw: bytes) -> tuple[str | None, str | None]:
    """(Message-ID, route) of a message about to be stored. The route is the hash of the first seat
    token in a recipient's plus-address (``pbem+TOKEN-12@host``, the Reply-To of every game mail):
    the store looks it up among the seats, so that the game a move is about is known before the
    move is read, and one game's mail is processed in arrival order (``Tx.claim_inbound``)."""
    msg = _header_block(raw)
    if msg is None:
        return None, None
    value = msg.get("Message-ID")
    message_id = normalise_message_id(None if value is None else str(value))
    route = None
    # The raw values: only the addresses are wanted, and parsing them into header objects costs
    # more than the rest of the intake.
    wanted = {name.lower() for name in _ADDRESS_HEADERS}
    values = [str(v) for name, v in msg.raw_items() if name.lower() in wanted]
    for _name, address in email.utils.getaddresses(values):
        local = address.rpartition("@")[0]
        token = split_reply_tag(local.partition("+")[2])[0] if "+" in local else ""
        if looks_like_token(token):
            route = token_hash(token)
            break
    return message_id, route


def message_id_of(raw: bytes) -> str | None:
    return intake_keys(raw)[0]
