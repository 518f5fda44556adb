"""``pbem deliver``: intake for an MTA that pipes each message into a command (Postfix ``pipe``,
Exim ``pipe`` transport, procmail, a ``.forward``).

The exit status is the whole protocol with the MTA (sysexits.h): 0 means "stored, forget it";
75 (EX_TEMPFAIL) means "keep the message in your queue and try again later", which is what must
happen when the database is locked, unavailable or the disk is full; 65 (EX_DATAERR) means "this
message can never be accepted" and makes the MTA bounce it. A traceback would be worse than
useless here (the MTA may put it in a bounce), so every failure becomes one line on stderr, and
the line for a message over the size limit says what the sender can do about it.

The envelope sender is stored with the message (``-f SENDER``, as Postfix's pipe passes
``${sender}``; else the Return-Path the MTA wrote): a null sender marks a bounce, which must never
be answered.

Once the mail is stored, the server running on the same data folder is woken through its wake
socket (``pbem.outbox.wake``), so the move is processed at once rather than at the processor's next
poll. No server listening is no failure: the mail is stored, and a server finds it when it starts.
The MTA starts this once per message, so what it imports is kept to what storing a mail needs;
the mail reader's modules are imported only on the paths that need them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO, TextIO

from pbem.clock import Clock, SystemClock
from pbem.outbox.wake import notify

if TYPE_CHECKING:
    from pbem.config import Config
    from pbem.store.base import Store

EX_OK = 0
EX_DATAERR = 65
EX_TEMPFAIL = 75


def read_message(stream: BinaryIO, limit: int) -> bytes:
    """Read a message from ``stream``, at most ``limit + 1`` bytes.

    Reading one byte past the limit is enough to know the message is too large without holding
    an arbitrarily large message in memory.
    """
    chunks: list[bytes] = []
    remaining = limit + 1
    while remaining > 0:
        chunk = stream.read(min(remaining, 1 << 16))
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    return b"".join(chunks)


def deliver(config: Config, raw: bytes, store_factory: Callable[[], Store], *,
            clock: Clock | None = None, source_ref: str | None = None,
            stderr: TextIO | None = None, envelope_from: str | None = None) -> int:
    """Store one message piped in by an MTA; return the exit status for the MTA.

    ``store_factory`` opens the store (and may fail: that is a temporary failure too). The store
    is closed before returning. A duplicate (same bytes or Message-ID already stored) is a
    success: the MTA delivered it twice, the server keeps it once. ``envelope_from`` is the
    sender the MTA passed (``-f``; "" or ``<>`` for the null sender); without it the message's
    Return-Path is used.
    """
    err = stderr if stderr is not None else sys.stderr
    if not raw.strip():
        print("pbem deliver: empty message, not stored", file=err)
        return EX_DATAERR
    if len(raw) > config.max_message_bytes:
        from pbem.reading.limits import describe_size

        print(f"pbem deliver: message too big for {config.address}: the limit is "
              f"{describe_size(config.max_message_bytes)}; moves need no attachments, send the "
              "move as plain text", file=err)
        return EX_DATAERR
    if envelope_from is None:
        from pbem.reading.headers import return_path_of

        envelope_from = return_path_of(raw)
    else:
        envelope_from = envelope_from.strip().strip("<>").strip()
    now = (clock or SystemClock()).now()
    store: Store | None = None
    try:
        store = store_factory()
        result = store.accept_inbound(raw, "deliver", now, source_ref=source_ref,
                                      envelope_from=envelope_from)
    except Exception as exc:
        print(f"pbem deliver: cannot store the message now, try again later: "
              f"{type(exc).__name__}: {exc}", file=err)
        return EX_TEMPFAIL
    finally:
        if store is not None:
            try:
                store.close()
            except Exception as exc:
                # Closing after a successful commit cannot lose the message; only mention it.
                print(f"pbem deliver: warning: closing the store failed: {exc}", file=err)
    if result.status == "pending":
        notify(config.data_dir)
    return EX_OK
