"""The embedded SMTP listener: mail arrives here directly when no IMAP mailbox is used.

The one promise it makes is the SMTP one: ``250`` means the message is durably stored. The raw bytes
are written with ``store.accept_inbound`` *before* the reply, so a crash after the ``250`` loses
nothing, and any failure to store answers ``451`` so the sending MTA keeps its copy and retries.
Processing happens later, in the daemon's processor thread; the listener only wakes it.

aiosmtpd runs its own asyncio loop in a thread. Store calls block (SQLite fsync, a PostgreSQL round
trip), so they run in a single worker thread via ``run_in_executor`` to keep the loop answering
other connections meanwhile.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

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
            return await self._listener._run_blocking(self._listener._store_message, raw,
                                                      source_ref)
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

    async def _run_blocking(self, func: Callable[..., str], *args: Any) -> str:
        executor = self._executor
        if executor is None:
            return REPLY_TRY_LATER
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(executor, func, *args)

    def _store_message(self, raw: bytes, source_ref: str) -> str:
        result = self.store.accept_inbound(raw, "smtp", self.clock.now(), source_ref=source_ref)
        if result.new:
            log.info("smtp: stored inbound %d (%d bytes)", result.inbound_id, len(raw))
        else:
            log.info("smtp: duplicate of inbound %d (status %s)", result.inbound_id, result.status)
        if result.status == "pending":
            try:
                self.wake()
            except Exception:  # the message is stored; a failing wake must not turn 250 into 451
                log.exception("smtp: wake callback failed")
        return f"250 2.0.0 queued as {result.inbound_id}"
