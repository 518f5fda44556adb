"""What hostile mail (migration 5) and the classic commands (migration 6) keep in the store, on both
stores: the intake facts (envelope sender, original size, From), bouncing addresses, outbox rows
given up for good and the relay coming back, round-robin sending, changes of address, and the result
columns that archive searches use."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pbem.store.base import GameRow, Seat
from pbem.store.sql import SqlStore

T0 = datetime(2026, 11, 20, 10, 0, tzinfo=UTC)


def test_intake_keeps_envelope_size_and_sender(store: SqlStore) -> None:
    raw = b"From: Ann <Ann@Example.ORG>\r\nMessage-ID: <big@x>\r\n\r\n"
    first = store.accept_inbound(raw, "imap", T0, envelope_from="", original_size=9_000_000)
    [second] = store.accept_inbound_many([(b"Message-ID: <m@x>\r\n\r\nhi", "smtp", T0, None, "bo@x.org")])
    got = store.get_inbound(first.inbound_id)
    assert got is not None and (got.envelope_from, got.original_size, got.sender) == (
        "", 9_000_000, "ann@example.org")
    other = store.get_inbound(second.inbound_id)
    assert other is not None and (other.envelope_from, other.original_size, other.sender) == (
        "bo@x.org", None, None)
    assert store.get_inbound(10_000) is None
    with store.transaction() as tx:
        tx.mark_inbound(first.inbound_id, "ignored", "ignored: over the limit", now=T0)
    assert store.inbound_counts() == {"pending": 1, "done": 0, "ignored": 1, "failed": 0}


def test_bouncing_addresses(store: SqlStore) -> None:
    with store.transaction() as tx:
        assert tx.mark_bouncing("Gone@X.org", T0, "550 " + "x" * 600)
        assert not tx.mark_bouncing("gone@x.org", T0 + timedelta(hours=1), "again")  # told once
        assert tx.is_bouncing("GONE@x.org") and not tx.is_bouncing("ann@x.org")
    [(email, since, detail)] = store.bouncing_addresses()
    assert (email, since, len(detail)) == ("gone@x.org", T0, 500)
    with store.transaction() as tx:
        assert tx.clear_bouncing("gone@x.org") and not tx.clear_bouncing("gone@x.org")
    assert store.bouncing_addresses() == []


def queue(store: SqlStore, *recipients: str) -> list[int]:
    with store.transaction() as tx:
        return [tx.queue_outbound(message_id=f"<o{i}@pbem>", sender="pbem@x", recipients=[r],
                                  raw=b"x", now=T0) for i, r in enumerate(recipients)]


def test_outbox_round_robin_given_up_and_relay_back(store: SqlStore) -> None:
    ids = queue(store, "flood@x", "flood@x", "flood@x", "ann@x", "bo@x")
    # each recipient's first mail, then each one's second, ...; one recipient's mails in queue order
    assert [o.id for o in store.due_outbound(T0)] == [ids[0], ids[3], ids[4], ids[1], ids[2]]
    store.mark_given_up(ids[3], "550 no such user", T0)
    with pytest.raises(LookupError):
        store.mark_given_up(10_000, "550 again", T0)
    store.mark_send_failed(ids[4], "421 later", T0 + timedelta(hours=1))
    assert [o.id for o in store.due_outbound(T0)] == [ids[0], ids[1], ids[2]]
    assert store.outbound_counts() == {"pending": 4, "sent": 0, "given_up": 1}
    [given_up] = store.given_up_outbound()
    assert (given_up.id, given_up.given_up_at, given_up.last_error, given_up.attempts) == (
        ids[3], T0, "550 no such user", 1)
    assert store.reset_backoff(T0) == 1  # the relay is back: the one waiting is due now
    assert [o.id for o in store.due_outbound(T0)] == [ids[0], ids[4], ids[1], ids[2]]
    assert store.queue_figures()["outbound_pending"] == 4


def test_a_claimed_batch_gives_up_rows(store: SqlStore) -> None:
    ids = queue(store, "gone@x", "ann@x")
    with store.claim_outbound(T0) as batch:
        assert [r.id for r in batch.rows] == ids
        assert batch.take(batch.rows[0])
        batch.given_up(ids[0], "550 gone")
        assert batch.take(batch.rows[1])
        batch.sent(ids[1])
    assert store.outbound_counts() == {"pending": 0, "sent": 1, "given_up": 1}
    with store.claim_outbound(T0 + timedelta(days=1)) as batch:
        assert batch.rows == []


def test_a_refusal_given_up_with_its_report_stores_the_report_as_a_bounce(store: SqlStore) -> None:
    """The report of a refusal at RCPT goes in with the mark (one transaction), from the null
    sender; the same refusal reported again (the mark was lost, the mail refused again) is one."""
    report = (b"From: MAILER-DAEMON@x\r\nMessage-ID: <refused.1@x>\r\n\r\nFinal-Recipient: rfc822; gone@x")
    ids = queue(store, "gone@x", "gone2@x")
    with store.claim_outbound(T0) as batch:
        assert batch.take(batch.rows[0])
        batch.given_up(ids[0], "550 5.1.1 gone", report)
        assert batch.take(batch.rows[1])
        batch.given_up(ids[1], "550 5.1.1 gone", report)  # the same report again
    assert store.outbound_counts() == {"pending": 0, "sent": 0, "given_up": 2}
    [stored] = store.pending_inbound()
    assert (stored.raw, stored.source, stored.envelope_from, stored.received_at) == (report, "relay", "", T0)


def test_address_change_and_moving_a_player(store: SqlStore) -> None:
    game = GameRow(id="ac-1", game="alien-city", status="active", record={"moves": []},
                   seats=[Seat("black", "old@x.org"), Seat("white", "bo@x.org")], created_at=T0)
    with store.transaction() as tx:
        tx.insert_game(game)
        tx.add_address_change("Old@X.org", "New@X.org", "h1", T0, T0 + timedelta(days=1))
        tx.set_player("old@x.org", {"nickname": "Oldie"})
        tx.add_observer("ac-1", "old@x.org", T0)
        tx.add_observer("ac-1", "new@x.org", T0)  # already watching: one row stays
        tx.hold_for_digest("old@x.org", "ac-1", "a line", T0)
    with store.transaction() as tx:
        change = tx.address_change("h1")
        assert change is not None and (change.old_email, change.new_email, change.used_at) == (
            "old@x.org", "new@x.org", None)
        assert tx.address_change("nope") is None
        tx.use_address_change("h1", T0 + timedelta(minutes=5))
        with pytest.raises(LookupError):
            tx.use_address_change("h1", T0 + timedelta(minutes=6))  # used once only
        assert tx.get_player("old@x.org") == {"nickname": "Oldie"}  # read (and kept) in this tx
        tx.move_player("old@x.org", "new@x.org")
        assert tx.get_player("old@x.org") == {} and tx.get_player("new@x.org") == {"nickname": "Oldie"}
        assert tx.observers("ac-1") == ["new@x.org"]
        assert tx.digest_items("new@x.org")[0][1] == "a line" and tx.digest_items("old@x.org") == []
        used = tx.address_change("h1")
        assert used is not None and used.used_at == T0 + timedelta(minutes=5)


def test_results_are_written_with_the_game_and_searched(store: SqlStore) -> None:
    def game(game_id: str, result: dict | None, status: str = "over") -> GameRow:
        record = {"moves": [], **({"result": result} if result else {})}
        return GameRow(id=game_id, game="alien-city", status=status, record=record, created_at=T0,
                       seats=[Seat("black", "ann@x.org"), Seat("white", "bo@x.org")])

    with store.transaction() as tx:
        tx.insert_game(game("ac-1", {"reason": "scored", "winners": ["black"]}))
        tx.insert_game(game("ac-2", {"reason": "agreed draw", "winners": ["black", "white"]}))
        tx.insert_game(game("ac-3", {"reason": "abandoned by agreement", "winners": []}))
        tx.insert_game(game("ac-4", None, status="active"))

    def ids(**spec: str) -> list[str]:
        return sorted(g.id for g in store.search_games(**spec))  # type: ignore[arg-type]

    assert ids(winner="ANN@x.org") == ["ac-1"] and ids(loser="bo@x.org") == ["ac-1"]
    assert ids(result="draw") == ["ac-2"] and ids(result="abandoned") == ["ac-3"]
    assert ids(result="resigned") == []
    with pytest.raises(ValueError):
        store.search_games(result="lost")
    # a move that ends a game under its row lock: the seats' outcomes change with it
    with store.transaction() as tx:
        row = tx.get_game("ac-4", for_update=True)
        assert row is not None
        row.status, row.record["result"] = "over", {"reason": "resigned", "winners": ["white"]}
        tx.save_game(row)
        assert [g.id for g in tx.search_games(result="resigned", winner="bo@x.org")] == ["ac-4"]
    assert ids(loser="ann@x.org") == ["ac-4"]
