"""The wall clock stepping back an hour (an NTP correction) while games run, with the clock moved by
hand: every deadline action, reminder and digest happens once however often the clock passes its
time, and a move made right after the step is taken, charged no negative time, and leaves a
clock log that replays to the same values. (The same with a real ``pbem serve`` under libfaketime:
tests/faults/test_clock_step.py.)"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from pbem.cli.mailbox import reply_to
from pbem.clocks import log as cl
from tests.scheduler.conftest import ALICE, BOB, WEEK, Clocked
from tests.server.harness import headline, to
from tests.server.players import Player

HOUR = timedelta(hours=1)


@pytest.fixture(autouse=True)
def no_allowance(server: Clocked) -> None:
    server.config.deadlines.vacation_days_per_year = 0


def _back_an_hour(server: Clocked) -> None:
    """The step, and the runs after it (a new scheduler too, as after a restart): nothing."""
    server.clock.advance(-3600)
    assert server.run() == []
    server.clock.advance(minutes=30)
    assert server.run() == [] and server.run(server.scheduler()) == []


def _at(server: Clocked, when: datetime) -> list[tuple[str, str]]:
    server.clock.set(when)
    return [(rcpt, headline(m)) for rcpt, m in server.run()]


def test_reminders_grace_and_forfeit_once_each_through_steps_back(server: Clocked) -> None:
    game_id, _ = server.start_alien_city()
    deadline = server.game(game_id).deadline_at
    assert _at(server, deadline - 48 * HOUR) == [(ALICE, f"Reminder: your move in {game_id} (move 1)")]
    _back_an_hour(server)
    assert _at(server, deadline - 12 * HOUR) == [(ALICE, f"Reminder: your move in {game_id} (move 1)")]
    _back_an_hour(server)
    final = _at(server, deadline)
    assert sorted(final) == [(ALICE, f"Final reminder: your move in {game_id} (move 1) by "
                                     "Sat 28 Nov 2026, 10:00 UTC, in 1 day"),
                             (BOB, f"black ({ALICE}) missed the deadline in {game_id}")]
    _back_an_hour(server)  # before the deadline again: no second grace, no new reminders
    assert server.game(game_id).deadline_at == deadline + 24 * HOUR
    over = _at(server, deadline + 24 * HOUR)
    assert sorted(over) == [(ALICE, f"Game over: you forfeited; {BOB} wins"),
                            (BOB, f"Game over: {ALICE} forfeited; you win")]
    _back_an_hour(server)  # the game stays over, nothing is announced twice
    assert server.game(game_id).status == "over"
    assert cl.check(server.game(game_id).record) == []


def test_a_move_right_after_the_step_is_taken(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()
    server.clock.advance(minutes=10)  # the turn began ten minutes ago ...
    server.clock.advance(-3600)  # ... and the clock goes back an hour: "50 minutes before" it
    out = server.submit(reply_to(your_move, ALICE, Player(ALICE).choose_move(your_move)))
    assert headline(to(out, BOB)[0]).startswith("Your move (move 2)")
    row = server.game(game_id)
    assert row.to_move == "white" and row.deadline_at == server.clock.now() + WEEK
    moved = [e for e in cl.events(row.record) if e["event"] == "move"]
    assert len(moved) == 1 and moved[0]["used"] == 0 and moved[0]["left"] == 7 * 86400
    assert cl.check(row.record) == []  # the log replays to the values it holds
    # the reminders of Bob's turn come once, at their times on the corrected clock
    assert _at(server, row.deadline_at - 48 * HOUR) == [
        (BOB, f"Reminder: your move in {game_id} (move 2)")]
    _back_an_hour(server)


def test_the_daily_digest_once_a_day_when_the_clock_goes_back_over_its_hour(server: Clocked) -> None:
    game_id, your_move = server.start_alien_city()  # Fri 20 Nov 2026, 10:00 UTC
    (confirm,) = to(server.submit(server.mail(BOB, "set notify digest")), BOB)
    server.submit(reply_to(confirm, BOB, "set notify digest"))
    out = server.submit(reply_to(your_move, ALICE, Player(ALICE).choose_move(your_move)))
    assert to(out, BOB) == []  # held for his digest
    day = server.clock.now().replace(hour=0, minute=0) + timedelta(days=1)
    assert _at(server, day + timedelta(hours=7, minutes=5)) == [
        (BOB, f"Daily digest: your move in {game_id}")]
    _back_an_hour(server)  # 06:05, then 06:35: before the digest's hour again
    assert _at(server, day + timedelta(hours=7, minutes=30)) == []
    # over midnight: back into the day before, whose digest went out long ago
    assert to(server.submit(reply_to(your_move, ALICE, "message still thinking?")), BOB) == []
    assert _at(server, day + timedelta(days=1, minutes=20)) == []  # 00:20: before 07:00
    _back_an_hour(server)
    digest = _at(server, day + timedelta(days=1, hours=7))
    assert digest == [(BOB, f"Daily digest: your move in {game_id}")]
