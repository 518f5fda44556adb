"""Tournaments in both stores: written with their entrants in one transaction, read for update,
listed by status, player and game, found by the scheduler when due, and copied by ``pbem store
copy`` with everything else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from pbem.store.copy import copy_store
from pbem.store.tournaments import TournamentRow
from tests.store.conftest import Backend

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=UTC)


def made(store, **changes) -> TournamentRow:  # type: ignore[no-untyped-def]
    with store.transaction() as tx:
        ident = tx.tournaments.next_id()
        fields = {"game": "alien-city", "format": "swiss", "status": "open", "organizer": "mod@x.org",
                  "doc": {"entrants": [], "rounds": []}, "created_at": T0, "updated_at": T0,
                  "starts_at": T0 + timedelta(days=7), "due_at": T0 + timedelta(days=7),
                  "entrants": [("ann@x.org", "entered", T0)], **changes}
        row = TournamentRow(id=ident, **fields)
        tx.tournaments.insert(row)
    return row


def test_tournaments_are_kept_and_found(store, backend: Backend) -> None:  # type: ignore[no-untyped-def]
    first, second = made(store), made(store, game="space-truckin")
    assert (first.id, second.id) == ("t-1", "t-2")
    with store.transaction() as tx:
        row = tx.tournaments.get("t-1", for_update=True)
        row.status = "running"
        row.doc["rounds"].append({"number": 1, "games": []})
        row.entrants = [("ann@x.org", "withdrawn", T0), ("bo@x.org", "entered", T0 + timedelta(hours=1))]
        tx.tournaments.save(row)
        assert tx.tournaments.due(T0 + timedelta(days=8)) == ["t-1", "t-2"]
        assert tx.tournaments.running() == ["t-1"]
    views = store.tournament_views()
    again = views.get("t-1")
    assert again.status == "running" and again.doc["rounds"] == [{"number": 1, "games": []}]
    assert [(e, s) for e, s, _ in again.entrants] == [("ann@x.org", "withdrawn"), ("bo@x.org", "entered")]
    assert [r.id for r in views.list(email="bo@x.org")] == ["t-1"]
    assert [r.id for r in views.list(status="open")] == ["t-2"]
    assert [r.id for r in views.list(game="space-truckin")] == ["t-2"]
    with pytest.raises(ValueError), store.transaction() as tx:
        tx.tournaments.save(TournamentRow("t-1", "alien-city", "swiss", "nonsense", "m@x.org", {}))
    with pytest.raises(LookupError), store.transaction() as tx:
        tx.tournaments.save(TournamentRow("t-9", "alien-city", "swiss", "open", "m@x.org", {}))


def test_store_copy_takes_the_tournaments(store, tmp_path) -> None:  # type: ignore[no-untyped-def]
    from pbem.store import open_store

    made(store)
    target = open_store(tmp_path / "copy.sqlite3")
    try:
        report = copy_store(store, target)
        assert report.rows["tournaments"] == 1 and report.rows["tournament_entrants"] == 1
        copied = target.tournament_views().get("t-1")
        assert copied.doc == {"entrants": [], "rounds": []} and copied.entrants[0][0] == "ann@x.org"
        with target.transaction() as tx:
            assert tx.tournaments.next_id() == "t-2"  # the counter came along
    finally:
        target.close()
