"""Archive search by result and date: winner, loser, draw, resignation, forfeit, abandonment, on the
command line (``pbem archive search``), in the store (an older database filled in by migration 6;
both on SQLite and PostgreSQL) and on the archive site in headless Chromium, which also lists the
open challenges."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from pathlib import Path

import pytest

from pbem.archive.importer import row_from_record
from pbem.archive.sample import random_record
from pbem.archive.search import make_filters, search
from pbem.archive.site import write_site
from pbem.record import iso, replay_record
from pbem.store import migrations, open_store
from pbem.store.base import GameRow, Seat, Store
from pbem.store.common import json_dumps
from tests.archive.conftest import Cli, fill
from tests.archive.test_site import dom
from tests.store.conftest import Backend, backend  # noqa: F401  (backend: a fixture, both stores)

ANN, BO, CY = "ann@example.org", "bo@example.org", "cy@example.org"
# id -> (the players: black/white, the day it ended, its result as the server writes it)
ENDINGS = {
    "ac-1": ((ANN, BO), "2026-05-01", {"reason": "scored", "winners": ["black"]}),
    "ac-2": ((ANN, BO), "2026-05-02", {"reason": "agreed draw", "winners": ["black", "white"]}),
    "ac-3": ((BO, ANN), "2026-05-03", {"reason": "resigned", "resigned": "black", "winners": ["white"]}),
    "ac-4": ((ANN, CY), "2026-05-04", {"reason": "forfeit", "forfeited": "black", "winners": ["white"]}),
    "ac-5": ((CY, BO), "2026-05-05", {"reason": "abandoned by agreement", "winners": []}),
    "ac-6": ((CY, ANN), "2026-05-06", {"reason": "scored", "winners": ["black", "white"]}),
}


def finished_rows() -> list[GameRow]:
    rows = []
    for number, (game_id, (people, day, result)) in enumerate(ENDINGS.items()):
        record = random_record("alien-city", random.Random(number), game_id, list(people),
                               datetime.fromisoformat(day).replace(tzinfo=UTC), resign_chance=0)
        end = datetime.fromisoformat(day).replace(hour=20, tzinfo=UTC)
        record["result"] = {**result, "at": iso(end)}
        row = row_from_record(record, replay_record(record))
        row.finished_at = end
        rows.append(row)
    return rows


@pytest.fixture
def store(tmp_path: Path):
    opened = open_store(tmp_path / "source.sqlite3")
    fill(opened, finished_rows())
    yield opened
    opened.close()


def ids(store: Store, **spec: str) -> list[str]:
    return sorted(r.id for r in search(store, make_filters(**spec)))


@pytest.fixture
def any_store(backend: Backend):  # noqa: F811
    opened = backend.open()
    fill(opened, finished_rows())
    yield opened
    opened.close()


def test_search_by_result_in_the_store(any_store: Store) -> None:
    store = any_store
    assert ids(store, result="draw") == ["ac-2", "ac-6"]
    assert ids(store, result="resigned") == ["ac-3"]
    assert ids(store, result="forfeit") == ["ac-4"]
    assert ids(store, result="abandoned") == ["ac-5"]
    assert ids(store, winner=ANN) == ["ac-1", "ac-3"]
    assert ids(store, loser=ANN) == ["ac-4"]
    assert ids(store, winner=BO, result="draw") == []
    assert ids(store, player=BO, result="draw") == ["ac-2"]
    assert ids(store, winner=ANN, date_from="2026-05-02", date_to="2026-05-04") == ["ac-3"]
    # the same test in Python (the mail command's path) agrees with the store's query
    rows = list(store.list_games())
    for spec in ({"result": "draw"}, {"winner": ANN}, {"loser": CY}, {"result": "abandoned"}):
        filters = make_filters(**spec)
        assert sorted(r.id for r in rows if filters.matches(r)) == ids(store, **spec)


def test_search_by_result_on_the_command_line(tmp_path: Path, store: Store) -> None:
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    code, out, err = cli("archive", "search", "--result", "draw")
    assert (code, err) == (0, "")
    lines = [line.split()[0] for line in out.splitlines()[2::2]]
    assert lines == ["ac-6", "ac-2"]
    assert "agreed draw: black, white" in out
    code, out, _ = cli("archive", "search", "--winner", ANN, "--from", "2026-05-03", "--json")
    assert code == 0 and '"id": "ac-3"' in out and '"ac-1"' not in out
    code, out, _ = cli("archive", "search", "--result", "forfeit")
    assert "ac-4" in out and "black forfeited; white wins" in out
    code, out, _ = cli("archive", "search", "--result", "abandoned")
    assert "abandoned by agreement" in out
    code, _out, err = cli("archive", "search", "--winner", "ann")
    assert code == 2 and "--winner takes a mail address, not 'ann'" in err
    with pytest.raises(SystemExit) as refused:  # argparse: "invalid choice: 'lost' (choose from ...)"
        cli("archive", "search", "--result", "lost")
    assert refused.value.code == 2


def test_an_older_database_gets_its_results_filled_in(backend: Backend, monkeypatch) -> None:  # noqa: F811
    before = next(i for i, m in enumerate(migrations.MIGRATIONS) if m.name == "results and address changes")
    monkeypatch.setattr(migrations, "MIGRATIONS", migrations.MIGRATIONS[:before])
    open_store(backend.target).close()
    for row in finished_rows():
        backend.sql("INSERT INTO games (id, game, status, created_at, updated_at, finished_at, record)"
                    " VALUES (?, ?, 'over', ?, ?, ?, ?)",
                    row.id, row.game, iso(row.created_at), iso(row.finished_at), iso(row.finished_at),
                    json_dumps(row.record))
        for i, s in enumerate(row.seats):
            backend.sql("INSERT INTO seats (game_id, seat, position, email) VALUES (?, ?, ?, ?)",
                        row.id, s.seat, i, s.email)
    monkeypatch.undo()
    migrated = backend.open()
    try:
        assert ids(migrated, result="draw") == ["ac-2", "ac-6"]
        assert ids(migrated, winner=ANN) == ["ac-1", "ac-3"] and ids(migrated, loser=ANN) == ["ac-4"]
        assert ids(migrated, result="abandoned") == ["ac-5"]
    finally:
        migrated.close()


def test_search_and_open_challenges_on_the_site_in_chromium(tmp_path: Path, store: Store) -> None:
    challenge = GameRow(id="ac-9", game="alien-city", status="open", seats=[Seat("black", CY)],
                        record={"format": "pbem-record/1", "game": "alien-city", "setup": {}, "moves": [],
                                "players": {"black": {"name": "", "email": CY}},
                                "open": {"players": 2, "expires_at": "2026-06-01T00:00:00Z",
                                         "rating": [1400, 1700]},
                                "time_control": {"days_per_move": 3}},
                        created_at=datetime(2026, 5, 20, tzinfo=UTC))
    fill(store, [challenge])
    with store.transaction() as tx:  # the site names players by nickname only, and searches by it
        for address, nickname in ((ANN, "Ann"), (BO, "Bo"), (CY, "Cy")):
            tx.set_player(address, {"nickname": nickname})
    out = tmp_path / "site"
    report = write_site(store, out, make_filters())
    assert report.pages == 6  # the challenge is not a game page
    index = (out / "index.html").as_uri()

    def shown(query: str):
        root = dom(tmp_path, index + query)
        rows = root.find(tag="tr", cls="game")
        assert len(rows) == 6
        return root, sorted(r.attrs["data-id"] for r in rows if "hidden" not in r.attrs)

    root, draws = shown("?result=draw")
    assert draws == ["ac-2", "ac-6"]
    assert root.find(id="search-count")[0].all_text() == "2 of 6 games match."
    assert "hidden" not in root.find(id="search")[0].attrs  # the script showed the form
    challenges = root.find(tag="li", cls="challenge")
    assert [c.attrs["data-id"] for c in challenges] == ["ac-9"]
    assert "join ac-9" in challenges[0].all_text() and "ratings 1400 to 1700" in challenges[0].all_text()
    assert shown("?result=forfeit")[1] == ["ac-4"]
    assert shown("?winner=ann")[1] == ["ac-1", "ac-3"]
    assert shown("?loser=ann&from=2026-05-04")[1] == ["ac-4"]
    assert shown("?result=abandoned&from=2026-05-02&to=2026-05-05")[1] == ["ac-5"]
