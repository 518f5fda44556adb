"""The mail commands of tournaments: ``tournament new GAME FORMAT [OPTIONS]`` (and its JSON twin),
``tournament T`` (the table), ``tournaments [GAME]`` (the open and running ones), ``enter T``,
``withdraw T``; the organizer's and moderators' ``tournament T OPERATION`` are in ``moderating``.

Entering and withdrawing change what games a player will have to play (the first round's games
start by themselves), so both need a proven address: a reply to any mail of the server, or the
confirmation line the answer asks for.
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

from engine import EngineError, get_game
from engine.options import parse_option_words
from engine.registry import UnknownGameError
from pbem.clocks import reliability
from pbem.clocks.control import default_control
from pbem.commands.helptext import HELP_TOPICS, WIDTH
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.community import challenges
from pbem.i18n import N_, _, ngettext
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import MailContext
from pbem.processing.games import CommandFailed, address_proven
from pbem.processing.handlers import HANDLERS, register_handler
from pbem.record import iso
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import running
from pbem.tournaments.access import held_handler, may_organize, save, tournament_of
from pbem.tournaments.document import is_tournament
from pbem.tournaments.moderating import operate
from pbem.tournaments.texts import summary_lines, table_sections

USAGE_TOURNAMENT = N_("tournament new GAME FORMAT [OPTIONS] | tournament T [OPERATION]   (see help "
                      "tournaments)")
USAGE_TOURNAMENTS = N_("tournaments [GAME-NAME]   (the tournaments open for entry and running)")
USAGE_ENTER = N_("enter T   (enter a tournament, e.g. enter t-3)")
#: operation -> the words it takes before a free-text reason
OPERATIONS = {"table": 0, "challenge": 1, "start": 0, "pause": 0, "resume": 0, "deadline": 1, "replace": 2,
              "remove": 1, "repair": 0, "end": 0, "result": 2}


HELP = N_("""Tournaments: a moderator announces one, players enter, and the server runs it: the games
of each round start by themselves, every player gets one mail per round with all their new games,
and the next round is paired when the last game of a round ends (or at the round's deadline).

  tournament new GAME FORMAT [OPTIONS]   announce one (moderators; see below)
  tournaments [GAME]      the tournaments open for entry and running
  tournament T            the table (crosstable, standings, bracket, ladder, divisions)
  enter T                 enter; withdraw T leaves (games in play are forfeited)
  tournament T challenge PLACE   on a ladder: challenge the player at that place

Formats: round-robin (double: twice; together: every game at once), swiss (rounds N),
elimination, double-elimination, ladder, league (division N, promote N, seasons N).
Options: starts YYYY-MM-DD, max N, min N, round DAYS (a round's deadline), time ... (as
for new: help new), tables N (3 to 5 at a table, round robin and swiss), tiebreaks
sonneborn-berger buchholz median-buchholz head-to-head wins rating, adjudicate
moderator|score, withdrawals forfeit|remove, rematch DAYS (ladder), reliable PERCENT
(only players who lost at most 100 - PERCENT % of their finished games on time may
enter), and the game's own.
Example: tournament new alien-city swiss rounds 5 time 5 forfeit starts 2026-12-10

The organizer (or a moderator): tournament T start | pause | resume | deadline DATE |
replace OLD NEW | remove ADDRESS | repair | result GAME SEAT|draw | end [WHY]. Pause stops
new rounds and the clocks of the games in play; resume starts them again.""")


def tournaments_help() -> str:
    """The help in the reader's language, fitted to the mail's width: paragraphs filled, the lines
    of the command list wrapped under their explanation."""
    blocks = []
    for block in _(HELP).split("\n\n"):
        lines = block.split("\n")
        if all(line.startswith("  ") for line in lines):
            out = []
            for line in lines:
                command, gap, what = line.partition("   ")
                indent = " " * min(len(command) + len(gap) + (len(what) - len(what.lstrip())), 26)
                out += textwrap.wrap(line, WIDTH, subsequent_indent=indent) if gap else [line]
            blocks.append("\n".join(out))
        else:
            blocks.append(textwrap.fill(" ".join(lines), WIDTH, break_on_hyphens=False))
    return "\n\n".join(blocks)


# --- parsing ----------------------------------------------------------------------------------------

def parse_tournament(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if rest and rest[0].lower() == "new":
        if len(rest) < 3:
            return CommandError(line, _("say the game and the format: {example}").format(
                example="tournament new alien-city swiss rounds 5 starts 2026-12-10"))
        return Command("tournament", line, args={"action": "new", "game": rest[1].lower(), "words": rest[2:]})
    ident = None
    if rest and is_tournament(rest[0]):
        ident, rest = rest[0].lower(), rest[1:]
    elif rest and GAME_ID.match(rest[0]):
        return CommandError(line, _("{id} is a game, not a tournament: tournaments are named like t-3 "
                                    "('tournaments' lists them)").format(id=rest[0]))
    action = rest[0].lower() if rest else "table"
    if action not in OPERATIONS:
        return CommandError(line, _("'{word}' is not something a tournament does; the operations are {ops}. "
                                    "The table: tournament {id}. See help tournaments.").format(
            word=rest[0], ops=", ".join(OPERATIONS), id=ident or "t-3"))
    words = rest[1:]
    takes = OPERATIONS[action]
    if len(words) < takes:
        return CommandError(line, _("'tournament T {action}' needs {n} more word(s): {example}").format(
            action=action, n=takes - len(words), example=_EXAMPLES[action]))
    return Command("tournament", line, game=ident, args={"action": action, "target": words[:takes],
                                                        "why": " ".join(words[takes:])})


_EXAMPLES = {"challenge": "tournament t-3 challenge 4", "deadline": "tournament t-3 deadline 2026-12-24",
             "replace": "tournament t-3 replace old@example.org new@example.org",
             "remove": "tournament t-3 remove bo@example.org", "result": "tournament t-3 result ac-12 black",
             "table": "tournament t-3"}


def parse_tournaments(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) > 1:
        return CommandError(line, _("tournaments takes at most a game name: {usage}").format(
            usage=_(USAGE_TOURNAMENTS)))
    if not rest:
        return Command("tournaments", line)
    try:
        return Command("tournaments", line, args={"game": get_game(rest[0].lower()).name})
    except UnknownGameError as exc:
        return CommandError(line, f"{str(exc).rstrip('.')}. {_(USAGE_TOURNAMENTS)}")


def parse_enter(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) > 1 or (rest and not is_tournament(rest[0])):
        close = re.fullmatch(r"t-?\s*(\d+)", rest[0].lower()) if len(rest) == 1 else None
        if close:
            return CommandError(line, _("a tournament is named like t-3: did you mean enter t-{n}?").format(
                n=close.group(1)))
        return CommandError(line,
                            _("enter takes a tournament like t-3: {usage}").format(usage=_(USAGE_ENTER)))
    return Command("enter", line, game=rest[0].lower() if rest else None)


# --- helpers ----------------------------------------------------------------------------------------

# --- tournament new ---------------------------------------------------------------------------------

def do_tournament(ctx: MailContext, command: Command) -> None:
    action = command.args["action"]
    if action == "new":
        announce(ctx, command)
        return
    if action == "table":
        show(ctx, command)
        return
    operate(ctx, command)


def announce(ctx: MailContext, command: Command) -> None:
    organizer = ctx.mail.from_addr
    if not may_organize(ctx, command):
        if ctx.config.tournaments.organizers == "players":
            raise CommandFailed(_("announcing a tournament needs your token: reply to one of my mails (its "
                                  "Reply-To carries it) with the same line."))
        raise CommandFailed(_("only the moderators announce tournaments on this server (with their "
                              "moderator token); ask one of them."))
    try:
        game = get_game(command.args["game"])
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    words = list(command.args["words"])
    fmt_at = next((i for i, w in enumerate(words) if w.lower() in d.FORMATS or w.lower() in d.ALIASES), None)
    if fmt_at is None:
        raise CommandFailed(_("which format? One of {formats}, e.g. {example}").format(
            formats=", ".join(d.FORMATS), example=f"tournament new {game.name} swiss rounds 5"))
    fmt = words.pop(fmt_at)
    try:
        settings, rest = d.read_settings(fmt, words, ctx.now, ctx.config.tournaments.round_days)
        d.check(settings, game_title=game.title, game_min=game.min_players, game_max=game.max_players,
                now=ctx.now)
    except d.SettingsError as exc:
        raise CommandFailed(str(exc)) from None
    probe = Command("new", command.line, game=game.name, option_words=rest)
    server_keys: dict[str, Any] = {}
    try:
        for take in hooks.NEW_GAME_OPTIONS:  # the time control, as 'new' reads it (every clock kind)
            server_keys.update(take(ctx, probe))
        options = game.normalize_options(parse_option_words(game, probe.option_words))
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    except CommandFailed:
        raise
    if "time_control" not in server_keys:
        server_keys["time_control"] = default_control(ctx.config.deadlines)
    ident = ctx.tx.tournaments.next_id()
    doc = {"game": game.name, "options": options, "time_control": server_keys["time_control"],
           "settings": settings.as_json(), "organizer": organizer, "created_at": iso(ctx.now),
           "entrants": [], "rounds": [], "actions": []}
    trow = TournamentRow(id=ident, game=game.name, format=settings.format, status="open", organizer=organizer,
                         doc=doc, created_at=ctx.now, updated_at=ctx.now, starts_at=settings.starts,
                         due_at=settings.starts)
    ctx.tx.tournaments.insert(trow)
    ctx.outcomes.append(f"tournament {ident} announced")
    ctx.reply(Section(lines=[*summary_lines(ctx, trow), _(
        "Players enter with: enter {id}. The table: tournament {id}.").format(id=ident)],
                      actions=[ActionGroup("", [Action(_("Enter {id}").format(id=ident),
                                                       f"enter {ident}")])]),
              headline=_("Tournament {title} announced").format(title=running.title(trow)))


# --- the table and the listing ----------------------------------------------------------------------

def show(ctx: MailContext, command: Command) -> None:
    trow = tournament_of(ctx, command, lock=False)
    mine = ctx.mail.from_addr in d.entrants(trow.doc)
    lines = summary_lines(ctx, trow)
    if trow.status == "open" and not mine:
        lines.append(_("To enter: enter {id}").format(id=trow.id))
    ctx.reply(Section(lines=lines), headline=_("Tournament {title}").format(title=running.title(trow)))
    for section in table_sections(ctx, trow):
        ctx.reply(section)


def do_tournaments(ctx: MailContext, command: Command) -> None:
    rows = ctx.tx.tournaments.list(status=("open", "running", "paused"), game=command.args.get("game"))
    if not rows:
        ctx.reply(Section(lines=[_("None at the moment. Moderators announce them: help tournaments.")]),
                  headline=_("No tournaments open or running"))
        return
    ctx.reply(None, headline=ngettext("Tournaments: {n}", "Tournaments: {n}", len(rows)).format(n=len(rows)))
    for trow in rows:
        lines = summary_lines(ctx, trow)[1:]
        entered = ctx.mail.from_addr in d.entrants(trow.doc, "entered")
        actions = []
        if trow.status == "open" or (trow.status == "running" and trow.format in ("ladder", "league")):
            if entered:
                lines.append(_("You have entered; to leave: withdraw {id}").format(id=trow.id))
            else:
                lines.append(_("To enter: enter {id}").format(id=trow.id))
                actions = [ActionGroup("", [Action(_("Enter {id}").format(id=trow.id), f"enter {trow.id}")])]
        ctx.reply(Section(title=running.title(trow), lines=lines, actions=actions))


# --- entering and withdrawing -----------------------------------------------------------------------

def do_enter(ctx: MailContext, command: Command) -> None:
    trow = tournament_of(ctx, command)
    email = ctx.mail.from_addr
    doc = trow.doc
    settings = d.settings_from_json(doc["settings"])
    joins_later = trow.status == "running" and trow.format in ("ladder", "league")
    if trow.status != "open" and not joins_later:
        raise CommandFailed(_closed(trow))
    entry = d.entrant(doc, email)
    if entry is not None and entry.get("status") == "entered":
        raise CommandFailed(_("you have already entered {id}; nothing changed. The table: tournament {id}; "
                              "to leave: withdraw {id}").format(id=trow.id))
    if entry is not None and entry.get("status") == "removed":
        raise CommandFailed(_("a moderator removed you from {id}; ask them.").format(id=trow.id))
    if email == ctx.config.address:
        raise CommandFailed(_("{address} is the server, not a player.").format(address=email))
    count = len(d.entrants(doc, "entered"))
    if settings.max is not None and count >= settings.max:
        raise CommandFailed(_("{id} is full: {n} of {n} players have entered.").format(id=trow.id,
                                                                                       n=settings.max))
    _check_reliable(ctx, trow, settings, email)
    if not address_proven(ctx, command):
        line = f"enter {trow.id}"
        ctx.reply(Section(lines=[*summary_lines(ctx, trow),
                                 _("Entering means your games start by themselves, so I ask first: reply to "
                                   "this mail with the line below (or tap it). Nothing has happened yet."),
                                 f"  {line}"], actions=[ActionGroup("", [Action(_("Enter"), line)])]),
                  headline=_("Confirm: {line}").format(line=line))
        return
    if entry is None:
        doc["entrants"].append({"email": email, "name": ctx.mail.from_name, "entered_at": iso(ctx.now),
                                "status": "entered"})
    else:
        entry.update(status="entered", entered_at=iso(ctx.now))
    if trow.format == "ladder" and trow.status == "running":
        doc["ladder"].append(email)
        entry = d.entrant(doc, email)
        assert entry is not None
        entry.setdefault("rating", running.ratings_now(ctx, trow.game, [email])[email])
    count += 1
    ctx.outcomes.append(f"{email} entered {trow.id}")
    lines = summary_lines(ctx, trow)
    if joins_later and trow.format == "ladder":
        headline = _("You entered {id}: number {n} on the ladder").format(id=trow.id, n=len(doc["ladder"]))
    elif joins_later:
        headline = _("You entered {id}: you play from the next season").format(id=trow.id)
    else:
        headline = _("You entered {id}; it starts on {when} UTC").format(
            id=trow.id, when=f"{trow.starts_at:%Y-%m-%d %H:%M}" if trow.starts_at else "?")
        lines.append(_("Your games start by themselves: you get one mail per round. To leave before: "
                       "withdraw {id}").format(id=trow.id))
    ctx.reply(Section(lines=lines), headline=headline)
    if trow.status == "open" and settings.max is not None and count >= settings.max:
        running.start(ctx, trow)  # full: entry closes and the first round starts now
    save(ctx, trow)


def _check_reliable(ctx: MailContext, trow: TournamentRow, settings: d.Settings, email: str) -> None:
    """``reliable N``: the player's record as an open challenge's ``join`` reads it."""
    if not settings.reliable:
        return
    record = reliability.of_player(ctx.tx.games_for_email(email), email)
    if record.percent >= settings.reliable:
        return
    raise CommandFailed(_("{id} is for players who lost at most {lost} % of their finished games on time "
                          "(reliable {required}); you lost {count} of {n} on time, so you are {percent} % "
                          "reliable. 'tournaments' lists the others; 'standings' shows your record.").format(
        id=trow.id, lost=100 - settings.reliable, required=settings.reliable, count=record.lost_on_time,
        n=record.finished, percent=f"{record.percent:.0f}"))


def _closed(trow: TournamentRow) -> str:
    if trow.status in ("over", "cancelled"):
        return _("{id} is over; 'tournaments' lists the open ones.").format(id=trow.id)
    return _("entry to {id} closed when it started; 'tournaments' lists the open ones.").format(id=trow.id)


def withdraw_or_other(ctx: MailContext, command: Command) -> None:
    """``withdraw T`` leaves a tournament; ``withdraw GAME`` is the games' own command."""
    ident = command.game or ctx.context_tag
    if not is_tournament(ident):
        _games_withdraw(ctx, command)
        return
    trow = tournament_of(ctx, command)
    email = ctx.mail.from_addr
    entry = d.entrant(trow.doc, email)
    if trow.status in ("over", "cancelled"):
        raise CommandFailed(_("{id} is over; there is nothing to withdraw from.").format(id=trow.id))
    if entry is None or entry.get("status") != "entered":
        if trow.status == "open" or (trow.status == "running" and trow.format in ("ladder", "league")):
            raise CommandFailed(_("you are not in {id}, so there is nothing to withdraw from; to enter: "
                                  "enter {id}").format(id=trow.id))
        raise CommandFailed(_("you are not in {id}, so there is nothing to withdraw from.").format(
            id=trow.id))
    if not address_proven(ctx, command):
        line = f"withdraw {trow.id}"
        ctx.reply(Section(lines=[_("Withdrawing from a running tournament forfeits your games in play. "
                                   "Nothing has happened yet; to withdraw, reply with the line below (or "
                                   "tap it)."),
                                 f"  {line}"], actions=[ActionGroup("", [Action(_("Withdraw"), line)])]),
                  headline=_("Confirm: {line}").format(line=line))
        return
    if trow.status == "open":
        entry["status"] = "withdrawn"
        ctx.reply(None, headline=_("You withdrew from {id}; it had not started").format(id=trow.id))
    else:
        ended = running.leave(ctx, trow, email, "withdrawn", email)
        running.advance(ctx, trow)
        lines = [_("Your games forfeited: {games}.").format(games=", ".join(ended))] if ended else []
        ctx.reply(Section(lines=lines), headline=_("You withdrew from {id}").format(id=trow.id))
        running.tell_entrants(ctx, trow, lambda: _("{player} withdrew from {id}").format(
            player=running.name_of(ctx, trow.doc, email), id=trow.id), exclude=email)
    ctx.outcomes.append(f"{email} withdrew from {trow.id}")
    save(ctx, trow)


def games_listing(ctx: MailContext) -> list[Section]:
    """The ``games`` answer also lists the sender's tournaments that are open or running."""
    rows = [r for r in ctx.tx.tournaments.list(email=ctx.mail.from_addr, status=("open", "running", "paused"))
            if ctx.mail.from_addr in d.entrants(r.doc, "entered")]
    if not rows:
        return []
    return [Section(title=_("Your tournaments"), lines=[
        f"{running.title(r)}: " + (_("starts {when} UTC").format(when=f"{r.starts_at:%Y-%m-%d}")
                                   if r.status == "open" and r.starts_at
                                   else _("round {n}").format(n=len(r.doc.get("rounds", []))))
        for r in rows] + [_("The table of one: tournament T")])]


_games_withdraw = HANDLERS["withdraw"]  # the games' own (challenges, proposals), imported above
HELP_TOPICS["tournaments"] = tournaments_help
hooks.GAMES_LISTING.append(games_listing)
assert challenges  # registers the games' withdraw before this module wraps it
register_verb("tournament", USAGE_TOURNAMENT, parse_tournament)
register_verb("tournaments", USAGE_TOURNAMENTS, parse_tournaments)
register_verb("enter", USAGE_ENTER, parse_enter)
register_handler("tournament", held_handler(do_tournament))
register_handler("tournaments", do_tournaments)
register_handler("enter", held_handler(do_enter))
register_handler("withdraw", held_handler(withdraw_or_other))
