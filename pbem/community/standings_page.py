"""The archive site's standings page (``standings.html``, linked from the index and from every
tournament page): for each game its players' ratings and results (``pbem.community.standings``, as
the ``standings`` mail shows them), then every player's reliability (``pbem.clocks.reliability``).

Everyone is on it, each under their public name (``pbem.archive.names``): their nickname, else
their stable pseudonym, the same as on their games' and tournaments' pages; never an address.
Computed from every finished game in the store, whatever the site's filters select, since a
rating depends on all of a player's games.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from html import escape
from pathlib import Path

from pbem.archive import site
from pbem.archive.names import PublicNames
from pbem.archive.search import iter_games, make_filters
from pbem.clocks import reliability
from pbem.community.standings import compute, title_of
from pbem.i18n import N_, _
from pbem.store.base import GameRow, Store

PAGE = "standings.html"


def _percent(line: reliability.Reliability | None) -> str:
    return f"{line.percent:.0f} %" if line is not None and line.finished else "-"


def page(store: Store, names: PublicNames) -> str:
    reliable: dict[str, reliability.Reliability] = {}

    def rows() -> Iterator[GameRow]:  # one pass: the reliability is counted as the ratings read
        for row in iter_games(store, make_filters()):
            reliability.add(reliable, row)
            yield row

    tables = compute(rows())
    heads = [escape(_(h)) for h in (N_("Player"), N_("Games"), N_("Won"), N_("Lost"), N_("Drawn"),
                                    N_("Rating"), N_("Reliable"))]
    parts = [site.head(_("Standings")),
             '<p><a href="index.html">&larr; ' + escape(_("all games")) + "</a></p>",
             f"<h1>{escape(_('Standings'))}</h1>",
             "<p>" + escape(_("Elo ratings (everyone starts at 1500), from every finished game; "
                              "'reliable': the share of a player's finished games not lost on time. "
                              "Players without a nickname appear under a pseudonym.")) + "</p>"]
    for name, lines in tables.items():
        body = "".join(
            f'<tr class="rated" data-game="{escape(name)}"><td>{rank}</td>'
            f"<td>{escape(names.person(s.player))}</td>"
            f'<td data-label="{heads[1]}">{s.games}</td><td data-label="{heads[2]}">{s.wins}</td>'
            f'<td data-label="{heads[3]}">{s.losses}</td><td data-label="{heads[4]}">{s.draws}</td>'
            f'<td data-label="{heads[5]}">{s.rating:.0f}</td>'
            f'<td data-label="{heads[6]}">{_percent(reliable.get(s.player))}</td></tr>'
            for rank, s in enumerate(lines, start=1))
        parts.append(f"<h2>{escape(title_of(name))}</h2>"
                     f'<table class="games standings" data-game="{escape(name)}"><thead><tr><th>#</th>'
                     + "".join(f"<th>{h}</th>" for h in heads)
                     + f"</tr></thead><tbody>{body}</tbody></table>")
    if not tables:
        parts.append("<p>" + escape(_("No finished games yet.")) + "</p>")
    parts.append(site.reliability_section({email: (names.person(email), line)
                                           for email, line in reliable.items()}))
    parts.append("\n</body></html>\n")
    return "".join(parts)


def write_page(store: Store, directory: Path, names: PublicNames, now: datetime) -> str:
    """``standings.html``; the index's link to it."""
    site.write(directory / PAGE, page(store, names))
    return (f'<h2>{escape(_("Standings"))}</h2><p class="standings-link"><a href="{PAGE}">'
            + escape(_("Ratings, results and reliability of every player")) + "</a></p>")


site.SITE_PAGES.append(write_page)
