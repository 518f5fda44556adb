"""The embedded SMTP listener: mail arrives here directly when no IMAP mailbox is used.

The one promise it makes is the SMTP one: ``250`` means the message is durably stored. The raw bytes
are written with ``store.accept_inbound`` *before* the reply, so a crash after the ``250`` loses
nothing, and any failure to store answers ``451`` so the sending MTA keeps its copy and retries.
Processing happens later, in the daemon's processor thread; the listener only wakes it.

aiosmtpd runs its own asyncio loop in a thread. Store calls block (SQLite fsync, a PostgreSQL round
trip), so they run in a single worker thread, and with group commit: every message that arrived while
the previous write was on its way to disk is stored in the next single transaction (one flush for
all), and each session gets its 250 only after that commit returned. While the database is away or
its disk is full, every message is answered ``451`` (``452 4.3.1`` for a full disk): the sending
MTA keeps it and tries again; the fault tracker logs that once (``pbem.faults``).

The envelope sender (MAIL FROM) is stored with the message: ``<>`` marks a bounce, which the
message itself need not say, and a bounce must never be answered.

DATA is read by our own method rather than aiosmtpd's: that one keeps every line as an object of
its own (about 170 bytes each), so 2 MB of empty lines took 175 MB and 2.8 s of CPU per session.
Here a message is one growing buffer, read in chunks up to each ``.<CR><LF>``; the size limit is
enforced while it arrives (what is over the limit is read and dropped, never kept), and a message
over it is refused with a 552 that tells the sender the limit and that moves need no
attachments, since that text reaches the player in their mail system's bounce.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import MISSING, SMTP, Envelope, Session, syntax

from pbem.clock import Clock, SystemClock
from pbem.config import Config
from pbem.faults import Faults, is_fault, reason_of, retry_once
from pbem.plainaddress import ADDR_SPEC
from pbem.reading.limits import describe_size
from pbem.store.base import Store

log = logging.getLogger(__name__)

REPLY_NO_MAILBOX = "550 5.1.1 <{}>: no such mailbox here"
REPLY_TRY_LATER = "451 4.3.0 try again later"
REPLY_DISK_FULL = "452 4.3.1 insufficient system storage, try again later"


def try_later_reply(exc: BaseException) -> str:
    """451, or 452 when the disk is full (RFC 5321 "insufficient system storage")."""
    reason = reason_of(exc).lower()
    return REPLY_DISK_FULL if "full" in reason or "no space" in reason else REPLY_TRY_LATER


def too_big_reply(config: Config) -> str:
    """The one line a sender gets for a mail over the size limit (their MTA puts it in the bounce)."""
    return (f"552 5.3.4 Message too big for {config.address}: the limit is "
            f"{describe_size(config.max_message_bytes)}; moves need no attachments, send the move "
            "as plain text")


def is_server_address(server_address: str, candidate: str) -> bool:
    """True for the server address itself and for its plus-addresses ``local+ANYTHING@domain``.

    Local part and domain compare case-insensitively: players type addresses in any case and a
    mailer may change it; the ``+`` part (a seat token) must be non-empty.
    """
    server_local, _, server_domain = server_address.strip().lower().rpartition("@")
    local, sep, domain = candidate.strip().strip("<>").rpartition("@")
    if not sep or not local or domain.lower() != server_domain:
        return False
    local = local.lower()
    if local == server_local:
        return True
    base, plus, tag = local.partition("+")
    return bool(plus) and base == server_local and bool(tag)


class _Handler:
    """aiosmtpd handler hooks: filter recipients, store the message, answer."""

    def __init__(self, listener: SmtpListener) -> None:
        self._listener = listener

    async def handle_RCPT(self, server: SMTP, session: Session, envelope: Envelope,
                          address: str, rcpt_options: list[str]) -> str:
        if not is_server_address(self._listener.config.address, address):
            return REPLY_NO_MAILBOX.format(address)
        envelope.rcpt_tos.append(address)
        return "250 2.1.5 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        raw = envelope.original_content
        if raw is None:  # defensive: aiosmtpd always sets it before calling this hook
            return REPLY_TRY_LATER
        peer = session.peer[0] if isinstance(session.peer, tuple) else str(session.peer)
        mail_from = envelope.mail_from or ""
        source_ref = (f"smtp from=<{mail_from}> "
                      f"to=<{','.join(envelope.rcpt_tos)}> peer={peer}")
        try:
            return await self._listener._store_grouped(raw, source_ref, mail_from.strip("<>"))
        except Exception as exc:
            if not is_fault(exc):  # a fault was told to the tracker where it happened
                log.exception("smtp: could not store a message from <%s>; answered 451",
                              envelope.mail_from)
            return try_later_reply(exc)


_TERMINATOR = b".\r\n"

_PLAIN_ANGLE = re.compile(rf"<({ADDR_SPEC})>(.*)", re.DOTALL)


def plain_angle_address(arg: str) -> tuple[str, str] | None:
    """(address, parameters) of ``<local@domain> PARAMETERS``, the whole of a MAIL FROM or RCPT TO
    argument from every MTA; None for anything else (an empty path, a quoted or non-ASCII local
    part, a comment, a route), which aiosmtpd's own parse takes.

    aiosmtpd parses each address with ``email``'s full RFC 5322 header grammar, about 35 µs a
    time, two per mail: a sixth of the listener's CPU. What this returns is what that parse returns
    for the same argument (``tests/transport/test_smtp_address.py`` holds the two equal).
    """
    match = _PLAIN_ANGLE.fullmatch(arg)
    if match is None:
        return None
    address, rest = match.groups()
    if address.startswith("=?") or "@=?" in address:  # the grammar tries an encoded word there
        return None
    if rest[:1] in (" ", "\t"):  # aiosmtpd's parse drops the whitespace after the ">" ...
        rest = rest.lstrip()
    if rest[:1] == "(":  # ... and comments, which are left to it
        return None
    return address, rest


class SmtpSession(SMTP):
    """aiosmtpd's SMTP session with DATA read into one buffer (see the module docstring)."""

    def __init__(self, *args: object, too_big: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._too_big = too_big

    def _getaddr(self, arg: str) -> tuple[str | None, str | None]:
        if not self.local_part_limit:
            plain = plain_angle_address(arg)
            if plain is not None:
                return plain
        return super()._getaddr(arg)

    async def push(self, status: str) -> None:  # type: ignore[override]
        # aiosmtpd's own 552 (a SIZE= parameter over the limit at MAIL FROM) says no more than
        # "message size exceeds fixed maximum message size"; ours tells the sender what to do.
        if isinstance(status, str) and status.startswith("552 "):
            status = self._too_big
        await super().push(status)

    @syntax("DATA")
    async def smtp_DATA(self, arg: str) -> None:
        # The checks before 354 are aiosmtpd's own, in its order.
        if await self.check_helo_needed():
            return
        if await self.check_auth_needed("DATA"):
            return
        assert self.envelope is not None
        if not self.envelope.rcpt_tos:
            await self.push("503 Error: need RCPT command")
            return
        if arg:
            await self.push("501 Syntax: DATA")
            return
        await self.push("354 End data with <CR><LF>.<CR><LF>")
        content = await self._read_data()
        if content is None:
            await self.push(self._too_big)
            self._set_post_data_state()
            return
        self.envelope.content = self.envelope.original_content = content
        status = await self._call_handler_hook("DATA")
        self._set_post_data_state()
        await self.push("250 OK" if status is MISSING else status)

    async def _read_data(self) -> bytes | None:
        """The message up to ``<CR><LF>.<CR><LF>``, dot-unstuffed; None when it was too big.

        Reading up to each ``.<CR><LF>`` finds the end exactly: the terminator is one of those,
        the one at a line start. A read that overruns the stream limit is taken in one piece (it
        holds no ``.<CR><LF>``, so no terminator either)."""
        limit = self.data_size_limit
        data = bytearray(b"\r\n")  # the DATA command's line end: "." may follow at once
        size = 0
        too_big = False
        while True:
            try:
                chunk = await self._reader.readuntil(_TERMINATOR)
            except asyncio.LimitOverrunError as overrun:
                chunk = await self._reader.readexactly(overrun.consumed)
            except asyncio.IncompleteReadError:
                raise ConnectionResetError("connection closed during DATA") from None
            size += len(chunk)
            if too_big:
                data = bytearray(data[-2:])  # only what the terminator check needs
            elif limit and size > limit:
                too_big = True
                data = bytearray(data[-2:])
            data += chunk
            if data.endswith(b"\r\n.\r\n"):
                break
        if too_big:
            return None
        # Strip the terminator, then undo dot-stuffing (RFC 5321 4.5.2) in one pass.
        return bytes(data[:-3].replace(b"\r\n.", b"\r\n")[2:])


class _Controller(Controller):
    """Controller that learns the real port when asked to listen on port 0 (tests), and runs our
    SMTP session class."""

    def __init__(self, *args: object, too_big: str, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.too_big = too_big

    def factory(self) -> SMTP:
        return SmtpSession(self.handler, too_big=self.too_big, **self.SMTP_kwargs)

    def _create_server(self) -> Awaitable[asyncio.AbstractServer]:
        inner = super()._create_server()

        async def create() -> asyncio.AbstractServer:
            server = await inner
            sockets = server.sockets or ()
            if sockets:
                self.port = int(sockets[0].getsockname()[1])
            return server

        return create()


class SmtpListener:
    """An SMTP server on ``host:port`` (default ``config.smtp_host:config.smtp_port``).

    ``wake`` is called (from the store worker thread) after each stored message that still needs
    processing. ``port=0`` picks a free port; read the real one from ``.port`` after ``start()``.
    """

    def __init__(self, config: Config, store: Store, clock: Clock | None = None,
                 wake: Callable[[], None] | None = None, *, host: str | None = None,
                 port: int | None = None, faults: Faults | None = None) -> None:
        self.config = config
        self.faults = faults or Faults(clock)
        self.store = store
        self.clock = clock or SystemClock()
        self.wake = wake or (lambda: None)
        self.host = host if host is not None else config.smtp_host
        self._port = port if port is not None else config.smtp_port
        self._controller: _Controller | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._group_lock = threading.Lock()
        self._group: list[tuple[bytes, str, str, concurrent.futures.Future[str]]] = []
        self._group_running = False

    @property
    def port(self) -> int:
        return self._controller.port if self._controller is not None else self._port

    @property
    def running(self) -> bool:
        return self._controller is not None

    def start(self) -> None:
        with self._lock:
            if self._controller is not None:
                return
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="pbem-smtp-store")
            controller = _Controller(
                _Handler(self), hostname=self.host, port=self._port,
                data_size_limit=self.config.max_message_bytes,
                server_hostname=self.config.address.rpartition("@")[2] or None,
                ident="pbem", too_big=too_big_reply(self.config),
            )
            try:
                controller.start()
            except BaseException:
                self._executor.shutdown(wait=False)
                self._executor = None
                raise
            self._controller = controller
            log.info("smtp: listening on %s:%d for <%s> and its plus-addresses",
                     self.host, controller.port, self.config.address)

    def stop(self) -> None:
        """Stop accepting; a message being stored finishes storing before the executor exits."""
        with self._lock:
            controller, self._controller = self._controller, None
            executor, self._executor = self._executor, None
            if controller is not None:
                self._port = controller.port  # a restart reuses the same port
                controller.stop()
            if executor is not None:
                executor.shutdown(wait=True)

    def __enter__(self) -> SmtpListener:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    async def _store_grouped(self, raw: bytes, source_ref: str, envelope_from: str) -> str:
        """Queue the message for the storer, which commits everything queued meanwhile in one
        transaction (group commit: one fsync for all sessions waiting for their 250)."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        with self._group_lock:
            self._group.append((raw, source_ref, envelope_from, future))
            start = not self._group_running
            self._group_running = True
        if start:
            executor = self._executor
            if executor is None:
                return REPLY_TRY_LATER
            executor.submit(self._drain_group)
        return await asyncio.wrap_future(future)

    def _drain_group(self) -> None:
        while True:
            with self._group_lock:
                batch, self._group = self._group, []
                if not batch:
                    self._group_running = False
                    return
            now = self.clock.now()
            items = [(raw, "smtp", now, ref, sender) for raw, ref, sender, _f in batch]
            try:
                results = retry_once(lambda: self.store.accept_inbound_many(items))  # noqa: B023
            except Exception as exc:
                if is_fault(exc):
                    self.faults.failed("database", "smtp", exc)
                else:
                    log.exception("smtp: could not store %d message(s); answered 451", len(batch))
                for _raw, _ref, _sender, future in batch:
                    future.set_exception(exc)
                continue
            self.faults.ok("database")
            if any(r.status == "pending" for r in results):
                try:
                    self.wake()
                except Exception:
                    log.exception("smtp: wake callback failed")
            for (raw, _ref, _sender, future), result in zip(batch, results, strict=True):
                log.info("smtp: stored inbound %d (%d bytes)%s", result.inbound_id, len(raw),
                         "" if result.new else f" duplicate, status {result.status}")
                future.set_result(f"250 2.0.0 queued as {result.inbound_id}")
