"""The IMAP watcher: intake from a real mailbox, watched with IDLE (or polled).

Exactly-once processing rests on three rules:

1. A message is copied into the store (``accept_inbound``, de-duplicated by bytes and Message-ID)
   before anything else happens to it. Fetching uses ``BODY.PEEK[]`` so the mailbox's \\Seen flags
   stay untouched for a human looking at the same mailbox.
2. A message leaves the watched mailbox (MOVE to the processed folder) only after its processing
   has committed, i.e. its stored status is no longer ``pending``. The order "commit, then move"
   means a crash in between leaves a processed message in the mailbox; rule 3 cleans that up.
3. On first start, on every reconnect and when UIDVALIDITY changed, *every* message in the
   mailbox is fetched again. The store recognises each one it has seen (``new=False``) and the
   ones already processed are simply moved, so nothing is processed twice and nothing is missed,
   whatever state the previous run died in. In steady state only UIDs above the last one seen are
   fetched.

IDLE is left briefly (``idle_done``) whenever there is something to do: new mail to fetch,
processed messages to move, or the IDLE renewal that servers require within 30 minutes. A BYE or
EOF during IDLE, or any other network or protocol error, ends the session; the watcher reconnects
with exponential back-off: up to ``imap.max_backoff_seconds`` after a refused login (a wrong
password does not get better by hammering the server), at most ``RECONNECT_CAP_SECONDS`` after
anything else (a restarting Dovecot is back within seconds, and so is the mail). The fault tracker
(``pbem.faults``) logs one line when the server or the database fails and one when it works again;
UIDVALIDITY and the last UID seen are kept in the store, so no message is taken twice or skipped
across reconnections.

A message over the size limit is never fetched whole: its header (the first 64 KB at most) is
stored with its real size, so that the processor can tell its sender once what the limit is, and
the message is then moved to ``imap.rejected_folder`` instead of the processed folder. The
envelope sender (the Return-Path the delivering server wrote) is stored with every message.

With TLS configured (``ssl`` or ``starttls``) the watcher never logs in without it: a certificate
that does not verify, or a server without STARTTLS, fails the session with one log line and is
retried with back-off.
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
import re
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from imapclient import IMAPClient, exceptions

from pbem.clock import Clock, SystemClock, wait_either
from pbem.config import ImapConfig, tls_problem
from pbem.faults import Faults, is_fault
from pbem.reading.headers import return_path_of
from pbem.store.base import Store

log = logging.getLogger(__name__)

DELETED = b"\\Deleted"
#: What is fetched of a message over the size limit: its header, for the notice to its sender.
HEADER_BYTES = 65_536

#: Dovecot delays every IDLE notice by a fixed 500 ms (to batch changes), which alone would use up
#: the whole latency budget "mail arrives -> reply leaves" of 0.5 s. For a server on the same
#: machine a look every 0.1 s (DONE, NOOP, UID SEARCH, IDLE: four round trips of ~0.2 ms; measured
#: 0.7 % of one CPU in pbem) finds new mail first. A remote provider is not polled like that by
#: default: there the network dominates anyway, and frequent commands may count against limits.
LOOPBACK_SYNC_SECONDS = 0.1

#: The longest wait between reconnections when the server is unreachable or dropped the session
#: (a refused login waits up to ``imap.max_backoff_seconds``).
RECONNECT_CAP_SECONDS = 10.0


def _is_loopback(host: str | None) -> bool:
    if not host:
        return False
    if host.lower() in ("localhost", "localhost.localdomain", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class ImapDisconnected(ConnectionError):
    """The server ended the session (BYE or EOF)."""


def _describe(exc: BaseException) -> str:
    """The reason a session failed, in words that say what to check."""
    tls = tls_problem(exc, "imap")
    if tls:
        return tls
    if isinstance(exc, exceptions.LoginError):
        text = str(exc)
        quoted = re.fullmatch(r"b(['\"])(.*)\1", text)  # imapclient gives the reply's repr
        return f"login refused ({quoted.group(2) if quoted else text}); check [imap] username and password"
    if isinstance(exc, exceptions.CapabilityError) and "STARTTLS" in str(exc):
        return "the server does not offer STARTTLS; nothing is sent without it"
    return f"{type(exc).__name__}: {exc}"


def _batches(items: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield items[start:start + size]


class ImapWatcher:
    """Watch ``imap.mailbox``, store new messages, move processed ones to ``imap.processed_folder``.

    ``wake`` is called after new messages were stored (the daemon wakes its processor);
    ``notify_processed()`` is the way back (the processor committed: move now). ``stop`` ends
    ``run()`` within about ``idle_check_seconds``.

    Tuning knobs (keyword-only; the defaults suit production):

    * ``initial_backoff_seconds``: first reconnect delay, doubled per failure up to
      ``imap.max_backoff_seconds``;
    * ``idle_check_seconds``: how long one ``idle_check`` blocks (bounds the reaction to ``stop``
      and to ``notify_processed``);
    * ``status_check_seconds``: how often stored statuses are re-read when nobody calls
      ``notify_processed``;
    * ``sync_interval_seconds``: while idling, also look for new mail this often. 0 relies on the
      server's IDLE notices alone; None (default) means ``LOOPBACK_SYNC_SECONDS`` for a server on
      this machine and 0 for a remote one;
    * ``max_message_bytes``: of larger messages only the header is stored (with the real size),
      and they go to ``imap.rejected_folder``; None fetches everything;
    * ``timeout_seconds``: socket timeout for connecting and for commands;
    * ``use_move``: None uses UID MOVE when the server offers it, False forces the
      COPY + \\Deleted + (UID) EXPUNGE fallback (tests of that path run against a server with MOVE).
    """

    def __init__(self, imap: ImapConfig, store: Store, clock: Clock | None = None,
                 wake: Callable[[], None] | None = None, stop: threading.Event | None = None,
                 *, initial_backoff_seconds: float = 0.5, idle_check_seconds: float = 0.25,
                 status_check_seconds: float = 2.0, max_message_bytes: int | None = None,
                 timeout_seconds: float = 60.0, ssl_context: ssl.SSLContext | None = None,
                 fetch_batch: int = 50, sync_interval_seconds: float | None = None,
                 use_move: bool | None = None, faults: Faults | None = None) -> None:
        if not imap.host:
            raise ValueError("ImapWatcher needs imap.host")
        self.imap = imap
        self.store = store
        self.clock = clock or SystemClock()
        self.faults = faults or Faults(self.clock)
        self.wake = wake or (lambda: None)
        self.stop_event = stop or threading.Event()
        self.initial_backoff_seconds = initial_backoff_seconds
        self.idle_check_seconds = idle_check_seconds
        self.status_check_seconds = status_check_seconds
        self.max_message_bytes = max_message_bytes
        self.timeout_seconds = timeout_seconds
        self.ssl_context = ssl_context
        self.fetch_batch = fetch_batch
        if sync_interval_seconds is None:
            sync_interval_seconds = (LOOPBACK_SYNC_SECONDS if _is_loopback(imap.host) else 0.0)
        self.sync_interval_seconds = max(sync_interval_seconds, 0.0)
        # Renewing IDLE well before servers' 29/30-minute limit; the config cannot raise it.
        self.idle_renew_seconds = min(max(imap.idle_renew_seconds, 0.1), 590.0)
        self.use_move = use_move

        self._processed = threading.Event()
        self._thread: threading.Thread | None = None
        self._uidvalidity = 0
        self._last_uid = 0
        self._awaiting: dict[int, int] = {}  # uid -> inbound id, stored but not moved yet
        self._rejected: set[int] = set()  # awaiting UIDs over the size limit: moved aside

        # Observable state, for the daemon's status output and for tests.
        self.connected = threading.Event()  # set while a session is established
        self.connections = 0  # sessions established so far
        self.using_idle = False
        self.moved = 0  # messages moved to the processed folder
        self.idle_commands = 0  # IDLE commands sent (each renewal or wake-up is one more)
        self.stored = 0  # accept_inbound calls that stored a new message
        self.last_error: str | None = None

    # --- thread control -------------------------------------------------------------------

    def notify_processed(self) -> None:
        """The processor committed something: check statuses and move finished messages now."""
        self._processed.set()

    def start(self) -> threading.Thread:
        """Run ``run()`` in a daemon thread named ``pbem-imap``."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self.run, name="pbem-imap", daemon=True)
            self._thread.start()
        return self._thread

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def where(self) -> str:
        return f"{self.imap.mailbox} at {self.imap.host}:{self.imap.effective_port}"

    def run(self) -> None:
        """Sessions until ``stop`` is set; reconnect with exponential back-off after errors."""
        backoff = self.initial_backoff_seconds
        while not self.stop_event.is_set():
            established = self.connections
            cap = max(self.imap.max_backoff_seconds, self.initial_backoff_seconds)
            try:
                self._session()
            except Exception as exc:
                self.last_error = _describe(exc)
                if self.connections > established:
                    backoff = self.initial_backoff_seconds  # the session had been healthy
                if not isinstance(exc, exceptions.LoginError):
                    cap = min(cap, max(RECONNECT_CAP_SECONDS, self.initial_backoff_seconds))
                if not self.stop_event.is_set():
                    # the database (storing a fetched message) or the IMAP server: one line from
                    # the tracker when it starts, none per attempt
                    store_fault = is_fault(exc) and not isinstance(exc, OSError | IMAPClient.Error)
                    self.faults.failed("database" if store_fault else "imap", "imap",
                                       f"{self.where}: {self.last_error}" if not store_fault
                                       else exc)
                    log.debug("imap: %s: %s; reconnecting in %.1f s", self.where,
                              self.last_error, min(backoff, cap))
            if self.stop_event.wait(min(backoff, cap)):
                break
            backoff = min(backoff * 2, cap)

    # --- one session -------------------------------------------------------------------------

    def _connect(self) -> IMAPClient:
        cfg = self.imap
        assert cfg.host
        if cfg.security in ("ssl", "starttls") and self.ssl_context is None:
            # once: loading CAs takes ~20 ms
            self.ssl_context = ssl.create_default_context(cafile=cfg.ca_file or None)
        if cfg.security == "ssl":
            return IMAPClient(cfg.host, cfg.effective_port, ssl=True,
                              ssl_context=self.ssl_context, timeout=self.timeout_seconds)
        client = IMAPClient(cfg.host, cfg.effective_port, ssl=False, timeout=self.timeout_seconds)
        if cfg.security == "starttls":
            try:
                client.starttls(self.ssl_context)
            except BaseException:
                client.shutdown()
                raise
        return client

    def _session(self) -> None:
        client = self._connect()
        try:
            client.login(self.imap.username, self.imap.password)
            self._ensure_folder(client, self.imap.processed_folder)
            self._ensure_folder(client, self.imap.rejected_folder)
            self._select_and_rescan(client)
            self.connections += 1
            self.using_idle = self.imap.idle and client.has_capability("IDLE")
            self.connected.set()
            self.faults.ok("imap")
            # said once; a reconnection is told by the end of the fault
            (log.info if self.connections == 1 else log.debug)(
                "imap: watching %s as %s (%s)", self.where, self.imap.username,
                "IDLE" if self.using_idle else f"polling every {self.imap.poll_seconds:g} s")
            if self.using_idle:
                self._idle_loop(client)
            else:
                self._poll_loop(client)
        finally:
            self.connected.clear()
            self._close(client)

    @staticmethod
    def _close(client: IMAPClient) -> None:
        try:
            client.logout()
        except Exception:
            with contextlib.suppress(Exception):
                client.shutdown()

    @staticmethod
    def _ensure_folder(client: IMAPClient, folder: str) -> None:
        if client.folder_exists(folder):
            return
        try:
            client.create_folder(folder)
        except IMAPClient.Error:
            if not client.folder_exists(folder):  # another client may have created it meanwhile
                raise
        log.info("imap: created folder %s", folder)

    def _select_and_rescan(self, client: IMAPClient) -> None:
        info = client.select_folder(self.imap.mailbox)
        uidvalidity = int(info[b"UIDVALIDITY"])
        state = self.store.imap_state(self.imap.mailbox)
        if state is not None and state[0] == uidvalidity:
            self._last_uid = state[1]
        else:
            if state is not None:
                log.warning("imap: UIDVALIDITY of %s changed from %d to %d; rescanning it",
                            self.imap.mailbox, state[0], uidvalidity)
            self._last_uid = 0
            self.store.set_imap_state(self.imap.mailbox, uidvalidity, 0)
        self._uidvalidity = uidvalidity
        self._awaiting.clear()
        self._rejected.clear()
        if int(info.get(b"EXISTS", 1)):
            self._fetch(client, 1)
        self._move_finished(client)

    # --- fetching -------------------------------------------------------------------------

    def _fetch(self, client: IMAPClient, low: int) -> int:
        """Store every message with UID >= ``low`` not yet stored in this session; return how many
        still wait for processing. ``UID a:*`` may match the highest UID even when it is below
        ``a`` (``*`` is "the largest UID"), hence the explicit filter."""
        uids = sorted(uid for uid in client.search(["UID", f"{low}:*"])
                      if uid >= low and uid not in self._awaiting)
        too_large: dict[int, int] = {}
        if uids and self.max_message_bytes is not None:
            sizes = client.fetch(uids, ["RFC822.SIZE"])
            for uid in uids:
                size = int(sizes.get(uid, {}).get(b"RFC822.SIZE", 0))
                if size > self.max_message_bytes:
                    too_large[uid] = size
            uids = [uid for uid in uids if uid not in too_large]
        pending = 0
        for batch in _batches(uids, self.fetch_batch):
            pending += self._store_batch(client, batch)
        if too_large:
            pending += self._store_headers(client, too_large)
        return pending

    def _store_headers(self, client: IMAPClient, sizes: dict[int, int]) -> int:
        """Messages over the size limit: store the header and the size; move them aside later."""
        part = f"BODY.PEEK[HEADER]<0.{HEADER_BYTES}>"
        response = client.fetch(sorted(sizes), [part])
        pending = 0
        for uid, size in sorted(sizes.items()):
            data = response.get(uid) or {}
            raw = next((v for k, v in data.items() if k.startswith(b"BODY[HEADER]")), None)
            if raw is None:
                continue  # expunged meanwhile
            log.warning("imap: UID %d in %s has %d bytes, more than %d; its sender gets one notice "
                        "and it goes to %s", uid, self.imap.mailbox, size, self.max_message_bytes,
                        self.imap.rejected_folder)
            result = self.store.accept_inbound(
                bytes(raw), "imap", self.clock.now(),
                source_ref=f"{self.imap.mailbox}:{self._uidvalidity}:{uid}",
                envelope_from=return_path_of(bytes(raw)), original_size=size)
            self._awaiting[uid] = result.inbound_id
            self._rejected.add(uid)
            if result.status == "pending":
                pending += 1
        if pending:
            self.wake()
        return pending

    def _store_batch(self, client: IMAPClient, uids: list[int]) -> int:
        response = client.fetch(uids, ["BODY.PEEK[]"])
        pending = 0
        highest = self._last_uid
        for uid in uids:
            data: dict[bytes, Any] | None = response.get(uid)
            raw = None if data is None else data.get(b"BODY[]")
            if raw is None:
                continue  # expunged by someone else between the two fetches
            result = self.store.accept_inbound(
                bytes(raw), "imap", self.clock.now(),
                source_ref=f"{self.imap.mailbox}:{self._uidvalidity}:{uid}",
                envelope_from=return_path_of(bytes(raw)))
            self._awaiting[uid] = result.inbound_id
            if result.new:
                self.stored += 1
                log.info("imap: UID %d stored as inbound %d", uid, result.inbound_id)
            if result.status == "pending":
                pending += 1
            highest = max(highest, uid)
        if highest > self._last_uid:
            self._last_uid = highest
            self.store.set_imap_state(self.imap.mailbox, self._uidvalidity, highest)
        if pending:
            self.wake()
        return pending

    # --- moving ---------------------------------------------------------------------------

    def _finished_uids(self) -> list[int]:
        """UIDs whose processing committed (status done, ignored or failed); no IMAP traffic."""
        finished = []
        for uid, inbound_id in self._awaiting.items():
            status = self.store.inbound_status(inbound_id)
            if status is not None and status != "pending":
                finished.append(uid)
        return finished

    def _move_finished(self, client: IMAPClient, uids: Iterable[int] | None = None) -> int:
        finished = sorted(self._finished_uids() if uids is None else uids)
        if not finished:
            return 0
        rejected = [uid for uid in finished if uid in self._rejected]
        processed = [uid for uid in finished if uid not in self._rejected]
        for folder, group in ((self.imap.processed_folder, processed),
                              (self.imap.rejected_folder, rejected)):
            if group:
                self._move(client, group, folder)
        for uid in finished:
            self._awaiting.pop(uid, None)
            self._rejected.discard(uid)
        self.moved += len(finished)
        log.info("imap: moved %d processed message(s) to %s%s", len(processed),
                 self.imap.processed_folder,
                 f", {len(rejected)} to {self.imap.rejected_folder}" if rejected else "")
        return len(finished)

    def _move(self, client: IMAPClient, uids: list[int], folder: str) -> None:
        if self.use_move is not False and client.has_capability("MOVE"):
            client.move(uids, folder)
        else:
            client.copy(uids, folder)
            client.add_flags(uids, [DELETED], silent=True)
            if client.has_capability("UIDPLUS"):
                client.uid_expunge(uids)
            else:
                client.expunge()

    # --- waiting --------------------------------------------------------------------------

    def _idle_loop(self, client: IMAPClient) -> None:
        next_status_check = time.monotonic() + self.status_check_seconds
        while not self.stop_event.is_set():
            client.idle()
            self.idle_commands += 1
            idle_since = time.monotonic()
            next_sync = idle_since + self.sync_interval_seconds if self.sync_interval_seconds else None
            to_move: list[int] = []
            try:
                while not self.stop_event.is_set():
                    started = time.monotonic()
                    timeout = self.idle_check_seconds
                    if next_sync is not None:
                        timeout = max(0.0, min(timeout, next_sync - started))
                    responses = client.idle_check(timeout=timeout)
                    self._check_bye(responses)
                    if any(len(r) > 1 and r[1] in (b"EXISTS", b"RECENT") for r in responses):
                        break  # new mail
                    now = time.monotonic()
                    if next_sync is not None and now >= next_sync:
                        break  # look for mail the server has not announced (yet)
                    if not responses and now - started < timeout / 2:
                        # The socket was readable yet nothing could be read: usually EOF, which
                        # idle_check swallows. Leaving IDLE either fails (reconnect) or proves
                        # the connection alive.
                        break
                    if self._awaiting and (self._processed.is_set() or now >= next_status_check):
                        self._processed.clear()
                        next_status_check = now + self.status_check_seconds
                        to_move = self._finished_uids()
                        if to_move:
                            break
                    if now - idle_since >= self.idle_renew_seconds:
                        break
            except ImapDisconnected:
                raise
            except OSError as exc:
                raise ImapDisconnected(f"connection lost during IDLE: {exc}") from exc
            _, responses = client.idle_done()
            self._check_bye(responses)
            if self.stop_event.is_set():
                return
            # Whatever made us leave IDLE, look for new mail: an EXISTS may have arrived with
            # the DONE reply or with the reply to an earlier command, and tracking those is
            # fragile. Dovecot updates a session's view only at the end of a command, so NOOP
            # first, then SEARCH sees everything delivered so far. (~1 ms on a local server.)
            client.noop()
            self._fetch(client, self._last_uid + 1)
            now = time.monotonic()
            if not to_move and self._awaiting and (self._processed.is_set()
                                                   or now >= next_status_check):
                self._processed.clear()
                next_status_check = now + self.status_check_seconds
                to_move = self._finished_uids()
            if to_move:
                self._move_finished(client, to_move)

    @staticmethod
    def _check_bye(responses: list[tuple[Any, ...]]) -> None:
        for response in responses:
            if response and response[0] == b"BYE":
                raise ImapDisconnected(b" ".join(p for p in response if isinstance(p, bytes))
                                       .decode("ascii", "replace"))

    def _poll_loop(self, client: IMAPClient) -> None:
        while not self.stop_event.is_set():
            next_poll = time.monotonic() + self.imap.poll_seconds
            while not self.stop_event.is_set():
                remaining = next_poll - time.monotonic()
                if remaining <= 0:
                    break
                wait_either(self._processed, self.stop_event,
                            min(remaining, self.status_check_seconds))
                self._processed.clear()
                if self._awaiting and self._finished_uids():
                    self._move_finished(client)
            if self.stop_event.is_set():
                return
            client.noop()  # also tells the server we are alive
            self._fetch(client, self._last_uid + 1)
            self._move_finished(client)
