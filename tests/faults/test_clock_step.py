"""The wall clock stepping back (an NTP correction of an hour) while games run.

A real ``pbem serve`` runs under libfaketime, whose offset file the test rewrites: every process of
the server (the listener, the processor process, the sender and the scheduler) reads the stepped
wall clock, while the monotonic clock, which no correction moves, runs on. Its players read their
mail at the relay: each reminder and the deadline's final reminder arrive once, however often the
clock passes their time again; a move sent right after the step is accepted; a reply that was
waiting for its next attempt leaves at that attempt, not an hour later; ``pbem status``, on a clock
that is behind the server's, takes the worker for alive. Beside it, the sender's part in process.
"""

from __future__ import annotations

import logging
import os
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.cli.mailbox import new_mail, reply_to
from pbem.clock import ManualClock
from pbem.config import RelayConfig
from pbem.outbox.sender import OutboxSender
from pbem.outbox.wake import notify
from pbem.store import open_store
from tests.faults import SERVER, Served, smtp_send, wait_until
from tests.server.players import example_move, headline
from tests.services.requirements import free_port, missing
from tests.transport import make_config

ALICE, BOB = "alice@example.org", "bob@example.org"
T0 = datetime(2027, 3, 1, 10, 0, tzinfo=UTC)  # a Monday
HOUR = timedelta(hours=1)
# Debian puts it under the machine's multiarch folder (x86_64-linux-gnu, aarch64-linux-gnu, ...).
LIBFAKETIME = next(iter(sorted(Path("/usr/lib").glob("*/faketime/libfaketimeMT.so.1"))),
                   Path("/usr/lib/faketime/libfaketimeMT.so.1"))
_RAN = re.compile(r"scheduler: ran at (\S+?):? ")


class SteppedClock:
    """The wall clock of the server's processes: the real one plus an offset in a file that
    libfaketime reads at every reading of the time (the monotonic clock is left alone)."""

    def __init__(self, folder: Path) -> None:
        if not LIBFAKETIME.exists():
            missing(f"libfaketime is not installed ({LIBFAKETIME}; apt-get install faketime, "
                    "scripts/ensure-services.sh does)")
        self.file = folder / "faketime.rc"
        self.offset = timedelta(0)

    @property
    def env(self) -> dict[str, str]:
        return {"LD_PRELOAD": str(LIBFAKETIME), "FAKETIME_TIMESTAMP_FILE": str(self.file),
                "FAKETIME_NO_CACHE": "1", "FAKETIME_DONT_FAKE_MONOTONIC": "1"}

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def set(self, when: datetime) -> None:
        self._write(when - datetime.now(UTC))

    def back(self, by: timedelta) -> None:
        self._write(self.offset - by)

    def _write(self, offset: timedelta) -> None:
        self.offset = offset
        tmp = self.file.with_suffix(".tmp")
        tmp.write_text(f"{offset.total_seconds():+.0f}\n")
        os.replace(tmp, self.file)  # a reader sees the old offset or the new one


def test_the_clock_stepping_back_while_games_run(tmp_path: Path, smtp_sink) -> None:
    clock = SteppedClock(tmp_path)
    clock.set(T0)
    port = free_port()
    config = tmp_path / "pbem.toml"
    data = tmp_path / "data"
    config.write_text(f'[server]\ndata_dir = "{data}"\nlog_level = "DEBUG"\n[smtp]\nport = {port}\n'
                      f'[relay]\nhost = "{smtp_sink.host}"\nport = {smtp_sink.port}\n'
                      'security = "none"\n[deadlines]\nvacation_days_per_year = 0\n'
                      "outage_threshold_minutes = 100000000\n")
    server = Served(config, tmp_path / "serve.log", port, env=clock.env)

    def mails(to: str, saying: str) -> list:
        """The mails ``to`` got whose first line (the headline) says ``saying``."""
        return [m.message for m in smtp_sink.messages
                if to in m.rcpt_tos and saying in headline(m.message)]

    def arrived(to: str, saying: str, count: int = 1) -> list:
        wait_until(lambda: len(mails(to, saying)) >= count, 30, f"{to}: {saying!r}")
        return mails(to, saying)

    def refused(to: str) -> bool:
        return any("not sent, attempt 1" in line and to in line and "450 4.2.0" in line
                   for line in server.log().splitlines())

    def scheduler_runs() -> list[datetime]:
        return [datetime.fromisoformat(m.group(1)) for m in _RAN.finditer(server.log())]

    def run_scheduler() -> None:
        """Wake the server and wait for a scheduler run at the clock's present time."""
        since = (clock.now() - timedelta(seconds=1)).replace(microsecond=0)
        notify(data)
        wait_until(lambda: any(since <= at <= since + timedelta(minutes=1)
                               for at in scheduler_runs()), 30, f"a scheduler run at {since}")

    try:
        smtp_send(port, new_mail(ALICE, SERVER, f"new alien-city with {BOB} as black"))
        (invitation,) = arrived(BOB, "")
        smtp_send(port, reply_to(invitation, BOB, "accept"))
        (your_move,) = arrived(ALICE, "Your move (move 1)")
        store = open_store(data / "pbem.sqlite3")
        try:
            with store.transaction() as tx:
                (game,) = tx.games_due(T0 + timedelta(days=30))
        finally:
            store.close()
        deadline = game.deadline_at
        assert deadline is not None and T0 + 7 * 24 * HOUR <= deadline < T0 + 7 * 24 * HOUR + HOUR

        # the 48-hour reminder; an hour back: the clock passes its time again
        clock.set(deadline - 48 * HOUR + timedelta(minutes=1))
        run_scheduler()
        arrived(ALICE, "Reminder: your move")
        clock.back(HOUR)
        run_scheduler()
        # the 12-hour reminder (the next day: one reminder mail a day), and an hour back again
        clock.set(deadline - 12 * HOUR + timedelta(minutes=1))
        run_scheduler()
        arrived(ALICE, "Reminder: your move", 2)
        clock.back(HOUR)
        run_scheduler()

        # the deadline: the final reminder, and the news to Bob, whose mailbox is busy for now
        smtp_sink.reject_rcpt[BOB] = "450 4.2.0 mailbox busy, try again later"
        clock.set(deadline + timedelta(minutes=1))
        run_scheduler()
        arrived(ALICE, "Final reminder: your move")
        wait_until(lambda: refused(BOB), 30, "Bob's mail refused for now")
        # an hour back, before the deadline: nothing fires again, and Alice's move is taken
        clock.back(HOUR)
        smtp_sink.reject_rcpt.clear()
        run_scheduler()
        stepped = time.monotonic()
        smtp_send(port, reply_to(your_move, ALICE, f"move {example_move(your_move)}"))
        arrived(BOB, "Your move (move 2)")
        arrived(BOB, "missed the deadline")  # at its next attempt, not an hour later
        assert time.monotonic() - stepped < 30
        # past the end of the grace period: the turn ended with the move, nobody forfeits
        clock.set(deadline + 25 * HOUR)
        run_scheduler()

        code, report = server.status()  # its clock is behind the server's by years
        assert code == 0 and "workers: 1 alive" in report, report
    finally:
        server.stop()
    assert len(mails(ALICE, "Reminder: your move")) == 2
    assert len(mails(ALICE, "Final reminder: your move")) == 1
    assert len(mails(BOB, "missed the deadline")) == 1
    assert len(mails(BOB, "Your move (move 2)")) == 1
    assert all("forfeit" not in headline(m.message).lower() for m in smtp_sink.messages)
    log = server.log()
    # Bob's waiting mail was made due at once (the step is measured by the monotonic clock)
    assert re.search(r"sender: the clock went back by (0:59:59|1:00:0[01]); 1 waiting mail\(s\) are "
                     r"due now instead of after it", log)
    assert "Traceback" not in log


def test_a_reply_waiting_for_its_next_attempt_leaves_at_it_after_a_step_back(
        tmp_path: Path, smtp_sink, caplog: pytest.LogCaptureFixture) -> None:
    clock = ManualClock(T0)
    smtp_sink.reject_rcpt[BOB] = "450 4.2.0 mailbox busy, try again later"
    store = open_store(tmp_path / "pbem.sqlite3")
    try:
        with store.transaction() as tx:
            tx.queue_outbound(message_id="<step.1@example.org>", sender=SERVER, recipients=[BOB],
                              raw=f"To: {BOB}\r\nSubject: x\r\n\r\nx\r\n".encode(), now=clock.now())
        config = make_config(tmp_path, relay=RelayConfig(host=smtp_sink.host, port=smtp_sink.port,
                                                         security="none", timeout_seconds=5))
        sender = OutboxSender(store, config, clock)
        caplog.set_level(logging.WARNING, logger="pbem.outbox.sender")
        assert sender.send_due_once() == 0
        (row,) = store.due_outbound(clock.now() + 2 * HOUR)
        assert row.next_attempt_at == T0 + timedelta(seconds=5)
        smtp_sink.reject_rcpt.clear()
        # six seconds later, but the wall clock went back by an hour meanwhile: without more, the
        # next attempt (T0 + 5 s) would be an hour away
        clock.set(T0 + timedelta(seconds=6) - HOUR)
        assert sender.send_due_once() == 1
        assert [m.rcpt_tos for m in smtp_sink.messages] == [[BOB]]
        assert store.outbound_counts() == {"pending": 0, "sent": 1, "given_up": 0}
    finally:
        store.close()
    (line,) = [r.getMessage() for r in caplog.records if "clock went back" in r.getMessage()]
    assert line == "sender: the clock went back by 0:59:54; 1 waiting mail(s) are due now instead of after it"
