"""The wake socket: a tool that queued mail wakes a running server; without one it says so."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from pbem.outbox.wake import WakeListener, notify, socket_path


def test_notify_wakes_a_listener_and_fails_without_one(tmp_path: Path) -> None:
    assert notify(tmp_path) is False  # nobody listens: the mail waits for the next server
    woken = threading.Event()
    listener = WakeListener(tmp_path / "data", woken.set)
    assert listener.start() is not None
    try:
        assert notify(tmp_path / "data") is True
        assert woken.wait(5)
    finally:
        listener.stop()
    assert not socket_path(tmp_path / "data").exists()
    assert notify(tmp_path / "data") is False
    # a socket file a crashed server left behind is replaced
    crashed = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    crashed.bind(str(socket_path(tmp_path / "data")))
    crashed.close()
    assert notify(tmp_path / "data") is False  # the file is there, nobody reads it
    fresh = WakeListener(tmp_path / "data", woken.set)
    woken.clear()
    assert fresh.start() is not None
    try:
        assert notify(tmp_path / "data") is True and woken.wait(5)
    finally:
        fresh.stop()
