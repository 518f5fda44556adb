"""Open challenges: ``new GAME [OPTIONS] open [players N] [rating LOW-HIGH] [reliable PERCENT]
[as SEAT]`` posts a game anyone may take, ``challenges [GAME-NAME]`` lists them, ``join GAME`` takes
a seat, ``withdraw GAME`` (by its author) takes it down; the scheduler lets it expire after
``[challenges] open_days``.

Representation: an open challenge is a game row with status ``open``. It has its id, options, setup,
time control and the author's seat (and token) from the start; the seats nobody has taken yet have
no row, and ``record["open"]`` says how many players it waits for, the rating range and the
reliability it asks for (``reliable 90``: at least 90 % of the joiner's finished games not lost on
time, see ``pbem.clocks.reliability``) and when it expires. When the last seat is taken the game
starts like an accepted invitation (status
``active``); an expired or withdrawn challenge becomes ``cancelled`` with the result's reason
``expired`` or ``withdrawn``. So the game's id, record and archive entry are the challenge's own, and
nothing moves when it starts.

A game's mails share one subject, fixed when the challenge is posted, before the other players are
known: ``[pbem ac-7] ann vs anyone``; the challenge's mails and the game's are one thread. (A
challenge that ends unfilled tells its players outside it.) Joining starts a game for the joiner
without a further question, so a
``join`` must prove its From address (a reply to any mail of the server); without that proof the
answer is the exact line to confirm, sent to that address.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any

from engine import EngineError, get_game
from engine.registry import UnknownGameError
from pbem.archive.names import person_name
from pbem.clocks import reliability
from pbem.clocks.control import describe, normalize
from pbem.commands.parsing import Command, CommandError, game_verb_parser, register_verb
from pbem.community.agreements import withdraw_proposal
from pbem.community.archive_commands import finished_games
from pbem.community.standings import INITIAL, compute
from pbem.i18n import N_, _, ngettext, speaking_to, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import game_names, seat_label, thread_subject
from pbem.processing.games import CommandFailed, address_proven, authenticate, game_id_of, load_game
from pbem.processing.handlers import register_handler
from pbem.processing.invitations import create_game, describe_options, do_new, start_game
from pbem.processing.mail_names import client_name
from pbem.record import iso
from pbem.store.base import GameRow, Seat, Tx
from pbem.store.secret import secret_in
from pbem.tokens import token_hash

USAGE_CHALLENGES = N_("challenges [GAME-NAME]   (open challenges anyone may join)")
USAGE_JOIN = N_("join GAME   (take a seat in an open challenge)")
_RATING = re.compile(r"^(\d{1,4})(?:-|\.\.|–)(\d{1,4})$")


def parse_challenges(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) > 1:
        return CommandError(line, _("challenges takes at most a game name: {usage}").format(
            usage=_(USAGE_CHALLENGES)))
    if not rest:
        return Command("challenges", line)
    try:
        return Command("challenges", line, args={"game": get_game(rest[0].lower()).name})
    except UnknownGameError as exc:
        return CommandError(line, f"{exc}. {_(USAGE_CHALLENGES)}")


# --- posting -----------------------------------------------------------------------------------------

def _take(words: list[str], key: str) -> tuple[str | None, list[str]]:
    """``key VALUE`` out of the option words."""
    lowered = [w.lower() for w in words]
    if key not in lowered:
        return None, words
    at = lowered.index(key)
    if at + 1 >= len(words):
        raise CommandFailed(_("'{key}' needs a value: new GAME open players N rating LOW-HIGH reliable "
                              "PERCENT").format(key=key))
    return words[at + 1], words[:at] + words[at + 2:]


def _open_terms(command: Command, game_name: str) -> tuple[int, list[int] | None, int | None]:
    """``players N``, ``rating LOW-HIGH`` and ``reliable PERCENT``, removed from the option words."""
    try:
        game = get_game(game_name)
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    count, command.option_words = _take(command.option_words, "players")
    rating, command.option_words = _take(command.option_words, "rating")
    reliable, command.option_words = _take(command.option_words, "reliable")
    players = game.min_players
    if count is not None:
        if not count.isdigit() or not game.min_players <= int(count) <= game.max_players:
            raise CommandFailed(_("{game} is for {low} to {high} players, not {count!r}: e.g. new {name} "
                                  "open players {high}").format(
                game=game.title, low=game.min_players, high=game.max_players, count=count, name=game.name))
        players = int(count)
    required = None
    if reliable is not None:
        digits = reliable.rstrip("%")
        if not digits.isdigit() or not 1 <= int(digits) <= 100:
            raise CommandFailed(_("'reliable' takes the share of games a player must not have lost on "
                                  "time, 1 to 100 (percent), like reliable 90, not {value!r}").format(
                value=reliable))
        required = int(digits)
    if rating is None:
        return players, None, required
    match = _RATING.match(rating)
    if match is None or int(match.group(1)) > int(match.group(2)):
        raise CommandFailed(_("a rating range is two numbers, low first, like rating 1400-1700, not "
                              "{rating!r}").format(rating=rating))
    return players, [int(match.group(1)), int(match.group(2))], required


def post(ctx: MailContext, command: Command) -> None:
    author = ctx.mail.from_addr
    server_keys: dict[str, Any] = {}
    players, rating, required = _open_terms(command, command.game or "")
    try:
        for take in hooks.NEW_GAME_OPTIONS:
            server_keys.update(take(ctx, command))
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    expires = ctx.now + timedelta(days=ctx.config.challenges.open_days)
    server_keys["open"] = {"players": players, "by": author, "expires_at": iso(expires)}
    if rating:
        server_keys["open"]["rating"] = rating
    if required:
        server_keys["open"]["reliable"] = required
    row = create_game(ctx, command.game or "", command.options, command.option_words, [author],
                      command.seat, server_keys, {author: client_name(ctx.mail.from_name)},
                      open_seats=players - 1)
    mine = row.seats[0]
    row.record["subject"] = thread_subject(row, game_names(ctx.tx, row)) + " vs anyone"
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"open challenge {row.id}")
    ctx.reply(Section(lines=[
        *_describe(ctx, row),
        _("You would play {seat}. Anyone may take a seat with: join {id}").format(
            seat=seat_label(row.game, mine.seat), id=row.id),
        _("You hear from me when the game starts. To take the challenge down: withdraw {id}").format(
            id=row.id)],
        actions=[ActionGroup("", [Action(_("Withdraw"), f"withdraw {row.id}")])]), row.id,
        headline=ngettext("Open challenge {id} posted: {game}, waiting for {n} player",
                          "Open challenge {id} posted: {game}, waiting for {n} players", players - 1).format(
            id=row.id, game=get_game(row.game).title, n=players - 1))


def _describe(ctx: MailContext, row: GameRow, ratings: dict[str, float] | None = None,
              reliable: dict[str, reliability.Reliability] | None = None,
              key: bytes | None = None) -> list[str]:
    """What a challenge offers, in the words of the listing and the confirmation; the listing
    (``ratings``) names the challenger too, with the server's ``key`` (read once for it)."""
    info = row.record.get("open") or {}
    control = normalize(row.record.get("time_control"), ctx.config.deadlines)
    count = int(info.get("players", len(row.seats)))
    lines = [_("{game} for {n} players, {options}; {control}.").format(
        game=get_game(row.game).title, n=count, options=describe_options(row.record.get("options") or {}),
        control=describe(control, ctx.config.deadlines.grace_reminder))]
    if ratings is not None:
        author = _author(row)
        record = (reliable or {}).get(author.email) or reliability.Reliability(author.email)
        rating = _rating(ratings, author.email)
        if record.finished:  # next to the rating: how reliable the challenger is
            rating = f"{rating}; {reliability.short_text(record)}"
        lines.append(_("By {player} (rating {rating}); {taken} of {n} seats taken; free: {free}.").format(
            player=_public_name(ctx, author, key if key is not None else secret_in(ctx.tx)),
            rating=rating, taken=len(row.seats), n=info.get("players"),
            free=", ".join(_free_seats(row))))
    if info.get("rating"):
        low, high = info["rating"]
        lines.append(_("For players rated {low} to {high} in {game}.").format(
            low=low, high=high, game=get_game(row.game).title))
    if info.get("reliable"):
        lines.append(_("For players who lost at most {lost} % of their finished games on time (reliable "
                       "{percent}).").format(lost=100 - int(info["reliable"]), percent=info["reliable"]))
    expires = _when(info.get("expires_at"))
    if expires:
        lines.append(_("It expires on {when} UTC unless it is full by then.").format(
            when=f"{expires:%Y-%m-%d %H:%M}"))
    return lines


def _author(row: GameRow) -> Seat:
    """The seat of whoever posted the challenge (seats are kept in the game's seat order, and the
    author may have taken any of them)."""
    by = (row.record.get("open") or {}).get("by")
    return next((s for s in row.seats if s.email == by), row.seats[0])


def _public_name(ctx: MailContext, seat: Seat, key: bytes) -> str:
    """The challenger as anyone who asks for the listing may read them: as the public site and the
    standings name players (a nickname, else a pseudonym made with the server's ``key``), never
    by their address, which they did not agree to show to strangers; "you" to themselves."""
    if seat.email == ctx.mail.from_addr:
        return _("you")
    return person_name(ctx.tx.get_player(seat.email), seat.email, key)


def _rating(ratings: dict[str, float], email: str) -> str:
    value = ratings.get(email)
    return f"{value:.0f}" if value is not None else _("{rating}, no rated games yet").format(
        rating=f"{INITIAL:.0f}")


def _when(text: Any) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None


def _free_seats(row: GameRow) -> list[str]:
    info = row.record.get("open") or {}
    taken = {s.seat for s in row.seats}
    seats = get_game(row.game).seat_names(int(info.get("players", len(row.seats))))
    return [s for s in seats if s not in taken]


def _reliability(ctx: MailContext, email: str) -> reliability.Reliability:
    return reliability.of_player(ctx.tx.games_for_email(email), email)


def _ratings(ctx: MailContext, game: str) -> dict[str, float]:
    return {line.player: line.rating for line in compute(finished_games(ctx, game), game).get(game, [])}


# --- listing, joining, withdrawing -------------------------------------------------------------------

def do_challenges(ctx: MailContext, command: Command) -> None:
    rows = ctx.tx.search_games(status="open", game=command.args.get("game"))
    shut = hooks.shut_out_by(ctx.tx, ctx.mail.from_addr)  # their challenges are not for the sender
    rows = [row for row in rows if not any(s.email in shut for s in row.seats)]
    if not rows:
        ctx.reply(Section(lines=[_("Post one that anyone may join, e.g.: new alien-city open"),
                                 _("(options as for any new game; 'rating 1400-1700' or 'reliable 90' "
                                   "limits who may join)")]),
                  headline=_("No open challenges"))
        return
    ratings = {name: _ratings(ctx, name) for name in {r.game for r in rows}}
    reliable = {author: _reliability(ctx, author) for author in {_author(r).email for r in rows}}
    reader = ctx.mail.from_addr
    record = (_reliability(ctx, reader)
              if any((r.record.get("open") or {}).get("reliable") for r in rows) else None)
    ctx.reply(None, headline=_("Open challenges: {n}").format(n=len(rows)))
    key = secret_in(ctx.tx)
    for row in rows:
        lines = _describe(ctx, row, ratings[row.game], reliable, key)
        mine = any(s.email == reader for s in row.seats)
        missed = None if mine else _missed_limit(ctx, row, reader, ratings[row.game], record)
        if mine:
            lines.append(_("This is yours: withdraw {id}").format(id=row.id))
        elif missed is not None:  # listed all the same: the reader learns what the challenge asks
            lines.append(_cannot_join(row, missed))
        else:
            lines.append(_("To play: join {id}").format(id=row.id))
        ctx.reply(Section(title=row.id, lines=lines, actions=[] if mine or missed else [
            ActionGroup("", [Action(_("Join {id}").format(id=row.id), f"join {row.id}")])]))


def _missed_limit(ctx: MailContext, row: GameRow, email: str, ratings: dict[str, float] | None = None,
                  record: reliability.Reliability | None = None
                  ) -> tuple[str, float] | tuple[str, reliability.Reliability] | None:
    """The limit of an open challenge that ``email`` is outside, with their own figure: ("rating",
    their rating in its game) or ("reliable", their record); None when they may join. ``ratings``
    and ``record``: already computed for a listing, else looked up."""
    info = row.record.get("open") or {}
    if info.get("rating"):
        low, high = info["rating"]
        mine = (ratings if ratings is not None else _ratings(ctx, row.game)).get(email, INITIAL)
        if not low <= round(mine) <= high:
            return "rating", mine
    if info.get("reliable"):
        record = record or _reliability(ctx, email)
        if record.percent < int(info["reliable"]):
            return "reliable", record
    return None


def _cannot_join(row: GameRow, missed: tuple[str, Any]) -> str:
    """The listing's line under a challenge the reader may not join, saying why."""
    kind, value = missed
    if kind == "rating":
        return _("You cannot join it: your rating in {game} is {rating}.").format(
            game=get_game(row.game).title, rating=f"{value:.0f}")
    return ngettext("You cannot join it: you lost {count} of your {n} finished game on time, so you are "
                    "{percent} % reliable.",
                    "You cannot join it: you lost {count} of your {n} finished games on time, so you are "
                    "{percent} % reliable.", value.finished).format(
        count=value.lost_on_time, n=value.finished, percent=f"{value.percent:.0f}")


def do_join(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    email = ctx.mail.from_addr
    if row.status != "open":
        raise CommandFailed(_closed(row))
    if any(s.email == email for s in row.seats):
        raise CommandFailed((_("you already have a seat in {id} (it is your own challenge).")
                             if _author(row).email == email else _("you already have a seat in {id}.")
                             ).format(id=row.id))
    if email == ctx.config.address:
        raise CommandFailed(_("{address} is the server, not a player.").format(address=email))
    shut = hooks.shut_out_by(ctx.tx, email)
    if any(s.email in shut for s in row.seats):  # not said why: a block is not revealed
        raise CommandFailed(_("challenge {id} is not open to you. Send 'challenges' for the open ones."
                              ).format(id=row.id))
    free = _free_seats(row)
    if not free:
        raise CommandFailed(_("challenge {id} is full.").format(id=row.id))
    info = row.record.get("open") or {}
    missed = _missed_limit(ctx, row, email)
    if missed is not None and missed[0] == "rating":
        low, high = info["rating"]
        raise CommandFailed(_("challenge {id} is for players rated {low} to {high} in {game}; your "
                              "rating is {rating}.").format(id=row.id, low=low, high=high,
                                                            game=get_game(row.game).title,
                                                            rating=f"{missed[1]:.0f}"))
    if missed is not None:
        record = missed[1]
        assert isinstance(record, reliability.Reliability)
        raise CommandFailed(_("challenge {id} is for players who lost at most {lost} % of their finished "
                              "games on time (reliable {required}); you lost {count} of {n} on time, so "
                              "you are {percent} % reliable. Send 'challenges' for others, or post your "
                              "own: new {game} open").format(
            id=row.id, lost=100 - int(info["reliable"]), required=info["reliable"],
            count=record.lost_on_time, n=record.finished, percent=f"{record.percent:.0f}", game=row.game))
    if not address_proven(ctx, command):
        line = f"join {row.id}"
        ctx.reply(Section(lines=[
            *_describe(ctx, row), _("Joining starts the game for you, so I ask first: reply to this mail "
                                    "with the line below (or tap it). Nothing has happened yet."),
            f"  {line}"], actions=[ActionGroup("", [Action(_("Join"), line)])]),
            headline=_("Confirm: {line}").format(line=line))
        return
    seat_name = free[0]
    name = client_name(ctx.mail.from_name)
    row.record.setdefault("players", {})[seat_name] = {"name": name, "email": email}
    seat = Seat(seat=seat_name, email=email, name=name, accepted=True,
                token_hash=token_hash(ctx.token_for(row.id, seat_name, row.record)))
    order = get_game(row.game).seat_names(int(info.get("players", len(row.seats) + 1)))
    row.seats = sorted([*row.seats, seat], key=lambda s: order.index(s.seat))
    row.updated_at = ctx.now
    ctx.outcomes.append(f"{email} joined {row.id}")
    if len(free) > 1:
        ctx.tx.save_game(row)
        ctx.reply(Section(lines=_describe(ctx, row)), row.id,
                  headline=ngettext("You joined {id} as {seat}; waiting for {n} more player",
                                    "You joined {id} as {seat}; waiting for {n} more players",
                                    len(free) - 1).format(
                      id=row.id, seat=seat_label(row.game, seat_name), n=len(free) - 1))
        return
    info["filled_at"] = iso(ctx.now)
    start_game(ctx, row, state, seat)


def _closed(row: GameRow) -> str:
    reason = (row.record.get("result") or {}).get("reason")
    if row.status == "cancelled" and reason == "expired":
        return _("challenge {id} expired unjoined; send 'challenges' for the open ones.").format(id=row.id)
    if row.status == "cancelled" and reason == "withdrawn":
        return _("challenge {id} was withdrawn by its author; send 'challenges' for the open ones.").format(
            id=row.id)
    if row.status == "active" and "open" in row.record:
        return _("challenge {id} is full: the game has started. Send 'challenges' for the open ones.").format(
            id=row.id)
    return _("game {id} is not an open challenge (it is {status}). Send 'challenges' for the open ones."
             ).format(id=row.id, status=status_word(row.status))


def do_withdraw(ctx: MailContext, command: Command) -> None:
    """``withdraw GAME``: the author takes down an open challenge; in a running game, the proposer
    takes back a proposal (pbem.community.agreements)."""
    game_id = command.game or ctx.context_game
    loaded = ctx.load(game_id) if game_id else None
    if loaded is None or loaded[0].status != "open":
        withdraw_proposal(ctx, command)
        return
    row = loaded[0]
    seat = authenticate(ctx, row, command)
    if seat is not _author(row):
        raise CommandFailed(_("only the author of challenge {id} can withdraw it; to leave it, ask them (or "
                              "a moderator).").format(id=row.id))
    planned = close(ctx.tx, row, ctx.now, "withdrawn")
    ctx.planned += [p for p in planned if p.to != seat.email]
    ctx.outcomes.append(f"withdrew {row.id}")
    ctx.reply(None, headline=_("Your open challenge {id} is withdrawn").format(id=row.id))


def close(tx: Tx, row: GameRow, now: datetime, reason: str) -> list[PlannedMail]:
    """The challenge ends unfilled (withdrawn, expired); returns the mails telling its players."""
    row.status = "cancelled"
    row.updated_at = row.finished_at = now
    row.record["result"] = {"reason": reason, "at": iso(now)}
    tx.save_game(row)
    title = get_game(row.game).title
    planned = []
    for seat in row.seats:
        with speaking_to(tx, seat.email):
            headline = (_("The open challenge {id} ({game}) expired before enough players joined")
                        if reason == "expired"
                        else _("The open challenge {id} ({game}) was withdrawn by its author")).format(
                id=row.id, game=title)
            planned.append(PlannedMail(
                to=seat.email, kind=EVENT, subject=f"[pbem] {headline}", headline=headline,
                sections=[Section(lines=[_("No game was played. Send 'challenges' for the open ones, or post "
                                           "one: new {game} open").format(game=row.game)])]))
    return planned


def expired(tx: Tx, now: datetime) -> list[str]:
    """Ids of the open challenges whose time is up, for the scheduler."""
    return [row.id for row in tx.search_games(status="open")
            if (when := _when((row.record.get("open") or {}).get("expires_at"))) and when <= now]


def new_or_open(ctx: MailContext, command: Command) -> None:
    if command.args.get("open"):
        post(ctx, command)
    else:
        _challenge(ctx, command)


_challenge = do_new
register_verb("challenges", USAGE_CHALLENGES, parse_challenges)
register_verb("join", USAGE_JOIN, game_verb_parser("join"))
register_handler("new", new_or_open)
register_handler("challenges", do_challenges)
register_handler("join", do_join)
register_handler("withdraw", do_withdraw)

__all__ = ["close", "do_challenges", "do_join", "do_withdraw", "expired", "new_or_open", "parse_challenges",
           "post"]
