"""Pruning the raw mail of finished messages (migration 12, ``pbem.store.pruning``), on both stores:
old finished rows lose their raw mail and keep everything else; pending, failed, unsent and young
ones are untouched; what reads the rows (duplicates, counts, the per-sender limit) reads them as
before; a dry run changes nothing; a second run finds nothing; batches add up to the whole."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from pbem.store import open_store
from pbem.store.base import AcceptResult
from pbem.store.copy import copy_store
from pbem.store.pruning import PruneReport
from pbem.store.sql import SqlStore
from tests.services.postgres import Postgres
from tests.store.conftest import Backend

T0 = datetime(2026, 8, 1, 9, 0, tzinfo=UTC)
CUTOFF = T0 + timedelta(days=30)
NOW = T0 + timedelta(days=120)


def mail(n: int, sender: str = "ann@example.org", body: str = "tower red C4") -> bytes:
    return (f"From: {sender}\r\nTo: pbem@example.org\r\nMessage-ID: <m{n}@example.org>\r\n"
            f"Subject: move\r\n\r\n{body} {'x' * 50 * n}\r\n").encode()


def received(store: SqlStore, n: int, status: str | None, at: datetime, **kwargs: str) -> AcceptResult:
    """Mail ``n`` stored at ``at`` and, with a status, finished then."""
    result = store.accept_inbound(mail(n, **kwargs), "smtp", at)
    if status is not None:
        with store.transaction() as tx:
            tx.mark_inbound(result.inbound_id, status, f"{status} at {at:%Y-%m-%d}",
                            sender=kwargs.get("sender", "ann@example.org"), now=at)
    return result


def queued(store: SqlStore, n: int, at: datetime) -> int:
    with store.transaction() as tx:
        return tx.queue_outbound(message_id=f"<o{n}@pbem>", sender="pbem@example.org",
                                 recipients=[f"p{n}@example.org"],
                                 raw=b"Subject: board\r\n\r\n" + b"b" * 100 * n, now=at)


def raw_of(backend: Backend, table: str, row_id: int) -> tuple[bytes, object]:
    [(raw, pruned_at)] = backend.sql(f"SELECT raw, pruned_at FROM {table} WHERE id = ?", row_id)
    return bytes(raw), pruned_at


def fill(store: SqlStore) -> dict[str, int]:
    """Rows of every kind: finished long ago, finished lately, waiting, failed."""
    ids = {
        "done_old": received(store, 1, "done", T0).inbound_id,
        "ignored_old": received(store, 2, "ignored", T0 + timedelta(days=1)).inbound_id,
        "failed_old": received(store, 3, "failed", T0).inbound_id,
        "pending_old": received(store, 4, None, T0).inbound_id,
        "done_young": received(store, 5, "done", CUTOFF + timedelta(hours=1)).inbound_id,
        # received before the cutoff, finished after it: young, since it counts from processing
        "done_late": received(store, 6, "done", CUTOFF - timedelta(days=2)).inbound_id,
        "sent_old": queued(store, 1, T0),
        "given_up_old": queued(store, 2, T0),
        "unsent_old": queued(store, 3, T0),
        "sent_young": queued(store, 4, T0),
    }
    with store.transaction() as tx:
        tx.mark_inbound(ids["done_late"], "done", "applied later", now=CUTOFF + timedelta(days=1))
    store.mark_sent(ids["sent_old"], T0 + timedelta(minutes=1))
    store.mark_given_up(ids["given_up_old"], "550 no such user", T0 + timedelta(minutes=2))
    store.mark_send_failed(ids["unsent_old"], "421 later", T0 + timedelta(days=200))
    store.mark_sent(ids["sent_young"], CUTOFF + timedelta(seconds=1))
    return ids


def test_old_finished_rows_lose_their_raw_mail_and_keep_their_rows(store: SqlStore, backend: Backend) -> None:
    ids = fill(store)
    before = {name: raw_of(backend, "inbound" if name in ("done_old", "ignored_old", "failed_old",
                                                          "pending_old", "done_young", "done_late")
                           else "outbound", row_id) for name, row_id in ids.items()}
    counts = (store.inbound_counts(), store.outbound_counts())

    report = store.mail_pruning().prune(CUTOFF, NOW)

    pruned_in = [("done_old", mail(1)), ("ignored_old", mail(2))]
    pruned_out = ["sent_old", "given_up_old"]
    assert (report.received, report.sent) == (2, 2)
    assert report.size == sum(len(m) for _, m in pruned_in) + sum(len(before[n][0]) for n in pruned_out)
    for name, _raw in pruned_in:
        row = store.get_inbound(ids[name])
        assert row is not None and row.raw == b"" and row.pruned_at == NOW
        # the row itself: Message-ID, hash, sender, outcome, times
        assert row.message_id == f"<m{ids[name]}@example.org>" and row.sender == "ann@example.org"
        assert row.status == name.split("_")[0] and row.outcome and row.outcome.endswith(
            f"{row.received_at:%Y-%m-%d}")
    for name in pruned_out:
        raw, pruned_at = raw_of(backend, "outbound", ids[name])
        assert raw == b"" and pruned_at is not None
    for name in ("failed_old", "pending_old", "done_young", "done_late"):
        row = store.get_inbound(ids[name])
        assert row is not None and row.raw == before[name][0] != b"" and row.pruned_at is None, name
    for name in ("unsent_old", "sent_young"):
        assert raw_of(backend, "outbound", ids[name]) == before[name], name
    assert (store.inbound_counts(), store.outbound_counts()) == counts
    # the sender still has the waiting mail (raw included), and the given-up one is listed as before
    assert [(o.id, len(o.raw)) for o in store.due_outbound(T0 + timedelta(days=365))] == [
        (ids["unsent_old"], len(before["unsent_old"][0]))]
    [given_up] = store.given_up_outbound()
    assert (given_up.id, given_up.last_error, given_up.raw, given_up.pruned_at) == (
        ids["given_up_old"], "550 no such user", b"", NOW)
    [pending] = store.pending_inbound()
    assert pending.raw == mail(4)


def test_a_mail_sent_again_after_pruning_is_still_a_duplicate(store: SqlStore) -> None:
    first = received(store, 1, "done", T0)
    store.mail_pruning().prune(CUTOFF, NOW)
    again = store.accept_inbound(mail(1), "imap", NOW)  # the same bytes: by their hash
    assert (again.new, again.inbound_id, again.status) == (False, first.inbound_id, "done")
    other_bytes = mail(1, body="tower red C4 (sent again by a client that rewrote it)")
    resent = store.accept_inbound(other_bytes, "smtp", NOW)  # same Message-ID, other bytes
    assert (resent.new, resent.inbound_id, resent.status) == (False, first.inbound_id, "done")
    assert store.inbound_counts() == {"pending": 0, "done": 1, "ignored": 0, "failed": 0}


def test_pruned_rows_still_count_for_the_per_sender_limit(store: SqlStore) -> None:
    now = T0 + timedelta(seconds=30)
    for n in (1, 2):
        received(store, n, "done", now - timedelta(seconds=n), sender="flood@example.org")
    waiting = received(store, 3, None, now, sender="flood@example.org").inbound_id
    other = received(store, 4, None, now, sender="ann@example.org").inbound_id
    report = store.mail_pruning().prune(now, now)
    assert report.received == 2
    # two processed within the minute: the flooder's third waits, with or without their raw mail
    assert store.pending_fair(now, 2, 10) == [other]
    assert store.pending_fair(now, 3, 10) == [waiting, other]


def test_dry_run_changes_nothing_and_says_what_a_prune_would(store: SqlStore, backend: Backend) -> None:
    fill(store)
    snapshot = backend.sql("SELECT id, raw, pruned_at FROM inbound ORDER BY id")
    out_snapshot = backend.sql("SELECT id, raw, pruned_at FROM outbound ORDER BY id")
    pruning = store.mail_pruning()
    dry = pruning.prune(CUTOFF, NOW, dry_run=True)
    assert backend.sql("SELECT id, raw, pruned_at FROM inbound ORDER BY id") == snapshot
    assert backend.sql("SELECT id, raw, pruned_at FROM outbound ORDER BY id") == out_snapshot
    assert pruning.last() is None
    real = pruning.prune(CUTOFF, NOW)
    assert (dry.received, dry.sent, dry.size) == (real.received, real.sent, real.size) == (2, 2, real.size)
    assert dry.line() == (f"would prune the raw mail of 2 received and 2 sent messages older than "
                          f"2026-08-31 09:00 UTC ({real.size} bytes); nothing changed (--dry-run)")
    assert real.line() == (f"pruned the raw mail of 2 received and 2 sent messages older than "
                           f"2026-08-31 09:00 UTC ({real.size} bytes); kept their rows")


def test_a_second_run_prunes_nothing_more(store: SqlStore, backend: Backend) -> None:
    fill(store)
    pruning = store.mail_pruning()
    pruning.prune(CUTOFF, NOW)
    stamps = backend.sql("SELECT id, pruned_at FROM inbound ORDER BY id")
    again = pruning.prune(CUTOFF, NOW + timedelta(days=1))
    assert (again.received, again.sent, again.size) == (0, 0, 0)
    assert again.line() == ("nothing to prune: no finished message older than 2026-08-31 09:00 UTC "
                            "still has its raw mail")
    assert backend.sql("SELECT id, pruned_at FROM inbound ORDER BY id") == stamps  # dates not moved
    last = pruning.last()  # the run that pruned, not the empty one
    assert last is not None and (last.at, last.before, last.received, last.sent) == (NOW, CUTOFF, 2, 2)


def test_batches_add_up_to_the_whole_oldest_first(store: SqlStore) -> None:
    ids = [received(store, n, "done", T0 + timedelta(hours=10 - n)).inbound_id for n in range(1, 8)]
    seen: list[PruneReport] = []
    report = store.mail_pruning().prune(CUTOFF, NOW, batch=3,
                                        progress=lambda r: seen.append(PruneReport(r.before, r.received)))
    assert report.received == 7 and [r.received for r in seen] == [3, 6, 7]
    assert all(store.get_inbound(i).raw == b"" for i in ids)  # type: ignore[union-attr]
    # a prune stopped after its first batch (interrupted) leaves the oldest pruned, the rest whole
    more = [received(store, n, "done", T0 + timedelta(hours=20 - n)).inbound_id for n in range(11, 15)]

    class Stop(Exception):
        pass

    def stop(_report: PruneReport) -> None:
        raise Stop

    with pytest.raises(Stop):
        store.mail_pruning().prune(CUTOFF, NOW, batch=2, progress=stop)
    assert [store.get_inbound(i).raw == b"" for i in more] == [False, False, True, True]  # type: ignore[union-attr]
    assert store.mail_pruning().prune(CUTOFF, NOW).received == 2  # and a run again does the rest


def test_pbem_store_copy_carries_pruned_rows_as_they_are(tmp_path: Path, postgres: Postgres) -> None:
    """A copy to PostgreSQL (``pbem store copy``) has the pruned rows pruned and the others whole,
    and still knows the pruned mail when it comes again."""
    with open_store(tmp_path / "pbem.sqlite3") as source, \
            open_store(postgres.create_database("pruned_copy")) as target:
        fill(source)
        source.mail_pruning().prune(CUTOFF, NOW)
        copy_store(source, target)  # type: ignore[arg-type]
        for table in ("inbound", "outbound"):
            rows = f"SELECT id, raw, pruned_at FROM {table} ORDER BY id"
            copied = [(i, bytes(raw), at) for i, raw, at in target._db().all(rows)]  # type: ignore[attr-defined]
            assert copied == [(i, bytes(raw), at) for i, raw, at in source._db().all(rows)]  # type: ignore[attr-defined]
            assert sum(1 for _i, raw, at in copied if raw == b"" and at is not None) == 2
        again = target.accept_inbound(mail(1), "smtp", NOW)
        assert (again.new, again.status) == (False, "done")
        assert target.mail_pruning().prune(CUTOFF, NOW).received == 0
