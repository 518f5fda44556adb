"""The archive site in German and in Slovak, as headless Chromium shows it: the page's language,
its headings, the ply navigation its script writes and the search form's count are in the chosen
language, and none of the site's English is left (the engine's own words come with its catalogs)."""

from __future__ import annotations

import pytest

from pbem.archive.search import make_filters
from pbem.archive.site import write_site
from pbem.record import replay_record
from tests.archive.test_site import dom, site  # noqa: F401  (the fixture: two finished games)

WORDS = {
    "de": {"archive": "Spielarchiv", "moves": "Züge", "final": "Endwertung", "all": "alle Spiele",
           "label": "Zug {n} von {n}", "count": "2 von 2 Spielen passen.", "search": "Suche",
           "listed": "2 Spiele (alle Spiele), neueste zuerst."},
    "sk": {"archive": "Archív hier", "moves": "Ťahy", "final": "Konečné hodnotenie", "all": "všetky hry",
           "label": "Ťah {n} z {n}", "count": "Vyhovuje 2 z 2 hier.", "search": "Hľadať",
           "listed": "2 hry (všetky hry), najnovšie prvé."},
}
ENGLISH = ["Game archive", "Final scoring", "all games", "newest first", "Symbols", "previous",
           "The record (hidden information removed)", "games match", "Ply ", "Result:"]


@pytest.mark.parametrize("lang", ["de", "sk"])
def test_the_site_in_chromium_in_each_language(tmp_path, store, site, lang) -> None:  # noqa: F811
    _english, rows = site  # the same games, written in English by the fixture
    out = tmp_path / f"site-{lang}"
    assert write_site(store, out, make_filters(), language=lang).pages == 2
    words = WORDS[lang]

    index = dom(tmp_path, (out / "index.html").as_uri())
    assert index.find(tag="html")[0].attrs["lang"] == lang
    text = index.all_text()
    assert words["archive"] in text and words["listed"] in text and words["search"] in text
    assert index.find(id="search-count")[0].all_text() == words["count"]  # written by the script
    assert [h.all_text() for h in index.find(tag="th")][3] == {"de": "Ergebnis", "sk": "Výsledok"}[lang]

    final = replay_record(rows[0].record)
    page = dom(tmp_path, (out / "games/ac-7.html").as_uri())
    assert page.find(tag="html")[0].attrs["lang"] == lang
    assert page.find(id="ply-label")[0].all_text() == words["label"].format(n=final.ply)
    text = page.all_text()
    assert words["moves"] in text and words["final"] in text and words["all"] in text
    site_text = text.replace(page.find(tag="pre", cls="score")[0].all_text(), "")
    left = [phrase for phrase in ENGLISH if phrase in site_text]
    assert not left, f"English left on the {lang} page: {left}"
