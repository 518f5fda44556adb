"""`pbem status` as an operator reads it: who is alive, who went silent, who holds which role, and
how much mail waits and since when."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from pbem.cli.status import status_lines
from pbem.store import open_store
from pbem.store.base import Worker

NOW = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def test_status_lines(tmp_path: Path) -> None:
    with open_store(tmp_path / "pbem.sqlite3") as store:
        assert status_lines(store, NOW, imap=True) == [
            "workers: 0 alive", "imap role: nobody", "scheduler role: nobody", "inbound: 0 pending",
            "outbox: 0 waiting", "games: 0 active"]
        store.heartbeat(Worker("a:1:x", "a", 1, NOW - timedelta(hours=3), NOW - timedelta(seconds=4),
                               ["imap", "scheduler"]))
        store.heartbeat(Worker("b:2:x", "b", 2, NOW - timedelta(days=3), NOW - timedelta(minutes=5),
                               ["imap"]))
        store.accept_inbound(b"Message-ID: <1@x>\r\n\r\n", "smtp", NOW - timedelta(seconds=90))
        store.accept_inbound(b"Message-ID: <2@x>\r\n\r\n", "smtp", NOW - timedelta(seconds=3))
        with store.transaction() as tx:
            tx.queue_outbound(message_id="<o@x>", sender="s", recipients=["r"], raw=b"",
                              now=NOW - timedelta(minutes=7))
        assert status_lines(store, NOW, imap=True) == [
            "workers: 1 alive, 1 silent",
            "  a pid 1: alive, up 3 h, last heartbeat 4 s ago, holds imap and scheduler",
            "  b pid 2: silent (stopped without saying so?), up 3 days, last heartbeat 5 min ago",
            "imap role: a pid 1",
            "scheduler role: a pid 1",
            "inbound: 2 pending, the oldest received 90 s ago",
            "outbox: 1 waiting, the oldest due 7 min ago",
            "games: 0 active"]
        assert "imap role" not in " ".join(status_lines(store, NOW, imap=False))
