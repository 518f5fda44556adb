"""Open challenges: ``new GAME [OPTIONS] open [players N] [rating LOW-HIGH] [as SEAT]`` posts a game
anyone may take, ``challenges [GAME-NAME]`` lists them, ``join GAME`` takes a seat, ``withdraw GAME``
(by its author) takes it down; the scheduler lets it expire after ``[challenges] open_days``.

Representation: an open challenge is a game row with status ``open``. It has its id, options, setup,
time control and the author's seat (and token) from the start; the seats nobody has taken yet have
no row, and ``record["open"]`` says how many players it waits for, the rating range it asks for and
when it expires. When the last seat is taken the game starts like an accepted invitation (status
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
from pbem.commands.parsing import Command, CommandError, game_verb_parser, register_verb
from pbem.community.agreements import withdraw_proposal
from pbem.community.archive_commands import finished_games
from pbem.community.standings import INITIAL, compute
from pbem.i18n import N_
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import EVENT, MailContext, PlannedMail
from pbem.processing.gamemail import game_names, thread_subject
from pbem.processing.games import CommandFailed, address_proven, authenticate, game_id_of, load_game
from pbem.processing.handlers import register_handler
from pbem.processing.invitations import create_game, describe_options, do_new, start_game
from pbem.record import iso
from pbem.store.base import GameRow, Seat, Tx
from pbem.tokens import token_hash

USAGE_CHALLENGES = N_("challenges [GAME-NAME]   (open challenges anyone may join)")
USAGE_JOIN = N_("join GAME   (take a seat in an open challenge)")
_RATING = re.compile(r"^(\d{1,4})(?:-|\.\.|–)(\d{1,4})$")


def parse_challenges(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    if len(rest) > 1:
        return CommandError(line, f"challenges takes at most a game name: {USAGE_CHALLENGES}")
    if not rest:
        return Command("challenges", line)
    try:
        return Command("challenges", line, args={"game": get_game(rest[0].lower()).name})
    except UnknownGameError as exc:
        return CommandError(line, f"{exc}. {USAGE_CHALLENGES}")


# --- posting -----------------------------------------------------------------------------------------

def _take(words: list[str], key: str) -> tuple[str | None, list[str]]:
    """``key VALUE`` out of the option words."""
    lowered = [w.lower() for w in words]
    if key not in lowered:
        return None, words
    at = lowered.index(key)
    if at + 1 >= len(words):
        raise CommandFailed(f"'{key}' needs a value: new GAME open players N rating LOW-HIGH")
    return words[at + 1], words[:at] + words[at + 2:]


def _open_terms(command: Command, game_name: str) -> tuple[int, list[int] | None]:
    """``players N`` and ``rating LOW-HIGH``, removed from the option words."""
    try:
        game = get_game(game_name)
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    count, command.option_words = _take(command.option_words, "players")
    rating, command.option_words = _take(command.option_words, "rating")
    players = game.min_players
    if count is not None:
        if not count.isdigit() or not game.min_players <= int(count) <= game.max_players:
            raise CommandFailed(f"{game.title} is for {game.min_players} to {game.max_players} players, "
                                f"not {count!r}: e.g. new {game.name} open players {game.max_players}")
        players = int(count)
    if rating is None:
        return players, None
    match = _RATING.match(rating)
    if match is None or int(match.group(1)) > int(match.group(2)):
        raise CommandFailed(f"a rating range is two numbers, low first, like rating 1400-1700, not "
                            f"{rating!r}")
    return players, [int(match.group(1)), int(match.group(2))]


def post(ctx: MailContext, command: Command) -> None:
    author = ctx.mail.from_addr
    server_keys: dict[str, Any] = {}
    players, rating = _open_terms(command, command.game or "")
    try:
        for take in hooks.NEW_GAME_OPTIONS:
            server_keys.update(take(command))
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    expires = ctx.now + timedelta(days=ctx.config.challenges.open_days)
    server_keys["open"] = {"players": players, "by": author, "expires_at": iso(expires)}
    if rating:
        server_keys["open"]["rating"] = rating
    row = create_game(ctx, command.game or "", command.options, command.option_words, [author],
                      command.seat, server_keys, {author: ctx.mail.from_name}, open_seats=players - 1)
    mine = row.seats[0]
    row.record["subject"] = thread_subject(row, game_names(ctx.tx, row)) + " vs anyone"
    ctx.tx.save_game(row)
    ctx.outcomes.append(f"open challenge {row.id}")
    ctx.reply(Section(lines=[
        *_describe(ctx, row), f"You would play {mine.seat}. Anyone may take a seat with: join {row.id}",
        f"You hear from me when the game starts. To take the challenge down: withdraw {row.id}"],
        actions=[ActionGroup("", [Action("Withdraw", f"withdraw {row.id}")])]), row.id,
        headline=f"Open challenge {row.id} posted: {get_game(row.game).title}, waiting for "
                 f"{players - 1} player(s)")


def _describe(ctx: MailContext, row: GameRow, ratings: dict[str, float] | None = None) -> list[str]:
    """What a challenge offers, in the words of the listing and the confirmation."""
    info = row.record.get("open") or {}
    control = row.record.get("time_control") or {}
    days = control.get("days_per_move", ctx.config.deadlines.default_days)
    lines = [f"{get_game(row.game).title} for {info.get('players', len(row.seats))} players, "
             f"{describe_options(row.record.get('options') or {})}; {days:g} day(s) per move."]
    if ratings is not None:
        author = _author(row)
        lines.append(f"By {_name(ctx.tx, author)} (rating {_rating(ratings, author.email)}); "
                     f"{len(row.seats)} of {info.get('players')} seats taken; free: "
                     + ", ".join(_free_seats(row)) + ".")
    if info.get("rating"):
        low, high = info["rating"]
        lines.append(f"For players rated {low} to {high} in {get_game(row.game).title}.")
    expires = _when(info.get("expires_at"))
    if expires:
        lines.append(f"It expires on {expires:%Y-%m-%d %H:%M} UTC unless it is full by then.")
    return lines


def _author(row: GameRow) -> Seat:
    """The seat of whoever posted the challenge (seats are kept in the game's seat order, and the
    author may have taken any of them)."""
    by = (row.record.get("open") or {}).get("by")
    return next((s for s in row.seats if s.email == by), row.seats[0])


def _name(tx: Tx, seat: Seat) -> str:
    return tx.get_player(seat.email).get("nickname") or seat.name or seat.email


def _rating(ratings: dict[str, float], email: str) -> str:
    value = ratings.get(email)
    return f"{value:.0f}" if value is not None else f"{INITIAL:.0f}, no rated games yet"


def _when(text: Any) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if isinstance(text, str) else None


def _free_seats(row: GameRow) -> list[str]:
    info = row.record.get("open") or {}
    taken = {s.seat for s in row.seats}
    seats = get_game(row.game).seat_names(int(info.get("players", len(row.seats))))
    return [s for s in seats if s not in taken]


def _ratings(ctx: MailContext, game: str) -> dict[str, float]:
    return {line.player: line.rating for line in compute(finished_games(ctx, game), game).get(game, [])}


# --- listing, joining, withdrawing -------------------------------------------------------------------

def do_challenges(ctx: MailContext, command: Command) -> None:
    rows = ctx.tx.search_games(status="open", game=command.args.get("game"))
    if not rows:
        ctx.reply(Section(lines=["Post one that anyone may join, e.g.: new alien-city open",
                                 "(options as for any new game; 'rating 1400-1700' limits who may join)"]),
                  headline="No open challenges")
        return
    ratings = {name: _ratings(ctx, name) for name in {r.game for r in rows}}
    ctx.reply(None, headline=f"Open challenges: {len(rows)}")
    for row in rows:
        lines = _describe(ctx, row, ratings[row.game])
        mine = any(s.email == ctx.mail.from_addr for s in row.seats)
        lines.append(f"This is yours: withdraw {row.id}" if mine else f"To play: join {row.id}")
        ctx.reply(Section(title=row.id, lines=lines, actions=[] if mine else [
            ActionGroup("", [Action(f"Join {row.id}", f"join {row.id}")])]))


def do_join(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    email = ctx.mail.from_addr
    if row.status != "open":
        raise CommandFailed(_closed(row))
    if any(s.email == email for s in row.seats):
        raise CommandFailed(f"you already have a seat in {row.id}"
                            + (" (it is your own challenge)." if _author(row).email == email else "."))
    if email == ctx.config.address:
        raise CommandFailed(f"{email} is the server, not a player.")
    free = _free_seats(row)
    if not free:
        raise CommandFailed(f"challenge {row.id} is full.")
    info = row.record.get("open") or {}
    if info.get("rating"):
        low, high = info["rating"]
        mine = _ratings(ctx, row.game).get(email, INITIAL)
        if not low <= round(mine) <= high:
            raise CommandFailed(f"challenge {row.id} is for players rated {low} to {high} in "
                                f"{get_game(row.game).title}; your rating is {mine:.0f}.")
    if not address_proven(ctx, command):
        line = f"join {row.id}"
        ctx.reply(Section(lines=[
            *_describe(ctx, row), "Joining starts the game for you, so I ask first: reply to this mail "
            "with the line below (or tap it). Nothing has happened yet.", f"  {line}"],
            actions=[ActionGroup("", [Action("Join", line)])]), headline=f"Confirm: {line}")
        return
    seat_name = free[0]
    row.record.setdefault("players", {})[seat_name] = {"name": ctx.mail.from_name, "email": email}
    seat = Seat(seat=seat_name, email=email, name=ctx.mail.from_name, accepted=True,
                token_hash=token_hash(ctx.token_for(row.id, seat_name, row.record)))
    order = get_game(row.game).seat_names(int(info.get("players", len(row.seats) + 1)))
    row.seats = sorted([*row.seats, seat], key=lambda s: order.index(s.seat))
    row.updated_at = ctx.now
    ctx.outcomes.append(f"{email} joined {row.id}")
    if len(free) > 1:
        ctx.tx.save_game(row)
        ctx.reply(Section(lines=_describe(ctx, row)), row.id,
                  headline=f"You joined {row.id} as {seat_name}; waiting for {len(free) - 1} more player(s)")
        return
    info["filled_at"] = iso(ctx.now)
    start_game(ctx, row, state, seat)


def _closed(row: GameRow) -> str:
    reason = (row.record.get("result") or {}).get("reason")
    if row.status == "cancelled" and reason == "expired":
        return f"challenge {row.id} expired unjoined; send 'challenges' for the open ones."
    if row.status == "cancelled" and reason == "withdrawn":
        return f"challenge {row.id} was withdrawn by its author; send 'challenges' for the open ones."
    if row.status in ("active", "over"):
        return f"challenge {row.id} is full: the game has started. Send 'challenges' for the open ones."
    return f"game {row.id} is not an open challenge (it is {row.status})."


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
        raise CommandFailed(f"only the author of challenge {row.id} can withdraw it; to leave it, ask "
                            "them (or a moderator).")
    planned = close(ctx.tx, row, ctx.now, "withdrawn")
    ctx.planned += [p for p in planned if p.to != seat.email]
    ctx.outcomes.append(f"withdrew {row.id}")
    ctx.reply(None, headline=f"Your open challenge {row.id} is withdrawn")


def close(tx: Tx, row: GameRow, now: datetime, reason: str) -> list[PlannedMail]:
    """The challenge ends unfilled (withdrawn, expired); returns the mails telling its players."""
    row.status = "cancelled"
    row.updated_at = row.finished_at = now
    row.record["result"] = {"reason": reason, "at": iso(now)}
    tx.save_game(row)
    title = get_game(row.game).title
    what = "expired before enough players joined" if reason == "expired" else "was withdrawn by its author"
    return [PlannedMail(to=s.email, kind=EVENT, subject=f"[pbem] Open challenge {row.id} {reason}",
                        headline=f"The open challenge {row.id} ({title}) {what}",
                        sections=[Section(lines=["No game was played. Send 'challenges' for the open "
                                                 "ones, or post one: new " + row.game + " open"])])
            for s in row.seats]


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
