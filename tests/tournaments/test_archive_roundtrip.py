"""The archive round trip of tournaments: ``pbem archive export`` writes the finished tournaments
beside their games, ``pbem archive import`` into an empty server reads both back, and the new
server's site shows the same tournament pages and tables. The players' public names there are the
new server's (its own secret makes their pseudonyms; nicknames are settings, not archived), so the
pages are compared with each player's name put back to one mark per address. On both stores."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import pytest

from pbem.archive.names import PublicNames
from pbem.archive.search import make_filters
from pbem.archive.site import write_site
from pbem.store import open_store
from pbem.tournaments import site as tournament_pages
from tests.archive.conftest import Cli
from tests.store.conftest import Backend
from tests.tournaments.club import Club

PLAYERS = [f"trip{i}@example.org" for i in range(4)]
_databases = itertools.count(1)
assert tournament_pages  # the tournaments' pages are part of the site


def empty_server(request: pytest.FixtureRequest, backend: Backend, tmp_path: Path) -> str:
    if backend.kind == "sqlite":
        return str(tmp_path / "new-server.sqlite3")
    return request.getfixturevalue("postgres").create_database(f"trip_{next(_databases)}")


def marked(page: str, names: dict[str, str]) -> str:
    """The page with each player's public name replaced by a mark of their address."""
    for i, (_, name) in enumerate(sorted(names.items(), key=lambda item: -len(item[1]))):
        page = page.replace(name, f"[player {i}]")
    return page


def test_export_then_import_into_an_empty_server_shows_the_same_tournaments(
        request: pytest.FixtureRequest, backend: Backend, tmp_path: Path) -> None:
    (tmp_path / "old").mkdir()
    club = Club(tmp_path / "old", backend.target)
    try:
        club.moderate("tournament new alien-city round-robin starts 2026-12-10")
        club.moderate("tournament new alien-city swiss rounds 2 starts 2026-12-10")
        for player in PLAYERS:
            club.send(player, "help")
            club.enter(player, "t-1")
            club.enter(player, "t-2")
        club.tick(days=21)
        club.play(random.Random(5))
        assert [r.status for r in club.store.tournament_views().list()] == ["over", "over"]
        write_site(club.store, tmp_path / "old-site", make_filters(), now=club.clock.now())
        old_names = {p: PublicNames(club.store).person(p) for p in PLAYERS}
    finally:
        club.close()
    old_server = Cli(tmp_path / "old", backend.target)  # type: ignore[arg-type]
    code, out, err = old_server("archive", "export", "-o", str(tmp_path / "archive"))
    assert code == 0 and "2 finished tournament(s)" in out, (out, err)

    target = empty_server(request, backend, tmp_path)
    new = Cli(tmp_path, target)  # type: ignore[arg-type]
    code, out, err = new("archive", "import", str(tmp_path / "archive"))
    assert (code, err) == (0, ""), err
    assert out.strip().splitlines()[-1] == "tournaments: imported 2, skipped 0 already present, 0 bad", out
    code, out, _ = new("archive", "import", str(tmp_path / "archive"))
    assert code == 0 and "tournaments: imported 0, skipped 2 already present, 0 bad" in out

    store = open_store(target)
    try:
        write_site(store, tmp_path / "new-site", make_filters())
        new_names = {p: PublicNames(store).person(p) for p in PLAYERS}
        rows = {r.id: r for r in store.tournament_views().list()}
        assert {i: r.status for i, r in rows.items()} == {"t-1": "over", "t-2": "over"}
        assert {e for e, _, _ in rows["t-1"].entrants} == set(PLAYERS)  # who played in which
        assert [r.id for r in store.tournament_views().list(email=PLAYERS[0])] == ["t-1", "t-2"]
        # a tournament announced on the new server does not take an imported id
        with store.transaction() as tx:
            assert tx.tournaments.next_id() == "t-3"
    finally:
        store.close()
    for ident in ("t-1", "t-2"):
        old = (tmp_path / "old-site" / "tournaments" / f"{ident}.html").read_text()
        now = (tmp_path / "new-site" / "tournaments" / f"{ident}.html").read_text()
        assert "standing" in old and marked(now, new_names) == marked(old, old_names), ident
    assert "crosstable" in (tmp_path / "new-site" / "tournaments" / "t-1.html").read_text()
    for page in (tmp_path / "new-site" / "games").glob("*.html"):  # every game linked is there
        assert (tmp_path / "old-site" / "games" / page.name).exists()
    old_index = (tmp_path / "old-site" / "index.html").read_text()
    new_index = (tmp_path / "new-site" / "index.html").read_text()
    section = '<ul class="tournaments">'
    assert new_index.split(section)[1].split("</ul>")[0] == old_index.split(section)[1].split("</ul>")[0]


def test_a_tournament_file_that_cannot_be_imported_is_named_with_why(tmp_path: Path) -> None:
    folder = tmp_path / "archive" / "tournaments"
    folder.mkdir(parents=True)
    good = {"format": "pbem-tournament/1", "id": "t-4", "game": "alien-city", "kind": "swiss",
            "status": "over", "organizer": "mod@example.org", "created_at": "2026-11-20T10:00:00Z",
            "finished_at": "2026-12-20T10:00:00Z",
            "tournament": {"settings": {"format": "swiss", "rounds": 1, "tiebreaks": ["buchholz"]},
                           "entrants": [{"email": "a@example.org", "status": "entered"},
                                        {"email": "b@example.org", "status": "entered"}],
                           "rounds": [{"number": 1, "deadline_at": "2026-12-01T10:00:00Z",
                                       "games": [{"id": None, "players": ["a@example.org",
                                                                          "b@example.org"],
                                                  "points": [1.0, 0.0], "played": False}]}]}}
    (folder / "t-4.json").write_text(json.dumps(good))
    public = json.loads(json.dumps(good))
    public["id"] = "t-5"
    public["tournament"]["entrants"][0]["email"] = "Player K7QXM"
    (folder / "t-5.json").write_text(json.dumps(public))
    (folder / "t-6.json").write_text(json.dumps({**good, "id": "t-6", "kind": "marathon"}))
    (folder / "t-7.json").write_text("{not json")
    code, out, err = Cli(tmp_path, tmp_path / "new.sqlite3")("archive", "import", str(tmp_path / "archive"))
    assert code == 1
    assert "tournaments: imported 1, skipped 0 already present, 3 bad" in out
    assert "t-5.json: $.tournament.entrants: the players' addresses are missing (a file of 'pbem archive " \
           "export --public' names them publicly and cannot be imported; export without --public)" in err
    assert "t-6.json: $.kind: one of round-robin, swiss" in err and "not 'marathon'" in err
    assert "t-7.json: not JSON in UTF-8" in err and "Traceback" not in err
