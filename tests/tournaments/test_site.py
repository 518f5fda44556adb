"""The archive site's page of a tournament, as headless Chromium shows it: the standings with
every entrant under the same pseudonym as on their games' pages (never an address), the rounds
with a link to every game's page, and the index listing the tournament. And the index's open
challenge, in one sentence with its real time control (the findings of the site's first users);
and the standings page, linked from the index and the tournament's page."""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

from pbem.archive.search import make_filters
from pbem.archive.site import write_site
from pbem.tournaments import site as tournament_pages
from tests.archive.test_site import dom
from tests.server.players import headline
from tests.tournaments.club import Club

PLAYERS = [f"player{i}@example.org" for i in range(4)]
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")
assert tournament_pages  # the tournaments' pages are part of the site


def test_tournament_page_in_chromium(tmp_path: Path) -> None:
    club = Club(tmp_path)
    try:
        club.moderate("tournament new alien-city round-robin starts 2026-12-10")
        for player in PLAYERS:
            club.send(player, "help")
            club.enter(player, "t-1")
        club.send(PLAYERS[0], "set nickname Stardust")
        club.reply(PLAYERS[0], club.last(PLAYERS[0]), "set nickname Stardust")
        club.tick(days=21)
        club.play(random.Random(11))
        answer = club.send(PLAYERS[1], "new alien-city open")
        assert headline(answer).startswith("Open challenge"), headline(answer)
        out = tmp_path / "site"
        write_site(club.store, out, make_filters(), default_days=club.config.deadlines.default_days)
        row = club.store.tournament_views().get("t-1")
    finally:
        club.close()
    page = (out / "tournaments" / "t-1.html").read_text()
    assert not ADDRESS.search(page) and not any(p.split("@")[0] in page for p in PLAYERS)
    root = dom(tmp_path, (out / "tournaments" / "t-1.html").as_uri())
    standings = root.find(tag="tr", cls="standing")
    assert len(standings) == 4
    names = [tr.find(tag="td")[1].all_text() for tr in standings]
    assert "Stardust" in names
    pseudonyms = [n for n in names if n != "Stardust"]
    assert len(set(pseudonyms)) == 3 and all(re.fullmatch(r"Player [A-Z2-9]{5}", n) for n in pseudonyms)
    assert next(tr.find(tag="td")[0].all_text() for tr in standings) == "1"
    assert root.find(tag="table", cls="crosstable")
    links = [a.attrs["href"] for li in root.find(tag="li", cls="pairing") for a in li.find(tag="a")]
    games = [g["id"] for r in row.doc["rounds"] for g in r["games"]]
    assert sorted(links) == sorted(f"../games/{g}.html" for g in games)
    for link in links:
        game_page = (out / "tournaments" / link).resolve()
        assert game_page.exists()
        shown = [li.all_text() for li in dom(tmp_path, game_page.as_uri()).find(tag="li", cls="player")]
        assert all(any(name in text for name in names) for text in shown), shown  # the same names
        break
    index = dom(tmp_path, (out / "index.html").as_uri())
    listed = index.find(tag="li", cls="tournament")
    assert [li.attrs["data-id"] for li in listed] == ["t-1"]
    assert listed[0].find(tag="a")[0].attrs["href"] == "tournaments/t-1.html"
    challenge = index.find(tag="li", cls="challenge")[0]
    text = " ".join(challenge.all_text().split())
    assert "7 days per move" in text and "?" not in text, text
    # the author's reliability beside their pseudonym too (it was shown for nicknames only)
    assert re.search(r"by Player [A-Z2-9]{5} \(black\) \(reliable 100 % of 3 games\); 7 days per move",
                     text), text
    assert not challenge.find(tag="ul"), "the author's name does not break the sentence"
    check_standings_page(tmp_path, out, index, names, row.doc)


def check_standings_page(tmp_path: Path, out: Path, index: Any, names: list[str], doc: dict) -> None:
    """The standings page, reached from the index and from the tournament's page: every player
    under the same public name (the pseudonyms too), their results, rating and reliability."""
    link = index.find(tag="p", cls="standings-link")[0].find(tag="a")[0].attrs["href"]
    assert link == "standings.html"
    from_tournament = dom(tmp_path, (out / "tournaments" / "t-1.html").as_uri())
    assert from_tournament.find(tag="a", cls="standings-link")[0].attrs["href"] == "../standings.html"
    page = (out / "standings.html").read_text()
    assert not ADDRESS.search(page) and not any(p.split("@")[0] in page for p in PLAYERS)
    root = dom(tmp_path, (out / "standings.html").as_uri())
    rated = root.find(tag="tr", cls="rated")
    cells = [[td.all_text() for td in tr.find(tag="td")] for tr in rated]
    assert sorted(c[1] for c in cells) == sorted(names), cells  # the names of the tournament's table
    assert [c[0] for c in cells] == ["1", "2", "3", "4"]
    ratings = [int(c[6]) for c in cells]
    assert ratings == sorted(ratings, reverse=True) and abs(sum(ratings) - 4 * 1500) <= 2
    games = [g for r in doc["rounds"] for g in r["games"] if g.get("id")]
    assert all(int(c[2]) == 3 for c in cells)  # everyone played everyone once
    assert sum(int(c[3]) for c in cells) == sum(int(c[4]) for c in cells)  # a win is a loss
    assert sum(int(c[3]) + int(c[5]) / 2 for c in cells) == len(games)
    assert all(c[7] == "100 %" for c in cells)  # nobody lost on time
    reliable = [[td.all_text() for td in tr.find(tag="td")] for tr in root.find(tag="tr", cls="reliability")]
    assert sorted(r[0] for r in reliable) == sorted(names)  # everyone, not only the nicknamed
    assert all(r[1] == "3" and r[2] == "0" and r[3] == "100 %" for r in reliable), reliable


def test_archive_export_keeps_the_tournament_with_its_games(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from tests.e2e.conftest import REPO

    club = Club(tmp_path)
    try:
        club.moderate("tournament new alien-city elimination starts 2026-12-10")
        for player in PLAYERS[:3]:
            club.send(player, "help")
            club.enter(player, "t-1")
        club.tick(days=21)
        club.play(random.Random(12))
    finally:
        club.close()
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n'
                      f'database = "{tmp_path / "pbem.sqlite3"}"\n')
    out = tmp_path / "export"
    done = subprocess.run([sys.executable, "-m", "pbem.cli", "archive", "export", "-c", str(config),
                           "-o", str(out), "--public"], capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)})
    assert done.returncode == 0, done.stderr
    assert "1 finished tournament(s)" in done.stdout
    data = json.loads((out / "tournaments" / "t-1.json").read_text())
    assert data["format"] == "pbem-tournament/1" and data["status"] == "over"
    games = [g["id"] for r in data["tournament"]["rounds"] for g in r["games"] if g.get("id")]
    assert games and all((out / f"{g}.json").is_file() for g in games)  # with its games
    assert not ADDRESS.search(json.dumps(data))  # public: names, never addresses
