"""The static site: written from the players' view, everything escaped, and what a browser shows
checked in headless Chromium (index lists the games; a game page shows the last ply's board with
every structure, the scores, and another ply when the page is opened on that ply's link)."""

from __future__ import annotations

import random
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html.parser import HTMLParser
from pathlib import Path

import pytest

from pbem.archive.importer import row_from_record
from pbem.archive.sample import random_record
from pbem.archive.search import make_filters
from pbem.archive.site import write_site
from pbem.community import standings_page
from pbem.record import positions, replay_record
from pbem.store.base import GameRow, Store
from tests.archive.conftest import Cli, fill
from tests.services.browser import Browser, chromium_path

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str | None]
    children: list[Node] = field(default_factory=list)
    text: str = ""

    def classes(self) -> set[str]:
        return set((self.attrs.get("class") or "").split())

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, *, tag: str | None = None, cls: str | None = None, id: str | None = None) -> list[Node]:
        return [n for n in self.walk() if (tag is None or n.tag == tag)
                and (cls is None or cls in n.classes()) and (id is None or n.attrs.get("id") == id)]

    def all_text(self) -> str:
        return self.text + "".join(child.all_text() for child in self.children)


class Tree(HTMLParser):
    """The DOM as Chromium serialised it, as nested Nodes (enough for these checks)."""

    def __init__(self, html: str):
        super().__init__(convert_charrefs=True)
        self.root = Node("#document", {})
        self.stack = [self.root]
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, dict(attrs))
        self.stack[-1].children.append(node)
        if tag not in VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.stack[-1].children.append(Node(tag, dict(attrs)))

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].children.append(Node("#text", {}, text=data))


def browse(tmp_path: Path, url: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [chromium_path(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'chromium-profile'}", *extra, url],
        capture_output=True, text=True, timeout=120, check=True)


def dom(tmp_path: Path, url: str) -> Node:
    return Tree(browse(tmp_path, url, "--dump-dom").stdout).root


# Black of ac-7 chose a nickname (with markup, to check the escaping); nobody else did.
NICKNAME = '<b>Stardust & "co"</b>'
AC_PLAYERS = ["annabel.q@example.org", "mallory.k@example.org"]
ST_PLAYERS = ["cyprian.x@example.org", "bortholomew@example.org", "dorothea.z@example.org"]
# What the site must never show: addresses, their local parts, names from the mail client.
PRIVATE = [*AC_PLAYERS, *ST_PLAYERS, *(e.split("@")[0] for e in AC_PLAYERS + ST_PLAYERS), "Quist"]
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")


@pytest.fixture
def site(tmp_path: Path, store: Store) -> tuple[Path, list[GameRow]]:
    ac = random_record("alien-city", random.Random(21), "ac-7", AC_PLAYERS,
                       datetime(2026, 5, 1, tzinfo=UTC), resign_chance=0)
    ac["players"]["black"]["name"] = "Annabel Quist"  # from her mail client: not for the public
    st = random_record("space-truckin", random.Random(22), "st-3", ST_PLAYERS,
                       datetime(2026, 5, 2, tzinfo=UTC), resign_chance=0)
    rows = [row_from_record(r, replay_record(r)) for r in (ac, st)]
    fill(store, rows)
    with store.transaction() as tx:
        tx.set_player(AC_PLAYERS[0], {"nickname": NICKNAME})
    out = tmp_path / "site"
    report = write_site(store, out, make_filters())
    assert report.pages == 2
    return out, rows


def test_site_files_never_show_hidden_information(site: tuple[Path, list[GameRow]]) -> None:
    out, rows = site
    assert standings_page.PAGE == "standings.html"  # imported: the site has its standings page
    pile = rows[1].record["setup"]["pile"]
    files = sorted(p for p in out.rglob("*") if p.is_file())
    assert [p.relative_to(out).as_posix() for p in files] == [
        "games/ac-7.html", "games/ac-7.json", "games/st-3.html", "games/st-3.json", "index.html",
        "standings.html"]  # nothing on the standings page either
    for path in files:
        text = path.read_text()
        assert '"pile"' not in text
        assert ", ".join(f'"{t}"' for t in pile[40:43]) not in text
        if path.suffix == ".html":
            assert "<b>Stardust" not in text  # escaped everywhere
        # nicknames or seats, never an address, nor its local part, nor the mail client's name
        assert not ADDRESS.search(text), (path, ADDRESS.search(text))
        assert not [p for p in PRIVATE if p.lower() in text.lower()], path
        assert path.stat().st_mode & 0o044 == 0o044  # readable by a web server
    page = (out / "games/ac-7.html").read_text()
    assert "&lt;b&gt;Stardust &amp; &quot;co&quot;&lt;/b&gt; (black)" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # no CDN, no network
    final = replay_record(rows[0].record)
    assert page.count('<figure class="ply') == final.ply + 1


def test_index_in_chromium(tmp_path: Path, site: tuple[Path, list[GameRow]]) -> None:
    out, _rows = site
    root = dom(tmp_path, (out / "index.html").as_uri())
    listed = root.find(tag="tr", cls="game")
    assert [r.attrs["data-id"] for r in listed] == ["st-3", "ac-7"]  # newest first
    links = [a.attrs["href"] for r in listed for a in r.find(tag="a")]
    assert links == ["games/st-3.html", "games/ac-7.html"]
    text = root.all_text()
    assert NICKNAME in text and not root.find(tag="b")
    assert "Space Truckin'" in text and "Alien City" in text
    # one line per player, and no stray comma between them (they used to start with ", ")
    players = {r.attrs["data-id"]: [li.all_text() for li in r.find(tag="li", cls="player")] for r in listed}
    # without a nickname a stable pseudonym, so a reader can follow a player from game to game
    assert players["ac-7"][0] == f"{NICKNAME} (black)"
    assert re.fullmatch(r"Player [A-Z2-9]{5} \(white\)", players["ac-7"][1]), players
    assert [re.sub(r"Player [A-Z2-9]{5} ", "", p) for p in players["st-3"]] == ["(red)", "(blue)", "(green)"]
    assert not [r for r in listed if "," in r.find(tag="ul", cls="players")[0].all_text()]


def test_game_page_in_chromium(tmp_path: Path, site: tuple[Path, list[GameRow]]) -> None:
    out, rows = site
    record = rows[0].record
    states = list(positions(record))
    final = states[-1]
    url = (out / "games/ac-7.html").as_uri()
    root = dom(tmp_path, url)
    figures = root.find(tag="figure", cls="ply")
    assert len(figures) == final.ply + 1
    shown = [f for f in figures if "hidden" not in f.attrs]
    assert [f.attrs["id"] for f in shown] == [f"ply-{final.ply}"]
    structures = shown[0].find(cls="structure")
    assert len(structures) == len(final.structures()) > 0
    assert {s.attrs["data-lot"] for s in structures} == set(final.structures())
    claimed = [lot for lot, s in final.structures().items() if s.claimed_by]
    assert len(shown[0].find(cls="cap")) == len(claimed)
    assert root.find(id="ply-label")[0].all_text() == f"Ply {final.ply} of {final.ply}"
    assert "hidden" not in root.find(id="ply-nav")[0].attrs  # the script ran
    assert root.find(tag="pre", cls="score")[0].all_text() == final.score().text
    assert "Final scoring" in root.all_text()

    # Following the link to ply 3 (what "previous" and the moves list do) shows that ply.
    root = dom(tmp_path, url + "#ply-3")
    shown = [f for f in root.find(tag="figure", cls="ply") if "hidden" not in f.attrs]
    assert [f.attrs["id"] for f in shown] == ["ply-3"]
    assert len(shown[0].find(cls="structure")) == len(states[3].structures()) == 3
    assert root.find(id="ply-label")[0].all_text() == f"Ply 3 of {final.ply}"
    assert root.find(id="ply-slider")[0].attrs.get("max") == str(final.ply)

    shot = tmp_path / "ac-7.png"
    browse(tmp_path, url, f"--screenshot={shot}", "--window-size=900,1200")
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_space_truckin_page_in_chromium(tmp_path: Path, site: tuple[Path, list[GameRow]]) -> None:
    out, rows = site
    final = replay_record(rows[1].record)
    root = dom(tmp_path, (out / "games/st-3.html").as_uri())
    shown = [f for f in root.find(tag="figure", cls="ply") if "hidden" not in f.attrs]
    assert [f.attrs["id"] for f in shown] == [f"ply-{final.ply}"]
    placed = [c for c in range(81) if final.tile_at(c) is not None]
    assert len(shown[0].find(cls="tile")) == len(placed)
    ships = sum(1 for c in placed for s in range(4) if final.ship_at(c, s))
    assert len(shown[0].find(cls="ship")) == ships > 0
    assert root.find(tag="pre", cls="score")[0].all_text() == final.score().text


def test_cli_html(tmp_path: Path, site: tuple[Path, list[GameRow]]) -> None:
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    code, out, err = cli("archive", "html", str(tmp_path / "only-ac"), "--game", "alien-city")
    assert (code, err) == (0, "")
    assert "wrote 1 game page(s)" in out
    assert (tmp_path / "only-ac/games/ac-7.html").is_file()
    assert not (tmp_path / "only-ac/games/st-3.html").exists()


def test_a_damaged_record_gets_no_page_but_the_others_do(tmp_path: Path, store: Store,
                                                         site: tuple[Path, list[GameRow]]) -> None:
    with store.transaction() as tx:
        broken = tx.get_game("ac-7")
        assert broken is not None
        broken.record["moves"][2]["move"] = "tower purple Z99"
        tx.save_game(broken)
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    code, stdout, err = cli("archive", "html", str(tmp_path / "again"))
    assert code == 1 and "no page for ac-7: ReplayError" in err
    assert "wrote 1 game page(s)" in stdout and (tmp_path / "again/games/st-3.html").is_file()
    assert "ac-7" not in (tmp_path / "again/index.html").read_text()


def test_game_page_shows_moderator_actions_at_their_ply(site: tuple[Path, list[GameRow]]) -> None:
    from dataclasses import replace

    from pbem.archive.site import game_page

    _directory, rows = site
    row = next(r for r in rows if r.game == "alien-city")
    record = dict(row.record)
    moves = [e for e in record["moves"] if "move" in e]
    record["actions"] = [{"action": "pause", "by": "referee@example.org", "at": "2026-11-20T10:00:00Z",
                          "why": "a <holiday> break", "ply": 2, "entries": 2}]
    assert len(moves) > 2
    page = game_page(replace(row, record=record))
    figure = page[page.index('id="ply-2"'):page.index('id="ply-3"')]
    # the moderator's address is not for the public
    assert "by (address hidden): a &lt;holiday&gt; break" in figure and "referee" not in page
    assert "holiday" not in page[:page.index('id="ply-2"')]


# --- on a phone ------------------------------------------------------------------------------------

def moved_at(record: dict, ply: int) -> tuple[str, set[str]]:
    """The move of ``ply`` and where it is on the board: Alien City's lot built on, or the
    cells a Space Truckin' move names."""
    text = [e for e in record["moves"] if "move" in e][ply - 1]["move"]
    if record["game"] == "alien-city":
        return text, {text.split()[2]}
    return text, set(re.findall(r"\b[A-I][1-9]\b", text))


# The board shown, where its last-move frames are and what lot or cell each frames.
SHOWN = """(() => {
  const fig = [...document.querySelectorAll('#boards .ply')].find(f => !f.hidden);
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const board = fig.querySelector('svg.board');
  return {id: fig.id, board: box(board),
          marks: [...fig.querySelectorAll('.last-move')].map(e => {
            const where = e.dataset.lot || e.dataset.cell;
            const under = fig.querySelector(
              `.structure[data-lot="${where}"], .tile[data-cell="${where}"]`);
            return {where, box: box(e), under: under ? box(under) : null};
          }),
          legend: [...document.querySelectorAll('section.legend ul.legend li')].map(
            li => [li.querySelectorAll('svg').length, li.textContent.trim()])};
})()"""


def test_pages_at_360_px_wide(tmp_path: Path, site: tuple[Path, list[GameRow]]) -> None:
    """A phone's width: no sideways scrolling, the board scaled to fit, the legend, and the last
    move framed on the right lot or cell. Screenshots are kept under the test's tmp directory."""
    out, rows = site
    shots = []
    with Browser(tmp_path / "cdp-profile") as browser:
        browser.open((out / "index.html").as_uri())
        assert browser.evaluate("[innerWidth, document.documentElement.scrollWidth]") == [360, 360]
        shots.append(browser.screenshot(tmp_path / "360px-index.png"))
        for row in rows:
            ply = 5
            move, where = moved_at(row.record, ply)
            while not where:  # a pass frames nothing: take the next move that does
                ply += 1
                move, where = moved_at(row.record, ply)
            browser.open((out / f"games/{row.id}.html").as_uri() + f"#ply-{ply}")
            width, scroll = browser.evaluate("[innerWidth, document.documentElement.scrollWidth]")
            assert (width, scroll) == (360, 360), row.id
            shown = browser.evaluate(SHOWN)
            assert shown["id"] == f"ply-{ply}"
            left, _top, right, _bottom = shown["board"]
            assert left >= 0 and 300 < right - left <= 360  # scaled down to the width, not cut
            assert {m["where"] for m in shown["marks"]} == where, (row.id, move)
            for mark in shown["marks"]:  # the frame is drawn over that lot or cell
                x0, y0, x1, y1 = mark["under"]
                cx, cy = (mark["box"][0] + mark["box"][2]) / 2, (mark["box"][1] + mark["box"][3]) / 2
                assert x0 <= cx <= x1 and y0 <= cy <= y1, (row.id, move, mark)
            assert len(shown["legend"]) >= 6 and all(n == 1 and text for n, text in shown["legend"])
            assert any("last" in text for _, text in shown["legend"])
            names = browser.evaluate(
                "[...document.querySelectorAll('ul.players li')].map(li => li.textContent)")
            assert [re.sub(r"^Player [A-Z2-9]{5} ", "", n) for n in names] == (
                [f"{NICKNAME} (black)", "(white)"] if row.game == "alien-city" else ["(red)", "(blue)",
                                                                                     "(green)"])
            page = browser.evaluate("document.documentElement.outerHTML")
            assert not ADDRESS.search(page) and not [p for p in PRIVATE if p.lower() in page.lower()]
            shots.append(browser.screenshot(tmp_path / f"360px-{row.id}.png"))
    for shot in shots:
        png = shot.read_bytes()
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(png[16:20], "big") == 360
        print(f"screenshot at 360 px: {shot}")
