"""The table of a tournament as a mail shows it, in at most 78 columns: standings with tie-breaks
(and a crosstable for a round robin small enough to fit), the bracket's matches, the ladder, the
league's divisions; then the rounds with their games."""

from __future__ import annotations

from typing import Any

from pbem.clocks.control import invitation_line, normalize
from pbem.i18n import _, ngettext
from pbem.outbox.compose import Section
from pbem.processing.context import MailContext
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import elimination, ladder
from pbem.tournaments.names import name_of, title
from pbem.tournaments.table import SHORT, crosstable, fraction
from pbem.tournaments.tables import division_table, table_lines

NAME = 20  # columns for a name


def standings_text(ctx: MailContext, trow: TournamentRow, lines: list[Any], cross: bool) -> str:
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    breaks = [b for b in settings.tiebreaks or [] if b != "rating"][:3]
    head = f"{'#':>3} {_('Player'):<{NAME}} {_('Pts'):>5} {_('Games'):>5}" + "".join(
        f" {_(SHORT[b]):>6}" for b in breaks)
    out = [head]
    number = {line.player: i + 1 for i, line in enumerate(lines)}
    for line in lines:
        status = (d.entrant(doc, line.player) or {}).get("status")
        mark = "*" if status == "withdrawn" else " "
        name = name_of(ctx, doc, line.player, NAME)
        values = "".join(f" {_num(line.values.get(b, 0)):>6}" for b in breaks)
        out.append(f"{line.rank:>3} {name:<{NAME}} {fraction(line.points):>5} {line.played:>5}{values}{mark}")
    if any((d.entrant(doc, line.player) or {}).get("status") == "withdrawn" for line in lines):
        out.append(_("* withdrew"))
    if cross and len(lines) <= 12 and not settings.double:
        cells = crosstable([line.player for line in lines], d.games(doc))
        out.append("")
        out.append(f"{'':>3} {'':<{NAME}}" + "".join(f" {n:>3}" for n in range(1, len(lines) + 1)))
        for line in lines:
            row = ""
            for other in lines:
                if other.player == line.player:
                    row += "   X"
                else:
                    got = cells.get((line.player, other.player))
                    row += f" {''.join(fraction(x) for x in got) if got else '.':>3}"
            out.append(f"{number[line.player]:>3} {name_of(ctx, doc, line.player, NAME):<{NAME}}{row}")
    return "\n".join(line.rstrip() for line in out)


def _num(value: float) -> str:
    return fraction(value) if abs(value * 2 - round(value * 2)) < 1e-9 else f"{value:.2f}"


def rounds_text(ctx: MailContext, trow: TournamentRow, rounds: list[dict[str, Any]]) -> str:
    doc = trow.doc
    out = []
    for round_ in rounds:
        out.append(_("Round {n}").format(n=round_["number"]))
        for item in round_["games"]:
            if len(item["players"]) > 2:  # a table: one player a line
                game = item.get("id") or "-"
                out.append(f"  {game:<8} {_('playing') if item.get('points') is None else ''}".rstrip())
                for i, p in enumerate(item["players"]):
                    got = "" if item.get("points") is None else fraction(item["points"][i])
                    out.append(f"{'':11}{name_of(ctx, doc, p, 40):<41} {got}".rstrip())
                continue
            names = " – ".join(name_of(ctx, doc, p, 16, mark_within=False) for p in item["players"])
            if len(item["players"]) == 1:
                what = _("bye")
            elif item.get("points") is None:
                what = _("playing")
            else:
                what = " – ".join(fraction(x) for x in item["points"])
                if not item.get("played", True):
                    what += " " + _("(not played)")
            game = item.get("id") or "-"
            out.append(f"  {game:<8} {names}: {what}")
    return "\n".join(out)


def bracket_text(ctx: MailContext, trow: TournamentRow) -> str:
    doc = trow.doc
    bracket = elimination.bracket_from_json(doc["bracket"])
    results = {mid: m["winner"] for mid, m in doc.get("matches", {}).items() if m.get("winner")}
    outcomes = elimination.resolve(bracket, results)
    out = []
    for match in sorted(bracket.matches, key=lambda m: m.order):
        done = outcomes[match.id]
        if done.players is None or (done.decided and not done.winner):
            if done.decided:
                continue  # a bye against a bye, or a second final that was not needed
            out.append(f"  {match.id:<6} " + _("waiting"))
            continue
        a, b = (name_of(ctx, doc, p, 14) if p else _("bye") for p in done.players)
        if done.decided and done.winner:
            state = _("{player} goes through").format(player=name_of(ctx, doc, done.winner, 14))
        else:
            games = (doc.get("matches", {}).get(match.id) or {}).get("games") or []
            state = _("playing {games}").format(games=", ".join(games)) if games else _("waiting")
        out.append(f"  {match.id:<6} {a} – {b}: {state}")
    return "\n".join(out)


def reach_text(trow: TournamentRow, place: int) -> str:
    """What a player at ``place`` may challenge, with the places named."""
    if place <= 1:
        return _("You are at the top: the others challenge you.")
    highest = max(1, place - ladder.reach(place))
    if highest == place - 1:
        return _("You may challenge the player at place {n}: tournament {id} challenge {n}").format(
            n=highest, id=trow.id)
    return _("You may challenge places {high} to {low}: tournament {id} challenge {low}").format(
        high=highest, low=place - 1, id=trow.id)


def table_sections(ctx: MailContext, trow: TournamentRow) -> list[Section]:
    doc = trow.doc
    fmt = trow.format
    sections = []
    if trow.status == "open":
        names = [name_of(ctx, doc, p) for p in d.entrants(doc, "entered")]
        sections.append(Section(title=_("Entered ({n})").format(n=len(names)),
                                lines=[", ".join(names) or "-"]))
        return sections
    if fmt == "ladder":
        board = doc.get("ladder", [])
        lines = [f"{i + 1:>3} {name_of(ctx, doc, p, 40)}" for i, p in enumerate(board)]
        open_ = [c for c in doc.get("challenges", []) if c.get("open")]
        sections.append(Section(title=_("The ladder"), pre="\n".join(lines) or "-"))
        if open_:
            sections.append(Section(title=_("Challenges in play"), lines=[
                _("{game}: {challenger} challenges {defender}").format(
                    game=c["id"], challenger=name_of(ctx, doc, c["challenger"]),
                    defender=name_of(ctx, doc, c["defender"])) for c in open_]))
        reader = ctx.mail.from_addr
        sections.append(Section(lines=[reach_text(trow, board.index(reader) + 1) if reader in board else _(
            "From place N you may challenge up to ceil(sqrt(N)) places above: tournament {id} challenge "
            "PLACE").format(id=trow.id)]))
        return sections
    if fmt.endswith("elimination"):
        sections.append(Section(title=_("Bracket"), pre=bracket_text(ctx, trow)))
        return sections
    if fmt == "league":
        for k in range(len(doc.get("divisions", []))):
            lines = division_table(doc, k)
            sections.append(Section(title=_("Season {season}, division {n}").format(
                season=doc.get("season", 1), n=k + 1), pre=standings_text(ctx, trow, lines, True)))
        return sections
    lines = table_lines(trow)
    pairs = d.settings_from_json(doc["settings"]).tables <= 2
    sections.append(Section(title=_("Standings"), pre=standings_text(ctx, trow, lines,
                                                                     fmt == "round-robin" and pairs)))
    if doc.get("rounds"):
        sections.append(Section(title=_("Rounds"), pre=rounds_text(ctx, trow, doc["rounds"])))
    return sections


def reliable_text(required: int) -> str:
    return _("For players who lost at most {lost} % of their finished games on time (reliable {percent})."
             ).format(lost=100 - required, percent=required)


def summary_lines(ctx: MailContext, trow: TournamentRow) -> list[str]:
    """What a tournament is, in a few lines (the listing, the announcement, the confirmation)."""
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    entered = len(d.entrants(doc, "entered"))
    lines = [title(trow)]
    parts = []
    if settings.rounds:
        parts.append(ngettext("{n} round", "{n} rounds", settings.rounds).format(n=settings.rounds))
    if settings.double:
        parts.append(_("double round robin"))
    if settings.tables > 2:
        parts.append(_("tables of up to {n}").format(n=settings.tables))
    if trow.format == "league":
        parts.append(_("divisions of up to {n}, {promote} up and down, {seasons} season(s)").format(
            n=settings.division, promote=settings.promote, seasons=settings.seasons))
    if trow.format == "ladder":
        parts.append(_("rematches after {n} days").format(n=f"{settings.rematch_days:g}"))
    parts.append(_("{days} days a round").format(days=f"{settings.round_days:g}"))
    lines.append("; ".join(parts) + ".")
    # its games' time control as a challenge to a game gives it, with what a deadline does
    lines.append(invitation_line(normalize(doc.get("time_control"))))
    if trow.status == "open" and trow.starts_at:
        lines.append(_("Entries: {n} (at least {min}{max}); it starts on {when} UTC.").format(
            n=entered, min=settings.min,
            max=_(", at most {n}").format(n=settings.max) if settings.max else "",
            when=f"{trow.starts_at:%Y-%m-%d %H:%M}"))
    elif trow.status == "running" and trow.format == "ladder":
        lines.append(ngettext("Running: {count} player on the ladder.", "Running: {count} players on the "
                              "ladder.", entered).format(count=entered))
    elif trow.status == "running":
        lines.append(ngettext("Running: round {n}, {count} player.", "Running: round {n}, {count} players.",
                              entered).format(n=len(doc.get("rounds", [])), count=entered))
    if settings.tiebreaks:
        lines.append(_("Tie-breaks: {names}.").format(names=", ".join(settings.tiebreaks)))
    if settings.reliable:
        lines.append(reliable_text(settings.reliable))
    lines.append(_("Organizer: {player}.").format(player=name_of(ctx, doc, trow.organizer)))
    return lines


__all__ = ["bracket_text", "ladder", "reach_text", "rounds_text", "standings_text", "summary_lines",
           "table_sections"]
