"""Starting games by mail: ``new`` (a challenge), ``accept``, ``decline`` and ``rematch``.

A game exists from the challenge on, with every seat's token; it starts when every invited player
has accepted. The first mail of a game fixes its subject, so the whole game is one thread.
"""

from __future__ import annotations

import random
import secrets
from typing import Any

from engine import EngineError, Game, State, get_game
from engine.options import parse_option_words
from engine.registry import UnknownGameError
from pbem.clocks.control import invitation_line, normalize
from pbem.commands.parsing import Command
from pbem.i18n import LANGUAGES, N_, _, speaking, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import computer, hooks
from pbem.processing.context import EVENT, TURN, MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    game_names,
    players_line,
    scores_line,
    thread_subject,
    who,
)
from pbem.processing.games import (
    CommandFailed,
    announce_position,
    authenticate,
    game_id_of,
    load_game,
    save_game,
)
from pbem.processing.handlers import register_handler
from pbem.processing.mail_names import client_name
from pbem.record import draw_chances, iso, new_record
from pbem.store.base import GameRow, Seat
from pbem.tokens import token_hash

TAP_TIP = N_("On a phone? Reply 'set mail tap': every legal move becomes a link to tap.")


def describe_options(options: dict[str, Any]) -> str:
    parts = []
    for key, value in options.items():
        if value is True:
            parts.append(key.replace("_", " "))
        elif value not in (False, None, {}) and not isinstance(value, dict):
            parts.append(f"{key.replace('_', ' ')} {value}")
        elif isinstance(value, dict) and key == "handicap":
            special = [f"{seat} reach {h.get('reach')} extra claims {h.get('extra_claims')}"
                       for seat, h in value.items() if h != {"reach": 2, "extra_claims": 0}]
            if special:
                parts.append("handicap " + "; ".join(special))
    return ", ".join(parts) or _("standard rules")


def seat_named(game: Game, word: str, seats: list[str]) -> str:
    """The seat ``as WORD`` means: its key (``black``) or its name in any of our languages
    (``Schwarz``, ``čierny``); the word itself when it names none, for the error to quote."""
    wanted = word.casefold()
    for lang in LANGUAGES:
        with speaking(lang):
            named = [seat for seat in seats if game.seat_label(seat).casefold() == wanted]
        if named:
            return named[0]
    return word


def create_game(ctx: MailContext, game_name: str, options: dict[str, Any] | None,
                option_words: list[str], people: list[str], first_seat: str | None,
                server_keys: dict[str, Any], names: dict[str, str],
                assignment: dict[str, str] | None = None, open_seats: int = 0) -> GameRow:
    """The game row, record and seats of a new challenge by ``people[0]`` (who has accepted).
    ``assignment`` (seat -> address) fixes every seat, as a rematch does. ``open_seats`` more seats
    are left for anyone to take (an open challenge): they get no row until someone joins, and the
    game's subject is fixed only then."""
    try:
        game = get_game(game_name)
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    try:
        raw = options if options is not None else parse_option_words(game, option_words)
        options = game.normalize_options(raw)
        seats = game.seat_names(len(people) + open_seats)
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    if len(set(people)) != len(people):
        raise CommandFailed(_("every player must have a different address (you cannot play yourself)."))
    if ctx.config.address in people:
        raise CommandFailed(_("{address} is the server, not a player.").format(address=ctx.config.address))
    if first_seat:
        first_seat = seat_named(game, first_seat, seats)
        if first_seat not in seats:
            raise CommandFailed(_("'as {seat}': seats are {seats}.").format(
                seat=first_seat, seats=", ".join(game.seat_label(s) for s in seats)))
        order = [first_seat] + [s for s in seats if s != first_seat]
    else:
        order = seats
    game_id = ctx.tx.next_game_id(game.id_prefix)
    rng = random.Random(secrets.randbits(64))
    setup = game.create_setup(options, rng, len(seats))
    assigned = assignment or dict(zip(order, people, strict=False))
    players = {seat: {"name": names.get(assigned[seat], ""), "email": assigned[seat]}
               for seat in seats if seat in assigned}
    record = new_record(game, options, setup, players)
    record.update(id=game_id, created_at=iso(ctx.now), **server_keys)
    seat_rows = [Seat(seat=s, email=assigned[s], name=names.get(assigned[s], ""),
                      token_hash=token_hash(ctx.token_for(game_id, s)),
                      accepted=assigned[s] == people[0]) for s in seats if s in assigned]
    row = GameRow(id=game_id, game=game.name, status="open" if open_seats else "invited", record=record,
                  seats=seat_rows, created_at=ctx.now, updated_at=ctx.now)
    computer.adopt(row)
    if not open_seats:
        thread_subject(row, game_names(ctx.tx, row))  # fixed now: the thread's one subject
    ctx.tx.insert_game(row)
    ctx.touched[game_id] = (row, game.start(options, setup))
    return row


def invite(ctx: MailContext, row: GameRow, challenger: str, note: list[str]) -> None:
    """The invitation to every seat that has not accepted, with one-tap accept and decline."""
    game = get_game(row.game)
    names = game_names(ctx.tx, row)
    control = normalize(row.record.get("time_control"), ctx.config.deadlines)
    asking = next((s for s in row.seats if s.email == challenger), None)
    who_asks = names.get(asking.seat, challenger) if asking else challenger
    for seat in row.seats:
        if seat.accepted:
            continue
        with ctx.speaking_to(seat.email):
            described = describe_options(row.record.get("options") or {})
            lines = [_("{player} invites you to a game of {game} ({options}). You would play {seat}.").format(
                         player=who_asks, game=game.title, options=described, seat=names.label(seat.seat)),
                     players_line(row, seat.seat, names)]
            lines.append(invitation_line(control))
            lines += [*(f"{who_asks}: {line}" for line in note),
                      _("To play, reply: accept {id}. To refuse: decline {id}.").format(id=row.id),
                      _("The rules and every ruling: reply 'rules {game}'.").format(game=row.game),
                      _(TAP_TIP)]
            ctx.planned.append(PlannedMail(
                to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
                headline=_("{player} invites you to {game}").format(player=who_asks, game=game.title),
                sections=[Section(lines=lines, actions=[ActionGroup("", [
                    Action(_("Accept"), f"accept {row.id}"), Action(_("Decline"), f"decline {row.id}")])])]))


def do_new(ctx: MailContext, command: Command) -> None:
    challenger = ctx.mail.from_addr
    if not challenger:
        raise CommandFailed("your mail has no From address I can answer.")
    server_keys: dict = {}
    try:
        for take in hooks.NEW_GAME_OPTIONS:
            server_keys.update(take(ctx, command))
    except EngineError as exc:
        raise CommandFailed(str(exc)) from None
    opponents, names = computer.seat_addresses(command.game or "", command.opponents)
    row = create_game(ctx, command.game or "", command.options, command.option_words,
                      [challenger, *opponents], command.seat, server_keys,
                      {**names, challenger: client_name(ctx.mail.from_name)})
    start_or_wait(ctx, row, challenger, command.note, created=True)


def start_or_wait(ctx: MailContext, row: GameRow, challenger: str, note: list[str], *,
                  created: bool) -> None:
    game = get_game(row.game)
    names = game_names(ctx.tx, row)
    mine = next(s for s in row.seats if s.email == challenger)
    waiting = [s for s in row.seats if not s.accepted]
    if not waiting:  # only computers to wait for: they accepted at once
        start_game(ctx, row, ctx.touched[row.id][1], mine)
        return
    shut = hooks.shut_out_by(ctx.tx, challenger)
    refusing = next((s for s in waiting if s.email in shut), None)
    if refusing is not None:
        declined_unseen(ctx, row, refusing)
        return
    lines = [_("{game}, {options}. You play {seat}.").format(
        game=game.title, options=describe_options(row.record.get("options") or {}),
        seat=names.label(mine.seat)),
        players_line(row, mine.seat, names), _(TAP_TIP)]
    ctx.reply(Section(lines=lines), row.id, headline=(
        _("Game {id} created: waiting for {players} to accept").format(
            id=row.id, players=", ".join(names.get(s.seat, s.email) for s in waiting))
        if created else _("Rematch {id} created").format(id=row.id)))
    invite(ctx, row, challenger, note)


def do_accept(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    names = game_names(ctx.tx, row)
    if row.status != "invited":
        raise CommandFailed(_("game {id} is {status}; there is nothing to accept.").format(
            id=row.id, status=status_word(row.status)))
    if seat.accepted:
        raise CommandFailed(_("you have already accepted game {id}.").format(id=row.id))
    seat.accepted = True
    name = client_name(ctx.mail.from_name)
    if name and not seat.name:  # the name their mail client sends, for the record as for the mails
        seat.name = name
        row.record.setdefault("players", {}).setdefault(seat.seat, {"email": seat.email})["name"] = name
        names = game_names(ctx.tx, row)
    if not all(s.accepted for s in row.seats):
        waiting = ", ".join(names.get(s.seat, s.email) for s in row.seats if not s.accepted)
        ctx.tx.save_game(row)
        ctx.reply(Section(lines=[players_line(row, seat.seat, names)]), row.id,
                  headline=_("You accepted {id}; waiting for {players}").format(id=row.id, players=waiting))
        return
    start_game(ctx, row, state, seat)


def activate(ctx: MailContext, row: GameRow, state: State) -> list[str]:
    """The game is on: its status, its start, the first draw of a game that draws (and the move
    clock, through the save's hooks); the engine's notes of the draw are returned for the mails."""
    row.status = "active"
    row.record["started_at"] = iso(ctx.now)
    notes = draw_chances(get_game(row.game), state, row.record, ctx.now)
    save_game(ctx, row, state)
    return notes


def start_game(ctx: MailContext, row: GameRow, state: State, seat: Seat) -> None:
    """Every seat has accepted (the last one is ``seat``, who gets the reply): the game starts and
    every player hears of it."""
    names = game_names(ctx.tx, row)
    notes = activate(ctx, row, state)
    ctx.outcomes.append("started")
    lines = [*notes, players_line(row, seat.seat, names), scores_line(state, seat.seat, names)]
    if state.to_move == seat.seat:
        ctx.reply(board_section(state, seat.seat, lines), row.id, kind=TURN,
                  headline=_("Your move (move 1). Game {id} has started.").format(id=row.id))
    else:
        ctx.reply(board_section(state, seat.seat, lines), row.id,
                  headline=_("Game {id} has started; {player} moves first.").format(
                      id=row.id, player=who(state.to_move, seat.seat, names)))
    announce_position(ctx, row, state, lambda: _("Game {id} has started").format(id=row.id),
                      exclude=seat.seat, notes=notes, start=True)


def do_decline(ctx: MailContext, command: Command) -> None:
    row, _state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "invited":
        raise CommandFailed(_("game {id} is {status}; only invitations can be declined.").format(
            id=row.id, status=status_word(row.status)))
    decline_for(ctx, row, seat)
    ctx.reply(None, row.id, headline=_("You declined {id}; the game is cancelled").format(id=row.id))


def decline_for(ctx: MailContext, row: GameRow, seat: Seat) -> None:
    """``seat`` declines the invitation: the game is cancelled, and every other player hears it."""
    _declined(ctx, row, seat)
    for other in row.seats:
        if other.seat != seat.seat:
            with ctx.speaking_to(other.email):
                ctx.planned.append(PlannedMail(
                    to=other.email, seat=other.seat, game_id=row.id, kind=EVENT,
                    headline=declined_headline(ctx, row, seat)))


def _declined(ctx: MailContext, row: GameRow, seat: Seat) -> None:
    row.status = "declined"
    row.updated_at = row.finished_at = ctx.now
    row.record["result"] = {"reason": "declined", "by": seat.seat, "at": iso(ctx.now)}
    ctx.tx.save_game(row)


def declined_headline(ctx: MailContext, row: GameRow, seat: Seat) -> str:
    return _("{player} declined; game {id} is cancelled").format(
        player=game_names(ctx.tx, row).get(seat.seat, seat.email), id=row.id)


def declined_unseen(ctx: MailContext, row: GameRow, seat: Seat) -> None:
    """A challenge to a player who has shut the challenger out (``hooks.shut_out``) is declined in
    their name at once, and they never see it: the challenger gets the words of any decline (a
    mature site does not reveal a block), and nobody else is invited."""
    _declined(ctx, row, seat)
    ctx.outcomes.append(f"declined for {seat.email}, who shut the challenger out")
    ctx.reply(None, row.id, headline=declined_headline(ctx, row, seat))


def do_rematch(ctx: MailContext, command: Command) -> None:
    """The same players and options, each player moved on by one seat (two players swap), so the
    one who moved second moves first."""
    row, _state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    if row.status != "over":
        raise CommandFailed(_("game {id} is {status}; a rematch follows a finished game.").format(
            id=row.id, status=status_word(row.status)))
    seats = [s.seat for s in row.seats]
    emails = [s.email for s in row.seats]
    assignment = dict(zip(seats, emails[-1:] + emails[:-1], strict=True))
    people = [seat.email, *[e for e in emails if e != seat.email]]
    server_keys = {k: row.record[k] for k in ("time_control",) if k in row.record}
    server_keys["rematch_of"] = row.id
    new_row = create_game(ctx, row.game, row.record.get("options") or {}, [], people, None,
                          server_keys, {s.email: s.name for s in row.seats}, assignment)
    start_or_wait(ctx, new_row, seat.email, [], created=False)


register_handler("new", do_new)
register_handler("accept", do_accept)
register_handler("decline", do_decline)
register_handler("rematch", do_rematch)
