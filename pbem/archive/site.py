"""``pbem archive html``: a static site of archived games, one page per game with every ply drawn.

The site is public, so everything on it comes from the players' view of a record (``player_view``:
the Space Truckin' draw pile never leaves the server) and every piece of text is escaped. It needs
no server and no network: plain files, inline CSS, and a few lines of inline JavaScript for the ply
slider. Without JavaScript the previous/next links still work, through ``:target`` in the CSS.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from engine import EngineError, get_game
from pbem.archive import svg
from pbem.archive.export import archive_text, file_stem, write_atomic
from pbem.archive.names import PublicNames, public_name, public_record, seat_label
from pbem.archive.progress import Progress
from pbem.archive.search import Filters, game_date, iter_games, players_of, result_text
from pbem.clocks import reliability
from pbem.clocks.control import kind_text, normalize
from pbem.clocks.privacy import others_view
from pbem.config import DeadlineConfig
from pbem.i18n import N_, _, language, ngettext, speaking, status_word
from pbem.record import describe_action, iso, player_view, positions_with_actions
from pbem.store.base import RESULT_FILTERS, GameRow, Store
from pbem.store.common import result_columns

_STYLE = """
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:60em;padding:0 1em;color:#222;
  overflow-wrap:anywhere}
table.games{border-collapse:collapse;width:100%}
table.games th,table.games td{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left;
  vertical-align:top}
nav.plies{margin:.5em 0;display:flex;flex-wrap:wrap;gap:.5em;align-items:center}
nav.plies input{flex:1;min-width:8em}
figure{margin:0}
.ply figcaption{margin:.3em 0}
svg.board{display:block;max-width:100%;height:auto}
body:not(.js) .ply{display:none}
body:not(.js) .ply:target{display:block}
body:not(.js) #boards:not(:has(.ply:target)) .ply.last{display:block}
.ply[hidden]{display:none}
table.games td.date{white-space:nowrap}
ul.players{list-style:none;padding:0;margin:.5em 0}
ul.players li{display:inline}
ul.players li+li::before{content:" \\b7  "}
table.games ul.players{margin:0}
table.games ul.players li{display:block}
table.games ul.players li+li::before{content:none}
ul.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.3em 1.5em}
ul.legend li{display:flex;align-items:center;gap:.4em}
ol.moves{columns:22em}
ol.moves time{color:#777;font-size:.85em}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto}
@media (max-width:40em){
  table.games thead{display:none}
  table.games,table.games tbody,table.games tr,table.games td{display:block}
  table.games tr{border-bottom:1px solid #ddd;padding:.4em 0}
  table.games td{border:0;padding:.1em 0}
  table.games td[data-label]::before{content:attr(data-label) ": ";color:#666}
}
"""

_SCRIPT = """
(function () {
  var figs = Array.prototype.slice.call(document.querySelectorAll('#boards .ply'));
  if (!figs.length) { return; }
  document.body.classList.add('js');
  var nav = document.getElementById('ply-nav');
  var slider = document.getElementById('ply-slider');
  var label = document.getElementById('ply-label');
  var prev = document.getElementById('ply-prev');
  var next = document.getElementById('ply-next');
  var last = figs.length - 1;
  var current = last;
  nav.hidden = false;
  function show(n, remember) {
    n = Math.max(0, Math.min(last, n));
    current = n;
    figs.forEach(function (fig, i) { fig.hidden = i !== n; });
    slider.value = String(n);
    label.textContent = label.dataset.template.replace('{n}', n).replace('{last}', last);
    prev.disabled = n === 0;
    next.disabled = n === last;
    if (remember) {
      try { history.replaceState(null, '', '#ply-' + n); } catch (e) { /* some file: URLs refuse */ }
    }
  }
  function fromHash() {
    var m = /^#ply-(\\d+)$/.exec(window.location.hash);
    return m ? parseInt(m[1], 10) : last;
  }
  slider.addEventListener('input', function () { show(parseInt(slider.value, 10), true); });
  prev.addEventListener('click', function () { show(current - 1, true); });
  next.addEventListener('click', function () { show(current + 1, true); });
  document.addEventListener('keydown', function (e) {
    if (e.target === slider) { return; }
    if (e.key === 'ArrowLeft') { show(current - 1, true); }
    if (e.key === 'ArrowRight') { show(current + 1, true); }
  });
  window.addEventListener('hashchange', function () { show(fromHash(), false); });
  show(fromHash(), false);
})();
"""


@dataclass
class SiteReport:
    pages: int
    index: Path
    failed: list[tuple[str, str]] = field(default_factory=list)  # (game id, why it has no page)


def _write(path: Path, text: str) -> None:
    """Atomic like the record files, and readable by a web server (mkstemp makes files 0600)."""
    write_atomic(path, text, mode=0o644)


def _head(title: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="{language()}"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n<body>\n")


def _players_html(row: GameRow, names: Mapping[str, str]) -> str:
    """The seats and their public names: nicknames, never an address (``pbem.archive.names``)."""
    items = [f'<li class="player" data-seat="{escape(seat)}">'
             f"{escape(seat_label(seat, names.get(seat) or public_name(seat, None)))}</li>"
             for seat in players_of(row)]
    return '<ul class="players">' + "".join(items) + "</ul>"


def _day(row: GameRow) -> str:
    when = game_date(row)
    return when.strftime("%Y-%m-%d") if when else ""


def _ply(n: int) -> str:
    return escape(_("ply {n}").format(n=n))


def game_page(row: GameRow, names: Mapping[str, str] | None = None) -> str:
    """One game: header, boards at every ply with navigation, a legend of the symbols, moves, final
    scoring. ``names`` are the seats' public names (``PublicNames.of``; seat names without it)."""
    game = get_game(row.game)
    names = dict(names or {})
    by_address = {email.lower(): names.get(seat) or public_name(seat, None)
                  for seat, email in players_of(row).items() if email}
    view = public_record(others_view(player_view(row.record, game)), by_address)
    prefix = f"{file_stem(row.id)}-"
    title = f"{row.id}: {game.title}"
    figures: list[str] = []
    scores = _("Scores: {scores}")
    state: Any = None
    for state, actions in positions_with_actions(view, game):
        ply = state.ply
        caption = (_("Ply {n}: {move}").format(n=ply, move=state.last_move) if state.last_move
                   else _("Ply {n}: the start").format(n=ply))
        totals = ", ".join(f"{seat} {points}" for seat, points in state.score().totals.items())
        info = state.replay_info()
        extra = ""
        if info.get("tile") and not state.is_over:
            extra = " " + _("Drawn next: {tile} (clock quadrant {quadrant}).").format(
                tile=info["tile"], quadrant=info.get("quadrant"))
        links = []
        if ply > 0:
            links.append(f'<a class="prev" href="#ply-{ply - 1}">&larr; {_ply(ply - 1)}</a>')
        links.append(f'<a class="next" href="#ply-{ply + 1}">{_ply(ply + 1)} &rarr;</a>')
        # moderators' and players' actions (rollback, pause, undo, ...) taken at this position
        noted = "".join(f'<p class="action">{escape(describe_action(action, game))}</p>'
                        for action in actions)
        figures.append(
            f'<figure class="ply" id="ply-{ply}" data-ply="{ply}">'
            f"<figcaption>{escape(caption)}. {escape(scores.format(scores=totals))}."
            f"{escape(extra)} "
            f"{' '.join(links)}</figcaption>{noted}"
            + svg.board(state, prefix, _("{id} after ply {n}").format(id=row.id, n=ply)) + "</figure>")
    if state is None:
        raise ValueError(f"{row.id}: the record has no position")
    figures[-1] = figures[-1].replace('class="ply"', 'class="ply last"', 1)
    # the last figure's "next" link leads nowhere
    last_next = f'<a class="next" href="#ply-{state.ply + 1}">{_ply(state.ply + 1)} &rarr;</a>'
    figures[-1] = figures[-1].replace(last_next, "", 1)
    moves = []
    number = 0
    for entry in view["moves"]:
        if "move" not in entry:
            continue
        number += 1
        at = str(entry.get("at") or "")
        when = f' <time datetime="{escape(at)}">{escape(at[:16].replace("T", " "))}</time>' if at else ""
        moves.append(f'<li><a href="#ply-{number}">{escape(str(entry.get("seat", "")))}: '
                     f'{escape(str(entry["move"]))}</a>{when}</li>')
    score = state.score()
    word = {key: escape(text) for key, text in (
        ("all", _("all games")), ("previous", _("previous")), ("next", _("next")),
        ("label", _("Ply {n} of {last}")), ("symbols", _("Symbols")), ("moves", _("Moves")))}
    heading = (_("Final scoring") if state.is_over
               else _("Scoring at the end of the record (ply {n})").format(n=state.ply))
    last = state.ply
    return "".join([
        _head(title),
        f'<p><a href="../index.html">&larr; {word["all"]}</a></p>',
        f"<h1>{escape(title)}</h1>",
        _players_html(row, names),
        '<p class="result">' + escape(_("Result: {result}. Status: {status}. Date: {date}.").format(
            result=result_text(view, row.status), status=status_word(row.status), date=_day(row))) + "</p>",
        svg.defs(state, prefix),
        '<nav class="plies" id="ply-nav" hidden>'
        f'<button type="button" id="ply-prev">&larr; {word["previous"]}</button>'
        f'<input type="range" id="ply-slider" min="0" max="{last}" value="{last}" aria-label="ply">'
        f'<button type="button" id="ply-next">{word["next"]} &rarr;</button>'
        f'<span id="ply-label" data-template="{word["label"]}">'
        f'{word["label"].format(n=last, last=last)}</span></nav>',
        '<div id="boards">', "\n".join(figures), "</div>",
        f'<section class="legend"><h2>{word["symbols"]}</h2>{game.renderer.svg_legend(state, prefix)}'
        "</section>",
        f"<h2>{word['moves']}</h2><ol class=\"moves\">{''.join(moves)}</ol>",
        f'<h2>{escape(heading)}</h2><pre class="score">{escape(score.text)}</pre>',
        "<p>" + escape(_("The record (hidden information removed):")) +
        f' <a href="{escape(file_stem(row.id))}.json">{escape(file_stem(row.id))}.json</a>; '
        + _("<code>pbem replay</code> shows every position.") + "</p>",
        f"<script>{_SCRIPT}</script>\n</body></html>\n",
    ])


def index_page(rows: list[GameRow], filters: Filters, now: datetime,
               names: Mapping[str, Mapping[str, str]] | None = None,
               challenges: list[GameRow] | None = None,
               reliable: Mapping[str, tuple[str, reliability.Reliability]] | None = None,
               default_days: float = 7, extra: str = "") -> str:
    """The list of games; ``names`` maps a game id to its seats' public names."""
    body = []
    heads = [escape(_(h)) for h in (N_("Game"), N_("Kind"), N_("Players"), N_("Result"), N_("Date"),
                                    N_("Moves"))]
    for row in rows:
        stem = escape(file_stem(row.id))
        plies = sum(1 for e in row.record.get("moves", []) if "move" in e)
        body.append(
            f'<tr class="game" data-id="{escape(row.id)}"{result_attributes(row)}>'
            f'<td><a href="games/{stem}.html">{escape(row.id)}'
            f"</a></td><td>{escape(get_game(row.game).title)}</td>"
            f"<td>{_players_html(row, (names or {}).get(row.id, {}))}</td>"
            f'<td data-label="{heads[3]}">{escape(result_text(row.record, row.status))}</td>'
            f'<td class="date" data-label="{heads[4]}">{escape(_day(row))}</td>'
            f'<td data-label="{heads[5]}">{plies}</td></tr>')
    table = ('<table class="games"><thead><tr>' + "".join(f"<th>{h}</th>" for h in heads)
             + "</tr></thead><tbody>" + "\n".join(body) + "</tbody></table>"
             if body else "<p>" + escape(_("No games.")) + "</p>")
    return "".join([
        _head(_("Game archive")),
        "<h1>" + escape(_("Game archive")) + "</h1>",
        "<p>" + escape(ngettext("{n} game ({which}), newest first. Made {when}.",
                                "{n} games ({which}), newest first. Made {when}.", len(rows)).format(
            n=len(rows), which=filters.describe(), when=iso(now))) + "</p>",
        search_form() if body else "",
        table,
        challenges_section(challenges or [], names or {}, reliable or {}, default_days),
        extra,
        f"<script>{_SEARCH_SCRIPT}</script>" if body else "",
        "\n</body></html>\n",
    ])


# --- search by result and date, and open challenges (the issue "classic commands") ------------------

_ENDINGS = {ending: name for name, ending in RESULT_FILTERS.items() if ending}

_SEARCH_SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll('tr.game'));
  var form = document.getElementById('search');
  var count = document.getElementById('search-count');
  if (!form || !rows.length) { return; }
  form.hidden = false;
  var keys = ['result', 'winner', 'loser', 'from', 'to'];
  var params = new URLSearchParams(window.location.search);
  keys.forEach(function (k) { if (params.has(k)) { form.elements[k].value = params.get(k); } });
  function names(row, seats) {
    return (seats || '').split(' ').filter(Boolean).map(function (seat) {
      var el = row.querySelector('.player[data-seat="' + seat + '"]');
      return el ? el.textContent.toLowerCase() : '';
    });
  }
  function has(list, text) { return list.some(function (n) { return n.indexOf(text) >= 0; }); }
  function apply() {
    var v = {};
    keys.forEach(function (k) { v[k] = form.elements[k].value.trim().toLowerCase(); });
    var shown = 0;
    rows.forEach(function (row) {
      var d = row.dataset;
      var ok = !v.result || (v.result === 'draw' ? d.outcome === 'draw' : d.ending === v.result);
      ok = ok && (!v.winner || has(names(row, d.winners), v.winner));
      ok = ok && (!v.loser || has(names(row, d.losers), v.loser));
      ok = ok && (!v.from || d.date >= v.from) && (!v.to || d.date <= v.to);
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    count.textContent = count.dataset.template.replace('{shown}', shown).replace('{total}', rows.length);
  }
  form.addEventListener('input', apply);
  form.addEventListener('change', apply);
  apply();
})();
"""


def result_attributes(row: GameRow) -> str:
    """What the search form filters on: how the game ended, who won and lost (by seat: the page
    names the players), and its date."""
    ending, outcomes = result_columns(row.status, row.record, [s.seat for s in row.seats])
    values = set(outcomes.values())
    outcome = "draw" if values == {"draw"} else "decisive" if values else "none"
    winners = " ".join(seat for seat, o in outcomes.items() if o == "win")
    losers = " ".join(seat for seat, o in outcomes.items() if o == "loss")
    return (f' data-ending="{escape(_ENDINGS.get(ending or "", ending or ""))}" data-outcome="{outcome}"'
            f' data-winners="{escape(winners)}" data-losers="{escape(losers)}" data-date="{_day(row)}"')


def search_form() -> str:
    """Shown by the script (a static site has no server to ask): a GET form, so a search is a link."""
    choices = "".join(f'<option value="{name}">{name}</option>' for name in RESULT_FILTERS)
    word = {key: escape(text) for key, text in (
        ("search", _("Search")), ("result", _("Result")), ("any", _("any")), ("winner", _("Winner")),
        ("loser", _("Loser")), ("from", _("From")), ("to", _("To")),
        ("count", _("{shown} of {total} games match.")))}
    return (f'<form id="search" method="get" hidden><fieldset><legend>{word["search"]}</legend>'
            f'<label>{word["result"]} <select name="result"><option value="">{word["any"]}</option>'
            + choices + "</select></label> "
            f'<label>{word["winner"]} <input name="winner" type="search" size="14"></label> '
            f'<label>{word["loser"]} <input name="loser" type="search" size="14"></label> '
            f'<label>{word["from"]} <input name="from" type="date"></label> '
            f'<label>{word["to"]} <input name="to" type="date"></label> '
            f'<button type="submit">{word["search"]}</button> '
            f'<output id="search-count" data-template="{word["count"]}"></output>'
            "</fieldset></form>")


def challenges_section(rows: list[GameRow], names: Mapping[str, Mapping[str, str]],
                       reliable: Mapping[str, tuple[str, reliability.Reliability]] | None = None,
                       default_days: float = 7) -> str:
    """Open challenges anyone may join by mail (``join GAME``); the author by public name only,
    with their reliability, in one sentence, with the time control the challenge has (the
    server's default when it set none)."""
    if not rows:
        return ""
    items = []
    for row in rows:
        info = row.record.get("open") or {}
        rating = info.get("rating")
        count = int(info.get("players", 2))
        seats = names.get(row.id, {})
        author = next((seat_label(s, seats.get(s) or public_name(s, None)) for s, e in players_of(row).items()
                       if e == info.get("by")), "")
        known = (reliable or {}).get(str(info.get("by", "")))
        if known and known[1].finished:
            author += f" ({reliability.short_text(known[1])})"
        control = kind_text(normalize(row.record.get("time_control"),
                                      DeadlineConfig(default_days=default_days)))
        text = _("{id}: {game} for {n} players, by {author}; {control}").format(
            id=row.id, game=get_game(row.game).title, n=count, author=author, control=control)
        if rating:
            text += "; " + _("ratings {low} to {high}").format(low=int(rating[0]), high=int(rating[1]))
        if info.get("reliable"):
            text += "; " + _("reliable {n} %").format(n=int(info["reliable"]))
        text += "; " + _("expires {date}.").format(date=str(info.get("expires_at", ""))[:10])
        items.append(f'<li class="challenge" data-id="{escape(row.id)}">{escape(text)} '
                     + escape(_("To play, mail {command}.")).replace(
                         "{command}", f"<code>join {escape(row.id)}</code>") + "</li>")
    return (f'<h2>{escape(_("Open challenges"))}</h2><ul class="challenges">{"".join(items)}</ul>')


#: Pages written beside the games' (e.g. one per tournament): hook(store, directory, names, now)
#: writes them and returns the HTML of their section of the index.
SITE_PAGES: list[Callable[[Store, Path, PublicNames, datetime], str]] = []


def reliability_section(reliable: Mapping[str, tuple[str, reliability.Reliability]]) -> str:
    """The reliability of each player (``email -> (public name, line)``): games finished and lost
    on time, moves in time, the time used. On the standings page (``pbem.community.standings_page``)."""
    lines = sorted(((name, line) for name, line in reliable.values() if line.finished or line.moves),
                   key=lambda item: item[0].lower())
    if not lines:
        return ""
    heads = [escape(_(h)) for h in (N_("Player"), N_("Games finished"), N_("Lost on time"),
                                    N_("Reliable"), N_("Moves in time"), N_("Time used"))]

    def percent(value: float | None) -> str:
        return "-" if value is None else f"{value:.0f} %"
    body = "".join(
        f'<tr class="reliability"><td>{escape(name)}</td><td data-label="{heads[1]}">{line.finished}</td>'
        f'<td data-label="{heads[2]}">{line.lost_on_time}</td>'
        f'<td data-label="{heads[3]}">{percent(line.percent if line.finished else None)}</td>'
        f'<td data-label="{heads[4]}">{percent(line.in_time_percent)}</td>'
        f'<td data-label="{heads[5]}">{percent(line.time_used_percent)}</td></tr>' for name, line in lines)
    title = escape(_("Reliability"))
    return (f"<h2>{title}</h2><table class=\"games\"><thead><tr>"
            + "".join(f"<th>{h}</th>" for h in heads) + f"</tr></thead><tbody>{body}</tbody></table>")


def write_site(store: Store, directory: Path, filters: Filters, *, progress: Progress | None = None,
               now: datetime | None = None, language: str = "en", default_days: float = 7) -> SiteReport:
    """The site in one ``language`` (en, de, sk): the pages' words and the engine's alike.
    ``default_days``: the server's time control, for challenges that set none."""
    with speaking(language):
        return _write_site(store, directory, filters, progress=progress, now=now, default_days=default_days)


def _write_site(store: Store, directory: Path, filters: Filters, *, progress: Progress | None,
                now: datetime | None, default_days: float) -> SiteReport:
    now = now or datetime.now(UTC)
    games_dir = directory / "games"
    games_dir.mkdir(parents=True, exist_ok=True)
    listed: list[GameRow] = []
    failed: list[tuple[str, str]] = []
    public_names = PublicNames(store)
    shown: dict[str, dict[str, str]] = {}
    challenges: list[GameRow] = []
    reliable: dict[str, reliability.Reliability] = {}
    for row in iter_games(store, filters):
        names = shown[row.id] = public_names.of(row)
        reliability.add(reliable, row)
        if row.status == "open":  # not a game yet: listed apart, with how to join it
            challenges.append(row)
            continue
        stem = file_stem(row.id)
        try:
            page = game_page(row, names)
        except (EngineError, KeyError, TypeError, ValueError) as exc:  # a damaged record: skip, report
            failed.append((row.id, f"{type(exc).__name__}: {exc}"))
            continue
        _write(games_dir / f"{stem}.html", page)
        public = public_record(others_view(player_view(row.record)), {
            email.lower(): names[seat] for seat, email in players_of(row).items() if email})
        public["id"] = row.id
        _write(games_dir / f"{stem}.json", archive_text(public))
        # Only what the index shows is kept, so a large site does not hold every record.
        listed.append(GameRow(id=row.id, game=row.game, status=row.status,
                              record={k: row.record[k] for k in ("players", "result", "moves")
                                      if k in row.record},
                              seats=row.seats, created_at=row.created_at, finished_at=row.finished_at))
        if progress is not None:
            progress.update()
    extra = "".join(pages(store, directory, public_names, now) for pages in SITE_PAGES)
    index = directory / "index.html"
    by_name = {email: (public_names.person(email), line) for email, line in reliable.items()}
    _write(index, index_page(listed, filters, now, shown, challenges, by_name, default_days, extra))
    return SiteReport(pages=len(listed), index=index, failed=failed)


__all__ = ["SITE_PAGES", "SiteReport", "game_page", "head", "index_page", "reliability_section", "write",
           "write_site"]
head = _head  # for pages of other features (tournaments): the same head and style
write = _write
