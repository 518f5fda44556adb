"""Which pending mail is processed next: round-robin by sender, with a cap per sender and minute, so
one address flooding the inbox cannot delay everybody else's moves. On both stores (conftest.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from pbem.store.sql import SqlStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def mail(sender: str | None, n: int) -> bytes:
    head = f"From: <{sender}>\r\n" if sender else ""
    return f"{head}Message-ID: <{sender}-{n}@x>\r\n\r\nmove {n}\r\n".encode()


def test_one_of_each_sender_first(store: SqlStore) -> None:
    ids: dict[str, list[int]] = {}
    for n in range(5):
        ids.setdefault("flood", []).append(
            store.accept_inbound(mail("flood@x.net", n), "smtp", T0).inbound_id)
    for who in ("alice@x.org", "bob@x.org"):
        ids[who] = [store.accept_inbound(mail(who, n), "smtp", T0).inbound_id for n in range(2)]
    ids["nobody"] = [store.accept_inbound(mail(None, 0), "smtp", T0).inbound_id]
    flood, alice, bob, nobody = ids["flood"], ids["alice@x.org"], ids["bob@x.org"], ids["nobody"]
    rounds = []
    while heads := store.pending_fair(T0, 0, 100):  # as the processor takes them
        rounds.append(heads)
        with store.transaction() as tx:
            for inbound_id in heads:
                tx.mark_inbound(inbound_id, "done", "x", now=T0)
    # round 1: each sender's oldest, in arrival order; round 2: each sender's second; then the rest
    assert rounds == [[flood[0], alice[0], bob[0], nobody[0]], [flood[1], alice[1], bob[1]],
                      [flood[2]], [flood[3]], [flood[4]]]
    assert [m.sender for m in map(store.get_inbound, (flood[0], nobody[0]))] == ["flood@x.net", None]
    assert store.pending_fair(T0, 0, 3) == []


def test_cap_per_sender_and_minute_delays_but_never_drops(store: SqlStore) -> None:
    flood = [store.accept_inbound(mail("flood@x.net", n), "smtp", T0).inbound_id for n in range(6)]
    alice = store.accept_inbound(mail("alice@x.org", 0), "smtp", T0).inbound_id
    with store.transaction() as tx:  # three of the flood were processed 30 s ago
        for inbound_id in flood[:3]:
            tx.mark_inbound(inbound_id, "done", "x", now=T0 + timedelta(seconds=30))
    now = T0 + timedelta(seconds=60)
    assert store.pending_fair(now, 4, 100) == [flood[3], alice]  # 3 done + 1 more = the cap of 4
    assert store.pending_fair(now, 3, 100) == [alice]
    later = T0 + timedelta(seconds=91)  # the three are more than a minute old: the flood moves on
    assert store.pending_fair(later, 3, 100) == [flood[3], alice]
    assert store.inbound_counts() == {"pending": 4, "done": 3, "ignored": 0, "failed": 0}


def test_the_minute_of_the_cap_after_the_clock_stepped_back(store: SqlStore) -> None:
    # An NTP correction of an hour: what was processed before it is stamped "in the future". It is
    # not the last minute's: the sender's next mail waits for the cap of this minute only, not for
    # the hour until the clock has caught up with the stamps.
    flood = [store.accept_inbound(mail("flood@x.net", n), "smtp", T0).inbound_id for n in range(5)]
    with store.transaction() as tx:
        for inbound_id in flood[:3]:
            tx.mark_inbound(inbound_id, "done", "x", now=T0)
    assert store.pending_fair(T0 + timedelta(seconds=10), 3, 100) == []  # capped, as before
    stepped = T0 - timedelta(hours=1) + timedelta(seconds=10)
    assert store.pending_fair(stepped, 3, 100) == [flood[3]]
    with store.transaction() as tx:  # the minute after the step counts as any other
        for inbound_id in flood[3:]:
            tx.mark_inbound(inbound_id, "done", "x", now=stepped)
    more = [store.accept_inbound(mail("flood@x.net", n), "smtp", stepped).inbound_id
            for n in range(5, 7)]
    assert store.pending_fair(stepped + timedelta(seconds=5), 2, 100) == []
    assert store.pending_fair(stepped + timedelta(seconds=5), 3, 100) == [more[0]]
