"""Mail commands about time: ``vacation``, ``timezone``, ``timecontrol``; and the hooks that keep every
game's move clock running (started on each new turn, stopped when the game ends).

Times that players type or read are in their own timezone; everything stored is UTC.

Changing a vacation moves deadlines, so it needs the same proof as a move: the From address of a seat
together with a token of one of that address's seats (a reply to any game mail carries one). Without
that, anybody could forge a vacation for an opponent, or cancel theirs. ``timezone`` only changes how
times are shown and needs no token.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

from engine import State
from pbem.clocks import allowance
from pbem.clocks import control as tc
from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.community import deadlines as dl
from pbem.i18n import N_, _, ngettext, status_word
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import game_names, seat_label
from pbem.processing.games import CommandFailed, address_proven, authenticate, mail_tokens
from pbem.processing.handlers import register_handler
from pbem.store.base import GameRow, Seat

USAGE_VACATION = N_("vacation [FROM..TO | cancel]   (dates like 2026-12-24, in your timezone)")
USAGE_TIMEZONE = N_("timezone [Area/City]   (e.g. timezone Europe/Bratislava; shows times in it)")
USAGE_TIMECONTROL = N_("timecontrol [GAME] [TIME] [forfeit|notify] [weekends off] [nights off]   "
                       "(TIME: DAYS per move, fischer INITIAL+INCREMENT [cap DAYS], or total DAYS; before "
                       "the others accept; help time)")
_DATE = r"\d{4}-\d{1,2}-\d{1,2}"
_RANGE = re.compile(rf"^({_DATE})(?:\s*(?:\.\.\.?|–|—|-|to|until|till)\s*|\s+)({_DATE})$", re.IGNORECASE)
_SINGLE = re.compile(rf"^({_DATE})$")
TIME_HELP = (
    N_("Every game has a time control, chosen with 'new' (new alien-city time fischer 10+1.5 with "
       "ADDRESS), in an open challenge, or with 'timecontrol GAME ...' before the others accept:"),
    N_("time 5: 5 days for each move."),
    N_("time fischer 10+1.5 cap 10: a bank of 10 days; each move takes the time it used from it and "
       "adds 1.5 days, up to 10 days. Quick answers bank time for a busy week."),
    N_("time total 30: 30 days for the whole game."),
    N_("weekends off, nights off: Saturday and Sunday, or 23:00-07:00, do not count, in the timezone "
       "of the player to move (timezone Area/City)."),
    N_("forfeit or notify: at the deadline the late player forfeits (after a final reminder and 24 "
       "hours), or the moderators decide."),
    N_("Amounts are days; 36h is hours. Where a bank carries over or time does not count, every "
       "deadline shows what you have: 'Your time: 6 d 4 h, +36 h per move, at most 10 d.'"),
    N_("Vacation: 'vacation FROM..TO' stops all your clocks, from a yearly allowance. When your time "
       "runs out, a whole day of that allowance is spent for you, in all your games, before the "
       "deadline's policy applies; 'settings' and 'vacation' show what is left."),
    N_("Reliability: 'standings' shows each player's share of finished games not lost on time; "
       "'new GAME open reliable 90' lets only players with at least 90 % join."),
)
NO_VACATIONS = N_("this server gives no vacation days ([deadlines] vacation_days_per_year = 0): to be "
                  "away, ask its moderators to pause your games.")
KEEP_VACATIONS_YEARS = 1  # past vacations older than last year no longer count against any allowance


# --- parsing ---------------------------------------------------------------------------------------------

def _date(text: str) -> date:
    year, month, day = (int(part) for part in text.split("-"))
    return date(year, month, day)


def parse_vacation(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if not rest:
        return Command("vacation", line, args={"action": "show"})
    text = " ".join(rest).strip().rstrip(".")
    if text.lower() == "cancel":
        return Command("vacation", line, args={"action": "cancel"})
    match = _RANGE.match(text) or _SINGLE.match(text)
    if not match:
        return CommandError(line, _("write the first and last day of your vacation: {usage}").format(
            usage=_(USAGE_VACATION)))
    try:
        first = _date(match.group(1))
        last = _date(match.group(2)) if match.lastindex == 2 else first
    except ValueError as exc:
        return CommandError(line, _("not a date: {reason}. {usage}").format(
            reason=exc, usage=_(USAGE_VACATION)))
    return Command("vacation", line, args={"action": "set", "from": first, "to": last})


def parse_timezone(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) > 1:
        return CommandError(line, _("one timezone name, like Europe/Bratislava: {usage}").format(
            usage=_(USAGE_TIMEZONE)))
    return Command("timezone", line, args={"name": rest[0] if rest else None})


def parse_timecontrol(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = list(rest)
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    try:
        said, _rest = tc.said_in(words, whole=True)  # the game's control fills in the rest
    except tc.ClockError as exc:
        return CommandError(line, f"{exc}. {_(USAGE_TIMECONTROL)}")
    return Command("timecontrol", line, game=game, args={"said": said})


def take_time_option(ctx: MailContext, command: Command) -> dict[str, Any]:
    """For ``new GAME time 3 with ...`` and open challenges: removes the time-control words
    (``pbem.clocks.control.take``: ``time ...``, ``weekends off``, ``nights off``) from the option
    words, or ``"time"`` from a turn file's options, and returns the record keys to add, e.g.
    ``{"time_control": {"kind": "move", "days_per_move": 3, "policy": "forfeit"}}``; ``{}`` when
    absent.

    Meant for ``handlers.do_new``, which must strip the words before the game parses its options.
    """
    config = ctx.config.deadlines
    try:
        if command.options is not None and "time" in command.options:
            options = dict(command.options)
            control = tc.from_json(options.pop("time"), config=config)
            command.options = options
        else:
            control, command.option_words = tc.take(command.option_words, config=config)
    except tc.ClockError as exc:
        raise CommandFailed(_("time: {error}").format(error=exc)) from None
    if control is not None:
        _somebody_decides(ctx, control)
    return {"time_control": control} if control is not None else {}


def _somebody_decides(ctx: MailContext, control: dict[str, Any]) -> None:
    """'notify' leaves a late player to the moderators: on a server without any, nobody would."""
    if control.get("policy") == "notify" and not ctx.config.moderators:
        raise CommandFailed(_("'notify' leaves a late player to the moderators, and this server has none: "
                              "at a deadline nobody would decide. Leave it out (the late player forfeits), "
                              "or write forfeit."))


# --- helpers ---------------------------------------------------------------------------------------------

def _settings(ctx: MailContext) -> dict[str, Any]:
    return ctx.tx.get_player(ctx.mail.from_addr)


def _require_token(ctx: MailContext, what: str) -> None:
    games = [g for g in ctx.tx.games_for_email(ctx.mail.from_addr) if g.status in ("invited", "active")]
    if games and not address_proven(ctx):
        raise CommandFailed(
            _("{what} moves your deadlines, so it needs your token: reply to a mail of one of your games "
              "(its Reply-To carries the token), or add a line 'token YOURTOKEN'.").format(what=what))


def _is_moderator(ctx: MailContext, command: Command) -> bool:
    """A configured moderator address with its moderator token, as for 'admin' commands; never the
    From address alone, which anybody can write."""
    try:
        from pbem.community.moderation import is_moderator
    except ImportError:  # moderation not installed: nobody moderates
        return False
    return is_moderator(ctx.config, ctx.secret, ctx.mail.from_addr, mail_tokens(ctx, command))


def _my_moves(ctx: MailContext, email: str) -> list[GameRow]:
    """The active games where ``email`` is to move, as the rows this mail already holds if any, so that
    a later save of the same game by the processor does not undo a change made here."""
    rows = []
    for row in ctx.tx.games_for_email(email):
        if row.status == "active" and dl.seat_email(row, row.to_move) == email:
            held = ctx.touched.get(row.id)
            rows.append(held[0] if held else row)
    return rows


def _deadline_lines(ctx: MailContext, email: str, settings: dict[str, Any]) -> list[str]:
    zone = dl.player_zone(settings)
    lines = []
    for row in _my_moves(ctx, email):
        if row.deadline_at is not None:
            lines.append(_("{id}: your move, deadline {when}").format(
                id=row.id, when=dl.format_when(row.deadline_at, zone, ctx.now)))
            bank = dl.bank_line(row, ctx.now, zone)
            if bank:  # wrapped here: the mail's own wrapping would lose the indent
                lines.append(textwrap.fill(bank, 72, initial_indent="  ", subsequent_indent="  "))
        elif dl.is_paused(row):
            lines.append(_("{id}: your move; the clock is paused").format(id=row.id))
    return lines


def _zone_lines(ctx: MailContext, settings: dict[str, Any]) -> list[str]:
    """Which timezone the answer's times are in: said once in an answer (timezone, vacation and
    settings in one mail said it three times)."""
    zone = dl.player_zone(settings)
    if settings.get("timezone"):
        line = _("Times are shown in your timezone, {zone}.").format(zone=zone.key)
    else:
        line = _("Times are shown in your timezone, {zone} (change it with: timezone Area/City).").format(
            zone=zone.key)
    return [] if any(line in section.lines for section in ctx.reply_sections) else [line]


def _retime(ctx: MailContext, email: str, old: list[dl.Interval], new: list[dl.Interval]) -> list[str]:
    moved = []
    for row in _my_moves(ctx, email):
        if dl.retime_for_vacations(row, ctx.now, old, new):
            ctx.tx.save_game(row)
            moved.append(row.id)
    return moved


# --- vacation ---------------------------------------------------------------------------------------------

def _vacation_summary(ctx: MailContext, settings: dict[str, Any]) -> list[str]:
    zone = dl.player_zone(settings)
    year = ctx.now.astimezone(zone).year
    days_a_year = ctx.config.deadlines.vacation_days_per_year
    lines = []
    for entry in dl.vacations(settings):
        end = dl.vacation_intervals({"vacations": [entry]})[0][1]
        if end > ctx.now:
            days = sum(dl.vacation_days(entry).values())
            lines.append(ngettext("Vacation {first} to {last} ({n} day).",
                                  "Vacation {first} to {last} ({n} days).", days).format(
                first=entry["from"], last=entry["to"], n=days))
    if not lines:
        lines.append(_("You have no vacation planned."))
    if days_a_year <= 0:
        text = _(NO_VACATIONS)
        lines += [text[:1].upper() + text[1:], *_zone_lines(ctx, settings)]
        return lines
    vacation, timeout, left = allowance.summary(ctx.tx, ctx.mail.from_addr, year, days_a_year, settings)
    lines.append(_("Vacation days used in {year}: {used} of {allowance}; {left} left.").format(
        year=year, used=vacation + timeout, allowance=days_a_year, left=left))
    if timeout:
        lines.append(ngettext("{n} of them was spent when your time ran out in a game.",
                              "{n} of them were spent when your time ran out in games.", timeout).format(
            n=timeout))
    lines += _zone_lines(ctx, settings)
    return lines


def do_vacation(ctx: MailContext, command: Command) -> None:
    action = command.args.get("action", "show")
    email = ctx.mail.from_addr
    settings = _settings(ctx)
    if action == "show":
        ctx.reply(Section(title=_("Your vacations"), lines=[
            *_vacation_summary(ctx, settings), *_deadline_lines(ctx, email, settings)]))
        return
    _require_token(ctx, _("a vacation"))
    old = dl.vacation_intervals(settings)
    years = allowance.years_of(dl.vacations(settings))
    if action == "cancel":
        cancelled = _cancel_vacations(ctx, settings)
        if not cancelled:
            raise CommandFailed(_("you have no current or planned vacation to cancel."))
        title = _("Vacation cancelled")
        first_lines = [_("Cancelled: {what}.").format(what=text) for text in cancelled]
    else:
        entry = _new_vacation(ctx, settings, command.args["from"], command.args["to"])
        settings["vacations"] = [*settings.get("vacations", []), entry]
        title = _("Vacation set")
        first_lines = [_("Your clocks stop from the start of {first} to the end of {last} ({zone}). Games "
                         "where you are to move wait for you; games where you are not to move go on until "
                         "it is your turn.").format(first=entry["from"], last=entry["to"],
                                                    zone=dl.player_zone(settings).key)]
    ctx.tx.set_player(email, settings)
    recent = ctx.now.year - KEEP_VACATIONS_YEARS
    allowance.write_vacations(ctx.tx, email, settings, {y for y in years | allowance.years_of(
        dl.vacations(settings)) if y >= recent}, ctx.now)
    moved = _retime(ctx, email, old, dl.vacation_intervals(settings))
    lines = [*first_lines, *_vacation_summary(ctx, settings)]
    if moved:
        lines.append(_("Deadlines moved: {games}.").format(games=", ".join(moved)))
    lines += _deadline_lines(ctx, email, settings)
    ctx.reply(Section(title=title, lines=lines))
    ctx.outcomes.append(f"vacation {action}")


def _new_vacation(ctx: MailContext, settings: dict[str, Any], first: date, last: date) -> dict[str, Any]:
    zone = dl.player_zone(settings)
    today = ctx.now.astimezone(zone).date()
    days_a_year = ctx.config.deadlines.vacation_days_per_year
    if days_a_year <= 0:
        raise CommandFailed(_(NO_VACATIONS))
    if last < first:
        raise CommandFailed(_("the vacation ends ({last}) before it starts ({first}): the first day comes "
                              "first, e.g. vacation {last}..{first}").format(last=last, first=first))
    if last < today or first < today:
        raise CommandFailed(_("a vacation cannot start in the past: today is {today} in {zone}. From today "
                              "on, e.g. vacation {today}..{until}").format(
            today=today, zone=zone.key, until=max(last, today)))
    if (last - first).days >= 366:
        raise CommandFailed(_("a vacation is at most a year long."))
    entry = dl.vacation_entry(first, last, zone)
    (start, end), = dl.vacation_intervals({"vacations": [entry]})
    for other in dl.vacations(settings):
        (o_start, o_end), = dl.vacation_intervals({"vacations": [other]})
        if o_end > ctx.now and start < o_end and o_start < end:
            raise CommandFailed(_("it overlaps your vacation {first} to {last}; cancel that one first "
                                  "('vacation cancel') or choose other days.").format(
                first=other["from"], last=other["to"]))
    for year, days in sorted(dl.vacation_days(entry).items()):
        left = allowance.left(ctx.tx, ctx.mail.from_addr, year, days_a_year, settings)
        if days > left:
            text = ngettext(
                "that is {n} vacation day in {year}, but you have only {left} of your {allowance} days a "
                "year left for {year}.", "that is {n} vacation days in {year}, but you have only {left} of "
                "your {allowance} days a year left for {year}.", days).format(
                n=days, year=year, left=max(0, left), allowance=days_a_year)
            longest = _longest_vacation(ctx, settings, first, last, days_a_year)
            if longest is not None:
                text += " " + _("The longest you can take from {first}: vacation {first}..{last}").format(
                    first=first, last=longest)
            raise CommandFailed(text)
    keep_from = today.year - KEEP_VACATIONS_YEARS
    settings["vacations"] = [v for v in settings.get("vacations", [])
                             if isinstance(v, dict) and date.fromisoformat(v["to"]).year >= keep_from]
    return entry


def _longest_vacation(ctx: MailContext, settings: dict[str, Any], first: date, last: date,
                      days_a_year: int) -> date | None:
    """The last day of the longest vacation from ``first`` (to ``last`` at most) that the allowance of
    each year it touches still covers; None when not even ``first`` is left."""
    left: dict[int, int] = {}
    day, end = first, None
    while day <= last:
        if day.year not in left:
            left[day.year] = allowance.left(ctx.tx, ctx.mail.from_addr, day.year, days_a_year, settings)
        if left[day.year] < 1:
            break
        left[day.year] -= 1
        end, day = day, day + timedelta(days=1)
    return end


def _cancel_vacations(ctx: MailContext, settings: dict[str, Any]) -> list[str]:
    """Planned vacations go; one under way ends now (its days so far stay used)."""
    zone = dl.player_zone(settings)
    today = ctx.now.astimezone(zone).date()
    kept, cancelled = [v for v in settings.get("vacations", []) if v not in dl.vacations(settings)], []
    for entry in dl.vacations(settings):
        (start, end), = dl.vacation_intervals({"vacations": [entry]})
        if end <= ctx.now:
            kept.append(entry)
        elif start > ctx.now:
            cancelled.append(_("{first} to {last}").format(first=entry["from"], last=entry["to"]))
        else:
            cancelled.append(_("the rest of {first} to {last}").format(first=entry["from"], last=entry["to"]))
            kept.append({**entry, "to": max(today, date.fromisoformat(entry["from"])).isoformat(),
                         "end": ctx.now.isoformat()})
    settings["vacations"] = kept
    return cancelled


# --- timezone ---------------------------------------------------------------------------------------------

def do_timezone(ctx: MailContext, command: Command) -> None:
    settings = _settings(ctx)
    name = command.args.get("name")
    if name:
        found = dl.find_timezone(name)
        if found is None:
            raise CommandFailed(_("I do not know the timezone {name!r}: write it as Area/City, like "
                                  "Europe/Bratislava or America/New_York (or UTC).").format(name=name))
        settings["timezone"] = found
        ctx.tx.set_player(ctx.mail.from_addr, settings)
        ctx.outcomes.append(f"timezone {found}")
    zone = dl.player_zone(settings)
    ctx.reply(Section(title=_("Your timezone: {zone}").format(zone=zone.key), lines=[
        _("It is now {when} there.").format(when=dl.format_when(ctx.now, zone)), *_zone_lines(ctx, settings),
        *_deadline_lines(ctx, ctx.mail.from_addr, settings)]))


# --- timecontrol ------------------------------------------------------------------------------------------

def _created_in_this_mail(ctx: MailContext) -> str | None:
    for game_id in reversed(ctx.reply_games):
        held = ctx.touched.get(game_id)
        if held and held[0].status == "invited" and held[0].created_at == ctx.now:
            return game_id
    return None


def do_timecontrol(ctx: MailContext, command: Command) -> None:
    just_created = _created_in_this_mail(ctx)
    game_id = command.game or just_created or ctx.context_game
    if not game_id:
        raise CommandFailed(_("which game? {usage}").format(usage=_(USAGE_TIMECONTROL)))
    loaded = ctx.load(game_id)
    if loaded is None:
        raise CommandFailed(_("there is no game {id}. Send 'games' for the list of yours.").format(
            id=game_id))
    row, _state = loaded
    grace = ctx.config.deadlines.grace_reminder
    said = command.args.get("said")
    if not said:
        control = dl.time_control(row.record, ctx.config.deadlines)
        lines = [_("Time control of {id}: {control}.").format(
            id=row.id, control=dl.describe_time_control(control, grace))]
        lines += _game_deadline_lines(ctx, row)
        ctx.reply(Section(title=_("Time control of {id}").format(id=row.id), lines=lines), row.id)
        return
    moderator = _is_moderator(ctx, command)
    seat: Seat | None = None
    if row.status not in ("invited", "active"):  # for moderators too: there is no clock left to set
        raise CommandFailed(_("game {id} is {status}; its time control no longer matters.").format(
            id=row.id, status=status_word(row.status)))
    if not moderator:
        if row.status != "invited":
            raise CommandFailed(_("game {id} is {status}: the time control is chosen before the other "
                                  "players accept; now only a moderator can change it.").format(
                id=row.id, status=status_word(row.status)))
        seat = next((s for s in row.seats if s.email == ctx.mail.from_addr), None)
        if seat is None or not seat.accepted:
            raise CommandFailed(_(
                "only the player who proposed game {id} can choose its time control.").format(id=row.id))
        if game_id != just_created:
            seat = authenticate(ctx, row, command)
        if any(s.accepted for s in row.seats if s.seat != seat.seat):
            raise CommandFailed(_(
                "another player has already accepted game {id} on its present terms.").format(id=row.id))
    try:
        config = ctx.config.deadlines
        chosen = tc.merge(dl.time_control(row.record, config), said, config=config)
        if said.get("policy") == "notify":
            _somebody_decides(ctx, chosen)
        dl.set_time_control(row, chosen, ctx.now if row.status == "active" else None)
    except dl.ClockError as exc:
        raise CommandFailed(str(exc)) from None
    ctx.tx.save_game(row)
    control = dl.time_control(row.record, ctx.config.deadlines)

    def note() -> str:
        return _("Time control: {control}.").format(control=dl.describe_time_control(control, grace))
    lines = [_("Time control of {id}: {control}.").format(id=row.id,
                                                          control=dl.describe_time_control(control, grace))]
    if row.status == "active":
        lines.append(_("It applies from the next move; the present deadline stays."))
    ctx.reply(Section(title=_("Time control of {id} changed").format(id=row.id), lines=lines), row.id)
    ctx.outcomes.append(f"timecontrol {row.id}")
    if game_id == just_created:
        for planned in ctx.planned:  # the invitations of this very mail, not yet composed
            if planned.game_id == row.id and planned.sections:
                with ctx.speaking_to(planned.to):
                    planned.sections[0].lines.append(note())
        return
    names = game_names(ctx.tx, row)
    for other in row.seats:
        if other.email == ctx.mail.from_addr:
            continue
        with ctx.speaking_to(other.email):
            by = (_("A moderator") if moderator else names.get(seat.seat, seat.email) if seat
                  else ctx.mail.from_addr)
            ctx.planned.append(PlannedMail(
                to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                headline=_("{by} changed the time control of {id}").format(by=by, id=row.id),
                sections=[Section(lines=[note()])]))


def _game_deadline_lines(ctx: MailContext, row: GameRow) -> list[str]:
    zone = dl.player_zone(_settings(ctx))
    if row.deadline_at is not None and row.to_move:
        return [_("{seat} to move by {when}.").format(seat=seat_label(row.game, row.to_move),
                                                      when=dl.format_when(row.deadline_at, zone, ctx.now))]
    if dl.is_paused(row):
        return [_("The clock is paused.")]
    return []


# --- hooks ------------------------------------------------------------------------------------------------

def on_game_saved(ctx: MailContext, row: GameRow, state: State) -> None:
    """A new turn restarts the clock for the seat to move, after charging the turn that ended (to
    the time the mover's mail arrived); the end of the game stops it."""
    config = ctx.config.deadlines
    if "time_control" not in row.record:
        row.record["time_control"] = dl.default_time_control(config)
    mover = state.to_move
    if row.status != "active" or state.is_over or mover is None:
        dl.stop_clock(row, ctx.now, ctx.received)
        return
    running = row.record.get("clock") or {}
    if running.get("ply") == dl.current_ply(row.record) and running.get("seat") == mover:
        return  # the same turn (e.g. a save that changed no position): the clock keeps running
    dl.close_turn(row, ctx.now, ctx.received)
    dl.start_clock(row, mover, ctx.now, dl.seat_zone(ctx.tx, row, mover),
                   dl.seat_vacations(ctx.tx, row, mover))


def on_game_ended(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str],
                  note: Callable[[], list[str]]) -> None:
    """A game that ended without a move (a resignation, an agreement, a moderator): its clock's
    last turn ends, so the record's clock log is complete."""
    if dl.running(row) is not None:
        dl.stop_clock(row, ctx.now)
        ctx.tx.save_game(row)


PAUSED = {
    "moderator": N_("No deadline for now: your clock is stopped (a moderator paused the game). You will "
                    "be told when it runs again."),
    "tournament": N_("No deadline for now: your clock is stopped (the tournament is paused). You will "
                     "be told when it runs again."),
    "bounce": N_("No deadline for now: your clock is stopped (mail to a player of this game bounces)."),
}


def on_board_sent(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str]) -> None:
    """The "your move" mail says by when, and how much time the player has; while the clock is
    paused, that it is stopped, and why."""
    paused = dl.pause_reason(row) if row.deadline_at is None else None
    if state.is_over or (row.deadline_at is None and paused is None):
        return
    for planned in ctx.planned:
        if planned.game_id == row.id and planned.seat == state.to_move and planned.sections:
            zone = dl.player_zone(ctx.tx.get_player(planned.to))
            with ctx.speaking_to(planned.to):
                planned.sections[0].lines.append(
                    _(PAUSED.get(paused, PAUSED["moderator"])) if paused is not None
                    else _("Deadline for your move: {when}.").format(
                        when=dl.format_when(row.deadline_at, zone, ctx.now)))
                bank = dl.bank_line(row, ctx.now, zone)
                if bank:
                    planned.sections[0].lines.append(bank)


def settings_shown(ctx: MailContext) -> list[str]:
    """``settings`` shows the player's timezone (set with ``timezone``, not ``set``, but theirs all
    the same) and what is left of the year's vacation allowance."""
    settings = _settings(ctx)
    days_a_year = ctx.config.deadlines.vacation_days_per_year
    if days_a_year <= 0:
        return _zone_lines(ctx, settings)
    year = ctx.now.astimezone(dl.player_zone(settings)).year
    vacation, timeout, left = allowance.summary(ctx.tx, ctx.mail.from_addr, year, days_a_year, settings)
    return [*_zone_lines(ctx, settings), ngettext(
        "Vacation allowance {year}: {left} of {allowance} day left ({vacation} on vacation, {timeout} spent "
        "when your time ran out). See: vacation",
        "Vacation allowance {year}: {left} of {allowance} days left ({vacation} on vacation, {timeout} spent "
        "when your time ran out). See: vacation", days_a_year).format(
        year=year, left=left, allowance=days_a_year, vacation=vacation, timeout=timeout)]


def games_listing(ctx: MailContext) -> list[Section]:
    settings = _settings(ctx)
    lines = _deadline_lines(ctx, ctx.mail.from_addr, settings)
    if not lines:
        return []
    if dl.on_vacation(settings, ctx.now):
        lines.append(_("You are on vacation: your clocks are stopped until it ends."))
    return [Section(title=_("Your deadlines"), lines=[*lines, *_zone_lines(ctx, settings)])]


def time_help() -> str:
    """``help time``: the clock kinds, the allowance and reliability."""
    first, *items = [_(text) for text in TIME_HELP]
    return "\n\n".join([textwrap.fill(first, 76), *(textwrap.fill(item, 76, initial_indent="  ",
                                                                  subsequent_indent="    ")
                                                    for item in items)])


HELP_TOPICS["time"] = time_help
register_verb("vacation", USAGE_VACATION, parse_vacation)
register_verb("timezone", USAGE_TIMEZONE, parse_timezone)
register_verb("timecontrol", USAGE_TIMECONTROL, parse_timecontrol)
register_handler("vacation", do_vacation)
register_handler("timezone", do_timezone)
register_handler("timecontrol", do_timecontrol)
hooks.GAME_SAVED.append(on_game_saved)
hooks.BOARD_SENT.append(on_board_sent)
hooks.GAME_ENDED.append(on_game_ended)
hooks.GAMES_LISTING.append(games_listing)
hooks.SETTINGS_SHOWN.append(settings_shown)
hooks.NEW_GAME_OPTIONS.append(take_time_option)

__all__ = ["do_timecontrol", "do_timezone", "do_vacation", "games_listing", "on_board_sent",
           "on_game_saved", "parse_timecontrol", "parse_timezone", "parse_vacation", "take_time_option"]
