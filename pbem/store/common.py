"""Helpers every backend shares, so SQLite and PostgreSQL store the same text for the same value.

Timestamps are stored as fixed-width ISO-8601 UTC text because it sorts correctly as plain text in
any database and reads unambiguously in a dump; JSON is compact to keep game records small.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import re
from datetime import UTC, datetime
from typing import Any

from pbem.headerblock import plain_header_fields
from pbem.plainaddress import getaddresses, parseaddr
from pbem.store.base import UNRATED_ENDINGS
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


def next_counted_id(db: Any, prefix: str, table: str) -> str:
    """The next id ``prefix-N`` of ``game_counters`` for rows of ``table`` (games, tournaments), on
    a connection of ``pbem.store.sql.Db``'s kind, inside its write transaction."""
    while True:
        # One atomic step: a second worker waits for this row and then counts on from it.
        number = int(db.value("INSERT INTO game_counters (prefix, next) VALUES (?, 2)"
                              " ON CONFLICT (prefix) DO UPDATE SET next = game_counters.next + 1"
                              " RETURNING next", (prefix,))) - 1
        # Skip ids taken by rows inserted with explicit ids (imports, tests).
        if db.one(f"SELECT 1 FROM {table} WHERE id = ?", (f"{prefix}-{number}",)) is None:
            return f"{prefix}-{number}"


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


#: Intake parses at most this much of the header block (before the SMTP 250, so it must stay
#: cheap and small whatever the message holds; a Message-ID further down is not looked for).
_HEAD_BYTES = 64_000


_ADDRESS_HEADERS = frozenset(("to", "cc", "delivered-to", "x-original-to"))
def intake_keys(raw: bytes) -> tuple[str | None, str | None, str | None]:
    """(Message-ID, From address in lower case, route) from the header block alone.

    Only the start of the header block is parsed: intake runs before the SMTP 250 and must stay
    cheap even for a large or hostile message, and a body can never hold these fields. The From
    address is what fair processing groups by; the reader decides later what it really is. The
    route is the hash of the first seat token in a recipient's plus-address (``pbem+TOKEN-12@host``,
    the Reply-To of every game mail): the store looks it up among the seats, so that the game a move
    is about is known before the move is read, and one game's mail is processed in arrival order
    (``Tx.claim_inbound``).
    """
    match = _BLANK_LINE.search(raw, 0, _HEAD_BYTES)
    head = raw[: match.end()] if match else raw[:_HEAD_BYTES]
    text: str | None = None
    sender: str | None = None
    route: str | None = None
    try:
        fields = plain_header_fields(head)
        if fields is None:
            msg = email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(head)
            value = msg.get("Message-ID")
            from_value = msg.get("From")
            items = msg.raw_items()
        else:
            value = next((v for name, v in fields if name.lower() == "message-id"), None)
            from_value = next((v for name, v in fields if name.lower() == "from"), None)
            items = iter(fields)
        text = None if value is None else str(value)
        if from_value is not None:
            address = parseaddr(str(from_value)[:2000])[1].strip().lower()
            sender = address if "@" in address and address.isprintable() else None
        values = [str(v)[:2000] for name, v in items if name.lower() in _ADDRESS_HEADERS]
        for _name, address in getaddresses(values):
            local = address.rpartition("@")[0]
            token = split_reply_tag(local.partition("+")[2])[0] if "+" in local else ""
            if looks_like_token(token):
                route = token_hash(token)
                break
    except Exception:
        # Should the parser raise on odd input, the message is still accepted, de-duplicated by
        # its bytes alone.
        return None, None, None
    return normalise_message_id(text), sender, route


def message_id_of(raw: bytes) -> str | None:
    return intake_keys(raw)[0]


def result_columns(status: str, record: dict[str, Any], seats: list[str]
                   ) -> tuple[str | None, dict[str, str | None]]:
    """The searchable copy of a game's result: how it ended (the result's reason) and, per seat,
    "win", "loss" or "draw" (None while it runs or when it counts for nobody). A game in which every
    seat is a winner, or none is, is a draw for all, as the standings count it."""
    result = record.get("result")
    if not isinstance(result, dict):
        return None, {}
    reason = result.get("reason")
    ending = str(reason) if isinstance(reason, str) and reason else None
    if status != "over" or ending in UNRATED_ENDINGS:
        return ending, {}
    winners = {str(w) for w in result.get("winners") or []}
    if not winners or winners >= set(seats):
        return ending, dict.fromkeys(seats, "draw")
    return ending, {seat: "win" if seat in winners else "loss" for seat in seats}
