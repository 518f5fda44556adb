"""The database's disk fills in the middle of a scheduler run (SQLite on a 4 MB tmpfs): the run
stops at the first game whose action cannot be written (tried once more) and raises the fault for
the daemon's tracker to say in one line, instead of logging a traceback for every game left; when
space returns, the next run does the rest, and what the first run did is not done again."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

import pytest

from pbem.community.scheduler import Scheduler
from pbem.faults import is_fault
from pbem.store.base import Tx
from tests.faults import fill, tmpfs
from tests.scheduler.conftest import Clocked
from tests.server.harness import headline

PLAYERS = [(f"a{n}@example.org", f"b{n}@example.org") for n in range(3)]


class FillingScheduler(Scheduler):
    """The scheduler, with the disk filling just before the second game's deadline is handled."""

    disk: Any = None
    filler: Any = None
    seen = 0

    def _deadline(self, tx: Tx, game_id: str, now: datetime, report: Any) -> None:
        self.seen += 1
        if self.seen == 2 and self.filler is None:
            self.filler = fill(self.disk)
        super()._deadline(tx, game_id, now, report)


def test_the_disk_fills_in_the_middle_of_a_scheduler_run(caplog: pytest.LogCaptureFixture) -> None:
    with tmpfs() as disk:
        server = Clocked(disk)
        try:
            server.config.deadlines.vacation_days_per_year = 0
            server.config.deadlines.outage_threshold_minutes = 10**8
            games = [server.start_alien_city(a, b)[0] for a, b in PLAYERS]
            server.clock.set(max(server.game(g).deadline_at for g in games))
            caplog.set_level(logging.DEBUG, logger="pbem.community.scheduler")
            scheduler = FillingScheduler(server.config, server.store, server.clock,
                                         secret=server.processor.secret)
            scheduler.disk = disk
            with pytest.raises(Exception) as raised:
                scheduler.run_once()
            assert is_fault(raised.value), raised.value  # the daemon's loop tells the tracker
            assert "disk is full" in str(raised.value)
            logged = [r for r in caplog.records if r.levelno >= logging.WARNING]
            assert logged == [], [r.getMessage() for r in logged]  # no traceback, no line per game
            scheduler.filler.unlink()  # space is back
            first = server.take_outbox()
            assert len(first) == 2  # the first game's final reminder and its news to the opponent
            rest = server.run()
            assert server.run() == []
        finally:
            server.close()
    graced = sorted(headline(m).split(" in ")[1].split(" ")[0] for _rcpt, m in first + rest
                    if headline(m).startswith("Final reminder"))
    assert graced == sorted(games)  # each game's deadline handled once
    assert len(first + rest) == 2 * len(games)
