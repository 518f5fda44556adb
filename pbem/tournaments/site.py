"""A page per tournament on the archive site (``pbem archive html``): its table (standings with
tie-breaks and a crosstable, the bracket, the ladder, the divisions), its rounds with a link to
every game's page, and a section of the index listing the tournaments. Players are named as
everywhere on the site (``pbem.archive.names``: nickname or pseudonym, never an address)."""

from __future__ import annotations

from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from engine import get_game
from pbem.archive import site
from pbem.archive.export import file_stem
from pbem.archive.names import PublicNames
from pbem.community import standings_page  # registers the standings page, which tournament pages link
from pbem.i18n import N_, _, status_word
from pbem.store.base import Store
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import elimination
from pbem.tournaments.names import format_name
from pbem.tournaments.table import SHORT, crosstable, fraction
from pbem.tournaments.tables import bracket_results, division_table, table_lines
from pbem.tournaments.texts import reliable_text

STATUS = {"open": N_("open for entry"), "running": N_("running"), "paused": N_("paused"), "over": N_("over"),
          "cancelled": N_("cancelled")}


def _standings(trow: TournamentRow, lines: list[Any], names: PublicNames, cross: bool) -> str:
    settings = d.settings_from_json(trow.doc["settings"])
    breaks = settings.tiebreaks or []
    head = "".join(f"<th>{escape(h)}</th>" for h in ["#", _("Player"), _("Pts"), _("Games"),
                                                      *(_(SHORT[b]) for b in breaks)])
    rows = []
    for line in lines:
        cells = [str(line.rank), escape(names.person(line.player)), fraction(line.points), str(line.played),
                 *(escape(fraction(line.values.get(b, 0)) if abs(line.values.get(b, 0) * 2 % 1) < 1e-9
                          else f"{line.values.get(b, 0):.2f}") for b in breaks)]
        rows.append('<tr class="standing">' + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    table = (f'<table class="games standings"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
             "</tbody></table>")
    if cross and lines:
        cells = crosstable([line.player for line in lines], d.games(trow.doc))
        body = []
        for i, line in enumerate(lines, start=1):
            tds = "".join(
                "<td>X</td>" if other.player == line.player else
                f"<td>{''.join(fraction(x) for x in cells.get((line.player, other.player), [])) or '.'}</td>"
                for other in lines)
            body.append(f"<tr><th>{i} {escape(names.person(line.player))}</th>{tds}</tr>")
        numbers = "".join(f"<th>{i}</th>" for i in range(1, len(lines) + 1))
        table += (f'<h2>{escape(_("Crosstable"))}</h2><table class="games crosstable"><thead><tr><th></th>'
                  f"{numbers}</tr></thead><tbody>{''.join(body)}</tbody></table>")
    return table


def _game_link(game_id: str | None) -> str:
    if not game_id:
        return "-"
    return f'<a href="../games/{escape(file_stem(game_id))}.html">{escape(game_id)}</a>'


def _rounds(trow: TournamentRow, rounds: list[dict[str, Any]], names: PublicNames) -> str:
    out = []
    for round_ in rounds:
        items = []
        for item in round_["games"]:
            who = " – ".join(escape(names.person(p)) for p in item["players"])
            if len(item["players"]) == 1:
                result = escape(_("bye"))
            elif item.get("points") is None:
                result = escape(_("playing"))
            else:
                result = " – ".join(fraction(x) for x in item["points"])
            items.append(f'<li class="pairing">{_game_link(item.get("id"))}: {who}: {result}</li>')
        out.append(f'<h3>{escape(_("Round {n}").format(n=round_["number"]))}</h3><ul>{"".join(items)}</ul>')
    return "".join(out)


def page(trow: TournamentRow, names: PublicNames) -> str:
    doc = trow.doc
    fmt = trow.format
    title = _("{id}: {game}, {format}").format(id=trow.id, game=get_game(trow.game).title,
                                             format=format_name(fmt))
    parts = [site.head(title), '<p><a href="../index.html">&larr; ' + escape(_("all games")) + "</a> · "
             f'<a class="standings-link" href="../{standings_page.PAGE}">' + escape(_("Standings"))
             + "</a></p>",
             f"<h1>{escape(title)}</h1>",
             '<p class="status">' + escape(_("Status: {status}.").format(status=status_word_of(trow)))
             + (" " + escape(_("Started {date}.").format(date=str(doc.get("started_at", ""))[:10]))
                if doc.get("started_at") else "") + "</p>"]
    required = d.settings_from_json(doc["settings"]).reliable
    if required:
        parts.append(f'<p class="reliable">{escape(reliable_text(required))}</p>')
    result = doc.get("result") or {}
    if result.get("ranking"):
        winner = result["ranking"][0][1]
        said = _("The winner: {player}.").format(player=names.person(winner))
        parts.append(f'<p class="winner">{escape(said)}</p>')
    if fmt == "ladder":
        items = "".join(f"<li>{escape(names.person(p))}</li>" for p in doc.get("ladder", []))
        parts.append(f'<h2>{escape(_("The ladder"))}</h2><ol class="ladder">{items}</ol>')
        challenges = [{"number": i + 1, "games": [c]} for i, c in enumerate(doc.get("challenges", []))]
        parts.append(f'<h2>{escape(_("Challenges"))}</h2>' + _rounds(trow, challenges, names))
    elif fmt.endswith("elimination") and doc.get("bracket"):
        bracket = elimination.bracket_from_json(doc["bracket"])
        outcomes = elimination.resolve(bracket, bracket_results(doc))
        items = []
        for match in sorted(bracket.matches, key=lambda m: m.order):
            done = outcomes[match.id]
            if done.players is None or (done.decided and not done.winner):
                continue
            a, b = (escape(names.person(p)) if p else escape(_("bye")) for p in done.players)
            games = ", ".join(_game_link(g) for g in (doc.get("matches",
                                                              {}).get(match.id) or {}).get("games", []))
            won = escape(names.person(done.winner)) if done.decided and done.winner else ""
            items.append(f'<tr class="match" data-match="{match.id}"><td>{match.id}</td><td>{a}</td>'
                         f"<td>{b}</td><td>{games}</td><td>{won}</td></tr>")
        parts.append(f'<h2>{escape(_("Bracket"))}</h2><table class="games bracket"><tbody>{"".join(items)}'
                     "</tbody></table>")
    elif fmt == "league" and doc.get("divisions"):
        for k in range(len(doc["divisions"])):
            heading = _("Season {season}, division {n}").format(season=doc.get("season", 1), n=k + 1)
            table = _standings(trow, division_table(doc, k), names, True)
            parts.append(f"<h2>{escape(heading)}</h2>{table}")
    elif trow.status != "open":
        pairs = d.settings_from_json(doc["settings"]).tables <= 2
        parts.append(f'<h2>{escape(_("Standings"))}</h2>'
                     + _standings(trow, table_lines(trow), names, fmt == "round-robin" and pairs))
    if doc.get("rounds") and fmt != "ladder":
        parts.append(f'<h2>{escape(_("Rounds"))}</h2>' + _rounds(trow, doc["rounds"], names))
    if trow.status == "open":
        parts.append("<p>" + escape(_("To enter, mail {command}.")).replace(
            "{command}", f"<code>enter {escape(trow.id)}</code>") + "</p>")
    parts.append("\n</body></html>\n")
    return "".join(parts)


def status_word_of(trow: TournamentRow) -> str:
    return _(STATUS[trow.status]) if trow.status in STATUS else status_word(trow.status)


def write_pages(store: Store, directory: Path, names: PublicNames, now: datetime) -> str:
    """Every tournament's page; the index's section listing them."""
    rows = store.tournament_views().list()
    if not rows:
        return ""
    folder = directory / "tournaments"
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for trow in sorted(rows, key=lambda r: (r.created_at, r.id), reverse=True):
        site.write(folder / f"{file_stem(trow.id)}.html", page(trow, names))
        items.append(f'<li class="tournament" data-id="{escape(trow.id)}"><a href="tournaments/'
                     f'{escape(file_stem(trow.id))}.html">{escape(trow.id)}</a>: '
                     f"{escape(get_game(trow.game).title)}, {escape(format_name(trow.format))} "
                     f"({escape(status_word_of(trow))})</li>")
    return f'<h2>{escape(_("Tournaments"))}</h2><ul class="tournaments">{"".join(items)}</ul>'


site.SITE_PAGES.append(write_pages)
