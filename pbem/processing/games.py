"""What every command that touches a game shares: finding the game, checking who wrote, saving a
changed position and telling the players. Core handlers and feature modules (observers, deadlines,
moderators) use these, so a game is saved and announced the same way whoever changed it."""

from __future__ import annotations

from collections.abc import Callable

from engine import State
from pbem.commands.parsing import Command
from pbem.i18n import Text, _, reader, say
from pbem.outbox.compose import Section
from pbem.processing import hooks
from pbem.processing.context import BOARD, EVENT, TURN, MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    game_names,
    result_headline,
    result_section,
    scores_line,
    seat_label,
    who,
)
from pbem.record import iso
from pbem.store.base import GameRow, Seat
from pbem.tokens import address_token, seat_token, split_reply_tag, token_hash


class CommandFailed(Exception):
    """A command that cannot be carried out; the message goes into the reply, and opens it (the
    inbox preview) as "Not done: ..." unless ``headline`` says it better."""

    def __init__(self, message: str, *extra: Section, headline: str | None = None):
        super().__init__(message)
        self.message = message
        self.extra = list(extra)
        self.headline = headline


def refuse_if_dropped(row: GameRow, state: State, seat: Seat) -> None:
    """A seat dropped at a deadline no longer acts in its game (moves, resigning, proposals,
    queued moves): one refusal for all of them."""
    if seat.seat in state.dropped_seats:
        raise CommandFailed(_("you were dropped from game {id} at a deadline; it goes on without you."
                              ).format(id=row.id))


class AuthFailed(Exception):
    """From address and token do not match a seat; the sender gets no reply."""

    def __init__(self, game_id: str, seat: str | None):
        super().__init__(game_id)
        self.game_id = game_id
        self.seat = seat


def game_id_of(ctx: MailContext, command: Command) -> str:
    game_id = command.game or ctx.context_game
    if not game_id:
        raise CommandFailed(_("which game? Write '{verb} GAME' (see 'games' for yours).").format(
            verb=command.verb))
    return game_id


def load_game(ctx: MailContext, game_id: str):
    loaded = ctx.load(game_id)
    if loaded is None:
        raise CommandFailed(_("there is no game {id}. Send 'games' for the list of yours.").format(
            id=game_id))
    return loaded


def sender_seat(row: GameRow) -> Callable[[str], Seat | None]:
    def find(email: str) -> Seat | None:
        return next((s for s in row.seats if s.email == email), None)
    return find


reply_key = split_reply_tag  # the store reads the same tag at intake (pbem.store.common)


def mail_tokens(ctx: MailContext, command: Command | None = None) -> list[str]:
    tags = [*ctx.mail.plus_tokens, ctx.mail.body_token, command.token if command else None]
    return [reply_key(t)[0] for t in tags if t]


def address_proven(ctx: MailContext, command: Command | None = None) -> bool:
    """Whether the mail carries a token given only to its From address: the address token, or a
    token of a seat registered to that address."""
    tokens = mail_tokens(ctx, command)
    sender = ctx.mail.from_addr
    if address_token(ctx.secret, sender) in {t.strip().lower() for t in tokens}:
        return True
    for token in tokens:
        found = ctx.tx.seat_by_token_hash(token_hash(token))
        if found and found[1].email == sender:
            return True
    return False


def authenticate(ctx: MailContext, row: GameRow, command: Command) -> Seat:
    """From must be the seat's registered address AND the token (Reply-To plus-address, a 'token'
    line or the turn file) must be that seat's, or the address token of that address (a reply to
    a mail about several games, like the daily digest)."""
    tokens = mail_tokens(ctx, command)
    hashes = {token_hash(t) for t in tokens}
    named: Seat | None = None
    for seat in row.seats:
        if seat.token_hash in hashes:
            named = seat
            if seat.email == ctx.mail.from_addr:
                return seat
    mine = sender_seat(row)(ctx.mail.from_addr)
    if mine is not None and address_token(ctx.secret, mine.email) in {t.strip().lower() for t in tokens}:
        return mine
    retired = retired_seat(ctx, row, tokens)
    if retired is not None:
        raise CommandFailed(
            _("the address you replied to carries an old token of {seat} in game {id}: that seat has a "
              "new token since (its player moved to another address, or asked for a new one). Nothing "
              "was applied. Reply to the newest mail of the game, which went to the seat's address."
              ).format(seat=seat_label(row.game, retired.seat), id=row.id),
            headline=_("Not done: an old token of {id}").format(id=row.id))
    raise AuthFailed(row.id, (named or mine).seat if (named or mine) else None)


def retired_seat(ctx: MailContext, row: GameRow, tokens: list[str]) -> Seat | None:
    """The seat whose earlier token (a generation before the current one) the mail carries: such a
    mail is refused with a notice that says so, rather than ignored like a forgery."""
    wanted = {t.strip().lower() for t in tokens}
    for seat in row.seats:
        generation = int((row.record.get("players") or {}).get(seat.seat, {}).get("token_generation", 0))
        if any(seat_token(ctx.secret, row.id, seat.seat, g) in wanted for g in range(generation)):
            return seat
    return None


def rekey_seat(ctx: MailContext, row: GameRow, seat: Seat) -> int:
    """A new token for ``seat``: the generation in the record goes up, so every earlier token of the
    seat stops working at once (and is recognised as old). Returns the new generation."""
    info = row.record.setdefault("players", {}).setdefault(seat.seat, {})
    generation = int(info.get("token_generation", 0)) + 1
    info["token_generation"] = generation
    seat.token_hash = token_hash(seat_token(ctx.secret, row.id, seat.seat, generation))
    return generation


def save_game(ctx: MailContext, row: GameRow, state: State) -> None:
    row.to_move = None if state.is_over else state.to_move
    row.updated_at = ctx.now
    if state.is_over and row.status == "active":
        row.status = "over"
        row.finished_at = ctx.now
        score = state.score()
        result = {"reason": "scored", "totals": score.totals, "winners": score.winners, "at": iso(ctx.now)}
        if state.dropped_seats:
            # players dropped at a deadline come after everyone who played to the end, the last one
            # dropped first; the engine's winners already leave them out
            playing = [s for s in score.totals if s not in state.dropped_seats]
            result["ranking"] = [*sorted(playing, key=lambda s: -score.totals[s]),
                                 *reversed(state.dropped_seats)]
        row.record.setdefault("result", result)
    for hook in hooks.GAME_SAVED:
        hook(ctx, row, state)
    ctx.tx.save_game(row)
    ctx.touched[row.id] = (row, state)


def announce_position(ctx: MailContext, row: GameRow, state: State, event: Text, *,
                      exclude: str | None = None, note: list[str] | None = None,
                      notes: list[str] | Callable[[], list[str]] | None = None, start: bool = False,
                      after: hooks.AfterMove | None = None, number: int | None = None) -> None:
    """After a change of position, each player but ``exclude`` (who gets the reply to their own mail)
    hears what they need: the seat to move its board and legal moves ("your move"), a waiting seat
    the board (sent only to those who asked for every move), everyone the result at the end.

    ``event`` is what happened, in a few words ("Bo played dome blue D5"), with the move's
    ``number`` for those who wait; the headline puts "Your move" first, so the inbox preview
    shows it. ``notes`` are the engine's announcements (skipped
    turns, the tile drawn); ``note`` is what the mover (``exclude``) wrote to the others: it reaches
    no reader who has shut the mover out (``hooks.shut_out``). At the ``start`` every
    player hears of it. Players dropped from the game hear only the end. Observers follow through
    the BOARD_SENT hook. ``after`` is what the move's hooks added (a queued reply played after it, a
    proposal that lapsed). ``event`` and ``notes`` may be functions: they are then written anew in
    each reader's language."""
    after = after or hooks.AfterMove()
    names = game_names(ctx.tx, row)
    author = next((s.email for s in row.seats if s.seat == exclude), None)

    def notes_now() -> list[str]:
        return notes() if callable(notes) else list(notes or [])

    def talk() -> list[str]:
        """The mover's note, unless the reader (``speaking_to``) has shut the mover out."""
        return [] if not note or hooks.shut_out(ctx.tx, reader(), author) else list(note)

    if state.is_over:
        def end_note() -> list[str]:
            """For each reader of the result (``speaking_to``): a player's own lines too."""
            done = say(event) + "".join(f"; {names.get(s, s)} {say(what)}" for s, what in after.followed)
            before = [f"{done[:1].upper()}{done[1:]}."] if after.followed else []
            mine = next((s.seat for s in row.seats if s.email == reader()), None)
            return [*before, *notes_now(), *map(say, after.lines), *after.private.get(mine or "", []),
                    *talk()]
        announce_end(ctx, row, state, exclude=exclude, note=end_note)
        return
    for seat in row.seats:
        if seat.seat == exclude or seat.seat in state.dropped_seats:
            continue
        with ctx.speaking_to(seat.email):
            lines = [*talk(), *notes_now(), *map(say, after.lines), *after.private.get(seat.seat, [])]
            said = say(event)
            you = _("you")
            happened = said + "".join(f"; {you if s == seat.seat else names.get(s, s)} {say(what)}"
                                      for s, what in after.followed)
            if state.to_move == seat.seat:
                first = _("Your move (move {number}). {happened}.").format(number=state.ply + 1,
                                                                           happened=happened)
                kind = TURN
            else:
                told_here = (_("{event} (move {number})").format(event=said, number=number)
                             + happened[len(said):] if number else happened)
                first = _("{happened}; {player} is to move.").format(
                    happened=told_here, player=who(state.to_move, seat.seat, names))
                told = start or seat.seat in after.tell or bool(after.private.get(seat.seat))
                kind = EVENT if told else BOARD
            lines.append(scores_line(state, seat.seat, names))
            ctx.planned.append(PlannedMail(
                to=seat.email, seat=seat.seat, game_id=row.id, kind=kind, headline=first,
                sections=[board_section(state, seat.seat, lines)]))
    def public() -> str:
        return (_("{event} (move {number})").format(event=say(event), number=number) if number
                else say(event)) + "".join(f"; {names.get(s, s)} {say(what)}" for s, what in after.followed)
    for hook in hooks.BOARD_SENT:
        hook(ctx, row, state, public)


def announce_end(ctx: MailContext, row: GameRow, state: State, *, exclude: str | None = None,
                 note: list[str] | Callable[[], list[str]] | None = None) -> None:
    """Every player (but ``exclude``) and every observer learns how the game ended, whatever ended
    it (the last move, a resignation, a forfeit, a moderator), with the record attached."""
    names = game_names(ctx.tx, row)

    def lines() -> list[str]:
        return note() if callable(note) else list(note or [])

    for seat in row.seats:
        if seat.seat == exclude:
            continue
        with ctx.speaking_to(seat.email):
            ctx.planned.append(PlannedMail(
                to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT, attach_record=True,
                headline=result_headline(row, state, seat.seat, names),
                sections=[board_section(state, seat.seat, lines(), with_legal=False, ended=True),
                          result_section(row, state)]))
    for hook in hooks.GAME_ENDED:
        hook(ctx, row, state, lambda: result_headline(row, state, None, names), lines)
