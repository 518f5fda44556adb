"""Two processors (as in two workers) on one PostgreSQL database while two addresses flood it: they take
pending mail in the same fair order (round-robin by sender) and claim each message with ``FOR UPDATE
SKIP LOCKED``, so each message is processed once, and the other senders' mail is not held up behind
the flood."""

from __future__ import annotations

import threading
from email.message import EmailMessage
from email.utils import make_msgid
from pathlib import Path

from pbem.processing.processor import Processor
from pbem.store import open_store
from pbem.store.common import now_utc
from pbem.store.sql import SqlStore
from tests.services.postgres import Postgres
from tests.transport import SERVER, make_config

FLOOD = 40


def help_mail(sender: str) -> bytes:
    msg = EmailMessage()
    msg["From"], msg["To"], msg["Subject"], msg["Message-ID"] = sender, SERVER, "help", make_msgid()
    msg.set_content("help\n")
    return msg.as_bytes()


def test_two_processors_share_a_flood_fairly_and_once(tmp_path: Path, postgres: Postgres) -> None:
    dsn = postgres.create_database("fair_claims")
    stores: list[SqlStore] = [open_store(dsn), open_store(dsn)]  # type: ignore[list-item]
    try:
        first = stores[0]
        # two flooding addresses: one sender's mail is taken one message a round, by one worker
        flood = [first.accept_inbound(help_mail(f"flood{n % 2}@example.net"), "smtp", now_utc()).inbound_id
                 for n in range(FLOOD)]
        others = [first.accept_inbound(help_mail(who), "smtp", now_utc()).inbound_id
                  for who in ("ann@example.org", "bo@example.org")]
        order: list[int] = []
        by_worker = [0, 0]
        lock = threading.Lock()
        # Both start processing together: building a Processor takes a while on a loaded machine,
        # and the first one ready could otherwise take the whole flood before the other began.
        ready = threading.Barrier(2)

        def work(worker: int, store: SqlStore) -> None:
            processor = Processor(make_config(tmp_path), store, secret=b"s" * 32)
            take = processor._process

            def recorded(*candidates: int) -> tuple[int, str] | None:
                processed = take(*candidates)
                if processed is not None:
                    with lock:
                        order.append(processed[0])
                        by_worker[worker] += 1
                return processed

            processor._process = recorded  # type: ignore[method-assign]
            ready.wait(60)
            # A round may find each of its candidates done or held by the other worker meanwhile;
            # the daemon then tries again when it next wakes, as this loop does while mail waits.
            while processor.process_pending(1000) or store.pending_inbound(1):
                pass

        threads = [threading.Thread(target=work, args=(i, s)) for i, s in enumerate(stores)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert sorted(order) == sorted(flood + others)  # every message once, by one of the two
        assert min(by_worker) >= 5, by_worker  # both took part
        assert first.inbound_counts()["done"] == FLOOD + 2
        replies = first._db().all("SELECT recipients FROM outbound")
        assert len(replies) == FLOOD + 2  # one answer each: none processed twice
        assert max(order.index(i) for i in others) < 6  # in the first rounds, not after the flood
    finally:
        for store in stores:
            store.close()

