"""Fixtures for the move clocks: the in-process server of tests/server with a scheduler on its clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.community.scheduler import Scheduler
from tests.server.harness import Server, headline, to

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
MODERATOR = "mod@example.org"
WEEK = timedelta(days=7)


class Clocked(Server):
    """The test server plus ``run()``: one scheduler pass, returning the mails it queued."""

    def scheduler(self) -> Scheduler:
        """A new Scheduler object each time, as after a restart: only the store remembers."""
        return Scheduler(self.config, self.store, self.clock, secret=self.processor.secret)

    def run(self, scheduler: Scheduler | None = None) -> list[tuple[str, EmailMessage]]:
        (scheduler or self.scheduler()).run_once()
        return self.take_outbox()

    def start_alien_city(self, first: str = ALICE, second: str = BOB,
                         extra: str = "") -> tuple[str, EmailMessage]:
        """``first`` challenges ``second`` and plays black (who moves first); returns the game id and
        black's "your move" mail."""
        out = self.submit(self.mail(first, f"new alien-city with {second} as black" + extra))
        game_id = str(to(out, first)[0]["Subject"]).split("]")[0].removeprefix("[pbem ")
        invitation = to(out, second)[0]
        out = self.submit(reply_to(invitation, second, "accept"))
        your_move = to(out, first)[0]
        assert headline(your_move) == f"Your move (move 1). Game {game_id} has started."
        return game_id, your_move


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Clocked]:
    srv = Clocked(tmp_path)
    srv.config.moderators = [MODERATOR]
    # The tests jump days ahead between runs, which would look like outages; the outage test sets it.
    srv.config.deadlines.outage_threshold_minutes = 10**8
    yield srv
    srv.close()
