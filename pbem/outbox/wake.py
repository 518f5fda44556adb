"""Waking a running server from another process, so that mail queued there leaves at once.

``pbem admin`` (and any other tool on the server's machine) writes to the store's outbox from a
process of its own; the running server's sender would only find those rows at its next idle poll,
up to half a minute later. So ``pbem serve`` listens on a Unix datagram socket in its data
directory, and a tool that queued mail sends it one byte: the server then looks at its outbox (and
its inbound queue) at once. A datagram needs no connection and no answer; when no server listens
the send simply fails and the mail waits for the next server to start, as before.

``pbem status`` asks through the same socket what the server knows and the database cannot say:
the faults it has now (``pbem.faults``). The question is the datagram ``status`` from a socket in
Linux's abstract namespace, and the answer a JSON datagram back to it; neither touches a file, so
this works while the database is away and while the data folder is full or read-only.
"""

from __future__ import annotations

import contextlib
import json
import logging
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

SOCKET_NAME = "wake.sock"
_MAX_PATH = 100  # bytes; Linux allows 107 for a Unix socket's path
STATUS_QUESTION = b"status"


def socket_path(data_dir: Path) -> Path:
    return Path(data_dir) / SOCKET_NAME


def notify(data_dir: Path) -> bool:
    """Tell a server running on ``data_dir`` to look at its queues now; False when none listens."""
    path = socket_path(data_dir)
    if len(str(path).encode()) > _MAX_PATH:
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        try:
            sock.sendto(b".", str(path))
        except OSError:  # no socket file, nobody bound to it, or its buffer full (a wake is pending)
            return False
    return True


def ask_status(data_dir: Path, timeout: float = 2.0) -> dict[str, Any] | None:
    """What the server running on ``data_dir`` reports of itself (``Daemon.status``); None when
    no server answers."""
    path = socket_path(data_dir)
    if len(str(path).encode()) > _MAX_PATH:
        return None
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        try:
            sock.bind("")  # Linux autobind: an abstract address, no file
            sock.settimeout(timeout)
            sock.sendto(STATUS_QUESTION, str(path))
            answer = sock.recv(1 << 16)
        except OSError:
            return None
    try:
        report = json.loads(answer)
    except ValueError:
        return None
    return report if isinstance(report, dict) else None


class WakeListener:
    """The server's end: calls ``on_wake`` for every datagram, in a thread of its own, and answers
    ``status`` questions with what ``status()`` returns."""

    def __init__(self, data_dir: Path, on_wake: Callable[[], None],
                 status: Callable[[], dict[str, Any]] | None = None):
        self.path = socket_path(data_dir)
        self.on_wake = on_wake
        self.status = status
        self._sock: socket.socket | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> threading.Thread | None:
        """Binds the socket (replacing a stale one a crashed server left) and starts listening;
        None, with a warning, when it cannot: the server then works as before, only slower to
        notice mail that other processes queue."""
        if len(str(self.path).encode()) > _MAX_PATH:
            log.warning("wake socket not used: the path %s is too long for a Unix socket", self.path)
            return None
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
            sock.bind(str(self.path))
        except OSError as exc:
            sock.close()
            log.warning("wake socket not used: cannot bind %s: %s", self.path, exc)
            return None
        sock.settimeout(0.5)
        self._sock = sock
        self._thread = threading.Thread(target=self._run, name="pbem-wake", daemon=True)
        self._thread.start()
        return self._thread

    def _run(self) -> None:
        assert self._sock is not None
        while not self._stop.is_set():
            try:
                data, sender = self._sock.recvfrom(64)
            except TimeoutError:
                continue
            except OSError:
                return  # closed by stop()
            if data == STATUS_QUESTION:
                self._answer(sender)
                continue
            self.on_wake()

    def _answer(self, sender: Any) -> None:
        if not sender or self.status is None:
            return
        try:
            answer = json.dumps(self.status()).encode()
            self._sock.sendto(answer, sender)  # type: ignore[union-attr]
        except Exception:  # never let a question stop the wake-ups
            log.exception("wake socket: could not answer a status question")

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(2)
        if self._sock is not None:
            self._sock.close()
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()
        self._sock = self._thread = None


__all__ = ["SOCKET_NAME", "WakeListener", "ask_status", "notify", "socket_path"]
