"""A real SMTP server (aiosmtpd) that keeps every message it accepts, for tests.

Why a real server: the code under test speaks SMTP through the standard library, with real
timeouts, refusals and retries; a fake ``smtplib`` would test none of that. The sink listens on a
free loopback port in a background thread and can misbehave on purpose:

* ``stop()`` then ``start()``: the relay goes away (connection refused) and comes back on the
  SAME port, as a restarted mail relay would;
* ``reject_all = True``: every transaction is answered ``451`` (temporary failure) at MAIL FROM,
  so the client's ``sendmail`` raises ``smtplib.SMTPSenderRefused`` (an
  ``SMTPResponseException`` with ``smtp_code == 451``) and nothing is stored;
* ``reject_rcpt[address] = "550 ..."``: that recipient is refused with that reply;
* ``reject_reply = "421 ..."`` with ``reject_all``: a relay shutting down; after a 421 the sink
  closes the connection, as RFC 5321 says;
* ``script``: what the next transactions meet at the end of DATA, one entry each: ``"ok"``,
  ``"421"`` (answered 421, connection closed), ``"drop"`` (connection closed without an answer,
  nothing kept) or ``"drop-after-store"`` (the message is kept, then the connection is closed
  before the answer: the client cannot know the relay has it);
* ``tls=Certificates``: STARTTLS offered and required before anything else (a relay on port 587);
  ``users={name: password}``: AUTH required (after STARTTLS), with ``auth_mechanisms`` limiting
  what is offered (PLAIN, LOGIN). ``logins`` records (mechanism, user) of every successful AUTH.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import email
import email.message
import email.policy
import threading
import time
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session

from .requirements import LOOPBACK, free_port, port_open
from .tls import Certificates

REJECT_REPLY = "451 4.3.0 Temporary failure (test sink in reject_all mode)"
CLOSING_REPLY = "421 4.3.2 Service shutting down, closing transmission channel"


def _close_after_reply(server: SMTP) -> None:
    """Close the connection once the reply being written went out (421)."""
    asyncio.get_running_loop().call_later(0.05, server.transport.close)


@dataclass(frozen=True)
class SinkMessage:
    """One accepted message: the SMTP envelope and the DATA bytes exactly as received."""

    mail_from: str
    rcpt_tos: list[str]
    data: bytes
    peer: Any = None
    mail_options: list[str] = field(default_factory=list)
    tls: bool = False  # the session ran over TLS
    user: str | None = None  # the AUTH user of the session
    received_at: float = field(default_factory=time.monotonic)  # when the DATA was accepted

    @property
    def message(self) -> email.message.EmailMessage:
        """``data`` parsed with the modern email policy."""
        msg = email.message_from_bytes(self.data, policy=email.policy.default)
        assert isinstance(msg, email.message.EmailMessage)
        return msg


class _Handler:
    """aiosmtpd handler: refuses in reject_all mode, otherwise stores the message."""

    def __init__(self, sink: SmtpSink) -> None:
        self.sink = sink

    async def handle_MAIL(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, mail_options: list
    ) -> str:
        if self.sink.reject_all:
            if self.sink.reject_reply.startswith("421"):
                _close_after_reply(server)
            return self.sink.reject_reply
        envelope.mail_from = address
        envelope.mail_options.extend(mail_options)
        return "250 OK"

    async def handle_RCPT(
        self, server: SMTP, session: Session, envelope: Envelope, address: str, rcpt_options: list
    ) -> str:
        refusal = self.sink.reject_rcpt.get(address)
        if refusal:
            return refusal
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        if self.sink.reject_all:
            if self.sink.reject_reply.startswith("421"):
                _close_after_reply(server)
            return self.sink.reject_reply
        step = self.sink.script.pop(0) if self.sink.script else "ok"
        if step == "421":
            _close_after_reply(server)
            return CLOSING_REPLY
        if step == "drop":
            server.transport.abort()
            return "250 never heard"
        raw = envelope.original_content or envelope.content or b""
        if isinstance(raw, str):
            raw = raw.encode("utf-8", "surrogateescape")
        self.sink._store(
            SinkMessage(
                mail_from=envelope.mail_from or "",
                rcpt_tos=list(envelope.rcpt_tos),
                data=bytes(raw),
                peer=session.peer,
                mail_options=list(envelope.mail_options),
                tls=session.ssl is not None,
                user=(session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword)
                      else None),
            )
        )
        if step == "drop-after-store":
            server.transport.abort()
        return "250 Message accepted for delivery"


class SmtpSink:
    """An SMTP server on ``127.0.0.1:<free port>`` that stores what it receives.

    Thread-safe: the server thread appends, the test reads ``messages`` or waits with
    ``wait_for``. Usable as a context manager.
    """

    host: str = LOOPBACK
    #: The aiosmtpd controller class that serves the sink (a benchmark's sink may run a leaner
    #: SMTP session than aiosmtpd's own).
    controller_class: type[Controller] = Controller

    def __init__(self, port: int | None = None, reject_all: bool = False, *,
                 tls: Certificates | None = None, users: dict[str, str] | None = None,
                 auth_mechanisms: tuple[str, ...] = ("PLAIN", "LOGIN")) -> None:
        self.port: int = port or 0
        self.reject_all: bool = reject_all
        self.reject_reply: str = REJECT_REPLY
        self.reject_rcpt: dict[str, str] = {}
        self.script: list[str] = []
        self.tls = tls
        self.users = users
        self.auth_mechanisms = auth_mechanisms
        self.logins: list[tuple[str, str]] = []
        self.failed_logins = 0
        self._messages: list[SinkMessage] = []
        self._cond = threading.Condition()
        self._controller: Controller | None = None
        self.start()

    def start(self) -> None:
        """Start listening; after ``stop()`` this reuses the same port.

        aiosmtpd's ``Controller`` cannot bind port 0, so the first start picks a free port
        (retrying when someone else grabs it in between).
        """
        if self._controller is not None:
            return
        fixed = bool(self.port)
        last: Exception | None = None
        for _ in range(1 if fixed else 5):
            port = self.port if fixed else free_port(self.host)
            options: dict[str, Any] = {}
            if self.tls is not None:
                options.update(tls_context=self.tls.server_context(), require_starttls=True)
            if self.users is not None:
                options.update(auth_required=True, auth_require_tls=self.tls is not None,
                               authenticator=self._authenticate,
                               auth_exclude_mechanism=[m for m in ("PLAIN", "LOGIN")
                                                       if m not in self.auth_mechanisms])
            controller = self.controller_class(
                _Handler(self),
                hostname=self.host,
                port=port,
                ready_timeout=10,
                enable_SMTPUTF8=True,
                server_hostname="localhost",
                **options,
            )
            try:
                controller.start()
            except Exception as exc:  # port taken between free_port() and bind
                last = exc
                with contextlib.suppress(Exception):
                    controller.stop()
                continue
            self.port = port
            self._controller = controller
            atexit.register(self.stop)  # for sinks a test forgets to stop
            return
        raise RuntimeError(f"SMTP sink could not listen on {self.host}:{self.port}: {last}")

    def stop(self) -> None:
        """Stop listening: new connections are refused until ``start()``."""
        controller, self._controller = self._controller, None
        if controller is not None:
            atexit.unregister(self.stop)
            controller.stop()
        deadline = time.monotonic() + 5
        while self.port and port_open(self.host, self.port) and time.monotonic() < deadline:
            time.sleep(0.02)

    close = stop

    @property
    def running(self) -> bool:
        """True while the server accepts connections."""
        return self._controller is not None

    def _authenticate(self, server: SMTP, session: Session, envelope: Envelope, mechanism: str,
                      auth_data: Any) -> AuthResult:
        ok = (isinstance(auth_data, LoginPassword) and self.users is not None
              and self.users.get(auth_data.login.decode()) == auth_data.password.decode())
        with self._cond:
            if ok:
                self.logins.append((mechanism, auth_data.login.decode()))
            else:
                self.failed_logins += 1
        return AuthResult(success=ok, handled=False, auth_data=auth_data if ok else None)

    def _store(self, message: SinkMessage) -> None:
        with self._cond:
            self._messages.append(message)
            self._cond.notify_all()

    @property
    def messages(self) -> list[SinkMessage]:
        """A snapshot of every message accepted so far, oldest first."""
        with self._cond:
            return list(self._messages)

    def clear(self) -> None:
        """Forget the messages received so far."""
        with self._cond:
            self._messages.clear()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[SinkMessage]:
        """Block until at least ``count`` messages arrived; return them all.

        Raises ``AssertionError`` (a plain test failure) with what did arrive on timeout.
        """
        with self._cond:
            if not self._cond.wait_for(lambda: len(self._messages) >= count, timeout=timeout):
                got = [(m.mail_from, m.rcpt_tos) for m in self._messages]
                raise AssertionError(
                    f"SMTP sink got {len(self._messages)} of {count} messages in {timeout}s: {got}"
                )
            return list(self._messages)

    def __enter__(self) -> SmtpSink:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"<SmtpSink {self.host}:{self.port} {state} {len(self.messages)} messages>"
