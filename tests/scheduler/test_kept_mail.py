"""``[server] keep_mail_days``: the scheduler drops the raw mail of what finished longer ago once a
day and says so in one log line; a backlog goes on over the next runs; unset, nothing is dropped."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest

from pbem.community import scheduler as scheduling
from tests.scheduler.conftest import ALICE, BOB, Clocked


def raw_kept(server: Clocked) -> list[bool]:
    return [bool(m.raw) for m in server.store.iter_inbound()]


def test_the_scheduler_prunes_old_mail_once_a_day(server: Clocked, caplog: pytest.LogCaptureFixture) -> None:
    server.config.keep_mail_days = 30
    server.start_alien_city(ALICE, BOB)  # two mails received, their answers sent
    server.clock.advance(days=20)
    server.submit(server.mail("carol@example.org", "help"))
    assert server.scheduler().run_once().pruned == 0  # nothing is 30 days old yet
    server.clock.advance(days=11)
    with caplog.at_level(logging.INFO, logger="pbem.community.scheduler"):
        report = server.scheduler().run_once()
    sent = server.store.outbound_counts()["sent"]
    assert report.pruned == 2 + (sent - 1)  # all but Carol's help and its answer
    assert raw_kept(server) == [False, False, True]
    [line] = [r.getMessage() for r in caplog.records if "pruned the raw mail" in r.getMessage()]
    assert line.startswith(f"scheduler: pruned the raw mail of 2 received and {sent - 1} sent messages "
                           "older than ") and line.endswith("; kept their rows (keep_mail_days = 30)")
    # mail that finished long ago but shows up only now waits for tomorrow's prune: today's is done
    old = server.clock.now() - timedelta(days=40)
    late = server.store.accept_inbound(b"From: dan@example.org\r\nMessage-ID: <late@x>\r\n\r\nhelp\r\n",
                                       "smtp", old)
    with server.store.transaction() as tx:
        tx.mark_inbound(late.inbound_id, "done", "help", now=old)
    assert server.scheduler().run_once().pruned == 0 and raw_kept(server) == [False, False, True, True]
    server.clock.advance(days=1)
    assert server.scheduler().run_once().pruned == 1 and raw_kept(server) == [False, False, True, False]


def test_a_backlog_goes_on_in_the_next_runs(server: Clocked, monkeypatch: pytest.MonkeyPatch) -> None:
    server.config.keep_mail_days = 30
    for n in range(5):
        server.submit(server.mail(f"p{n}@example.org", "help"))
    server.clock.advance(days=31)
    monkeypatch.setattr(scheduling, "PRUNE_PER_RUN", 4)
    scheduler = server.scheduler()
    done = [scheduler.run_once().pruned for _ in range(4)]
    assert done == [4, 4, 2, 0] and not any(raw_kept(server))  # 5 received, 5 answers


def test_without_keep_mail_days_everything_is_kept(server: Clocked) -> None:
    server.start_alien_city(ALICE, BOB)
    server.clock.advance(days=1000)
    assert server.scheduler().run_once().pruned == 0 and all(raw_kept(server))
