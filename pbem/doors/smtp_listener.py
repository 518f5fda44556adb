"""The embedded SMTP listener: mail arrives here directly when no IMAP mailbox is used.

The one promise it makes is the SMTP one: ``250`` means the message is durably stored. The raw bytes
are written with ``store.accept_inbound`` *before* the reply, so a crash after the ``250`` loses
nothing, and any failure to store answers ``451`` so the sending MTA keeps its copy and retries.
Processing happens later, in the daemon's processor thread; the listener only wakes it.

aiosmtpd runs its own asyncio loop in a thread. Store calls block (SQLite fsync, a PostgreSQL round
trip), so they run in a single worker thread, and with group commit: every message that arrived while
the previous write was on its way to disk is stored in the next single transaction (one flush for
all), and each session gets its 250 only after that commit returned.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, Envelope, Session

from pbem.clock import Clock, SystemClock
from pbem.config import Config
from pbem.store.base import Store

log = logging.getLogger(__name__)

REPLY_NO_MAILBOX = "550 5.1.1 <{}>: no such mailbox here"
REPLY_TRY_LATER = "451 4.3.0 try again later"


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
        source_ref = (f"smtp from=<{envelope.mail_from or ''}> "
                      f"to=<{','.join(envelope.rcpt_tos)}> peer={peer}")
        try:
            return await self._listener._store_grouped(raw, source_ref)
        except Exception:
            log.exception("smtp: could not store a message from <%s>; answered 451",
                          envelope.mail_from)
            return REPLY_TRY_LATER


class _Controller(Controller):
    """Controller that learns the real port when asked to listen on port 0 (tests)."""

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
                 port: int | None = None) -> None:
        self.config = config
        self.store = store
        self.clock = clock or SystemClock()
        self.wake = wake or (lambda: None)
        self.host = host if host is not None else config.smtp_host
        self._port = port if port is not None else config.smtp_port
        self._controller: _Controller | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()
        self._group_lock = threading.Lock()
        self._group: list[tuple[bytes, str, concurrent.futures.Future[str]]] = []
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
                ident="pbem",
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

    async def _store_grouped(self, raw: bytes, source_ref: str) -> str:
        """Queue the message for the storer, which commits everything queued meanwhile in one
        transaction (group commit: one fsync for all sessions waiting for their 250)."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        with self._group_lock:
            self._group.append((raw, source_ref, future))
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
            try:
                results = self.store.accept_inbound_many(
                    [(raw, "smtp", now, ref) for raw, ref, _f in batch])
            except Exception as exc:
                log.exception("smtp: could not store %d message(s); answered 451", len(batch))
                for _raw, _ref, future in batch:
                    future.set_exception(exc)
                continue
            if any(r.status == "pending" for r in results):
                try:
                    self.wake()
                except Exception:
                    log.exception("smtp: wake callback failed")
            for (raw, _ref, future), result in zip(batch, results, strict=True):
                log.info("smtp: stored inbound %d (%d bytes)%s", result.inbound_id, len(raw),
                         "" if result.new else f" duplicate, status {result.status}")
                future.set_result(f"250 2.0.0 queued as {result.inbound_id}")
