"""The daemon runs the scheduler in its own thread, on the daemon's clock."""

from __future__ import annotations

import time

from pbem.community.scheduler import HEARTBEAT
from pbem.daemon.runner import Daemon
from tests.scheduler.conftest import Clocked


def _wait_for(condition, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return False


def test_the_daemon_runs_the_scheduler(server: Clocked) -> None:
    server.config.smtp_enabled = False
    server.config.deadlines.vacation_days_per_year = 0  # the policy at once, not the allowance first
    game_id, _ = server.start_alien_city()
    server.take_outbox()
    sent_before = server.store.outbound_counts().get("sent", 0)
    daemon = Daemon(server.config, server.store, server.processor, server.clock,
                    scheduler_interval_seconds=0.05)
    daemon.start()
    try:
        def beat() -> str | None:
            with server.store.transaction() as tx:
                return tx.get_meta(HEARTBEAT)

        assert _wait_for(lambda: beat() == server.clock.now().isoformat())
        server.clock.set(server.game(game_id).deadline_at)
        assert _wait_for(lambda: "grace" in server.game(game_id).record["clock"])
        # the sender was woken: the grace mails leave for the outbox Maildir
        assert _wait_for(lambda: server.store.outbound_counts()
                                      == {"pending": 0, "sent": sent_before + 2, "given_up": 0})
        assert len(list((server.config.outbox_maildir / "new").iterdir())) == 2
    finally:
        daemon.stop()
