"""One function per mail command of the core: playing (move, board, history, games, rules, help,
resign). Each adds to the reply and plans the mails it causes; none sends or commits anything
itself (the processor does both, in the mail's single transaction). Starting games, talking and
settings live beside it (invitations, talk, settings), registered through ``register_handler``."""

from __future__ import annotations

import hashlib
import hmac
import textwrap
from collections.abc import Callable

from engine import MoveError, State, get_game, is_move_entry, replay
from engine.registry import UnknownGameError
from pbem.clocks.players import format_when, player_zone
from pbem.commands.helptext import help_text
from pbem.commands.parsing import Command, suggest_verbs
from pbem.i18n import _, ngettext, say, status_word
from pbem.outbox.compose import Action, ActionGroup, Section
from pbem.processing import hooks
from pbem.processing.context import CONFIRM, REPLY, TURN, MailContext
from pbem.processing.gamemail import (
    board_section,
    game_ended,
    game_names,
    local_move,
    result_headline,
    result_section,
    scores_line,
    who,
)
from pbem.processing.games import (
    CommandFailed,
    announce_end,
    announce_position,
    authenticate,
    game_id_of,
    load_game,
    refuse_if_dropped,
    save_game,
    sender_seat,
)
from pbem.record import append_move, iso, notes_again, positions

Handler = Callable[[MailContext, Command], None]


# --- reading ---------------------------------------------------------------------------------------

def do_help(ctx: MailContext, command: Command) -> None:
    topic = command.topic
    ctx.reply(Section(pre=help_text(topic)), headline=_("Help: {topic}").format(topic=topic or _("commands")))


def do_rules(ctx: MailContext, command: Command) -> None:
    """``rules`` is what people type first: the rules of the game this mail is about, else of the
    game named, else the list of games."""
    topic = command.topic
    if topic is None or command.game:
        game_id = command.game or ctx.context_game
        loaded = ctx.load(game_id) if game_id else None
        topic = loaded[0].game if loaded else None
    try:
        name = get_game(topic).name if topic else None
    except UnknownGameError:
        name = None
    text = help_text(name) if name else help_text("games")
    ctx.reply(Section(pre=text), headline=_("Rules of {game}").format(game=get_game(name).title) if name
              else _("Games"))


def do_board(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    mine = sender_seat(row)(ctx.mail.from_addr)
    viewer = mine.seat if mine else None
    names = game_names(ctx.tx, row)
    if row.status == "invited":
        waiting = ", ".join(s.email for s in row.seats if not s.accepted)
        ctx.reply(None, row.id, headline=_("Game {id} has not started: waiting for {players}").format(
            id=row.id, players=waiting))
        return
    after = command.args.get("after")
    if after is not None:
        if not 0 <= after <= state.ply:
            raise CommandFailed(_("game {id} has moves 0 to {last}; 'board {id} N' shows the position "
                                  "after move N (0: before the first move).").format(
                                      id=row.id, last=state.ply))
        game = get_game(row.game)
        record = {**row.record, "setup": game.redact_setup(row.record["setup"])}
        past = replay(game, record.get("options"), record["setup"], record["moves"], upto_ply=after)
        moves = [e for e in row.record["moves"] if is_move_entry(e)]
        last = f" ({moves[after - 1].get('seat')}: {moves[after - 1].get('move')})" if after else ""
        ctx.reply(board_section(past, viewer, [scores_line(past, viewer, names)], with_legal=False),
                  row.id, headline=_("Board of {id} after move {number}{move}").format(
                      id=row.id, number=after, move=last))
        return
    lines = [scores_line(state, viewer, names)]
    if state.is_over or row.status != "active":
        headline = _("Board of {id}: {what}").format(
            id=row.id, what=result_headline(row, state, viewer, names) if state.is_over
            else _("the game is {status}").format(status=status_word(row.status)))
    elif state.to_move == viewer:
        headline = _("Board of {id}: your move (move {number})").format(id=row.id, number=state.ply + 1)
    else:
        headline = _("Board of {id}: {player} is to move (move {number})").format(
            id=row.id, player=who(state.to_move, viewer, names), number=state.ply + 1)
    ctx.reply(board_section(state, viewer, lines, with_legal=row.status == "active",
                            ended=game_ended(row)), row.id, headline=headline)


def do_history(ctx: MailContext, command: Command) -> None:
    """Every move, numbered once, one per line (moderator actions in between, as the record has
    them)."""
    row, _state = load_game(ctx, game_id_of(ctx, command))
    names = game_names(ctx.tx, row)
    mine = sender_seat(row)(ctx.mail.from_addr)
    lines, number = [], 0
    before = positions(row.record, get_game(row.game))  # each move is shown in the reader's words
    for entry in row.record["moves"]:
        if "drop" in entry:
            lines.append("     " + _("{seat} left the game ({reason})").format(
                seat=names.label(entry["drop"]), reason=entry.get("reason", _("dropped"))))
        elif is_move_entry(entry):
            number += 1
            seat = who(entry.get("seat"), mine.seat if mine else None, names)
            marks = [_("(queued)")] if entry.get("queued") else []
            marks += [_("(automatic)")] if entry.get("automatic") else []
            move = local_move(next(before), str(entry.get("move")))
            lines.append(f"{number:>4}. {seat:<20} {' '.join([move, *marks])}")
    text = "\n".join(lines) if lines else _("No moves yet.")
    ctx.reply(Section(pre=text), row.id, headline=ngettext("History of {id}: {n} move",
                                                           "History of {id}: {n} moves", number).format(
        id=row.id, n=number))


def do_games(ctx: MailContext, command: Command) -> None:
    email = ctx.mail.from_addr
    rows = ctx.tx.games_for_email(email)
    zone = player_zone(ctx.tx.get_player(email))  # deadlines in the reader's time, as every mail has them
    blocks = []
    for row in rows:
        if row.status == "declined" and any(hooks.shut_out(ctx.tx, email, s.email) for s in row.seats):
            continue  # an invitation from an address the reader blocks: they never see it
        names = game_names(ctx.tx, row)
        mine = sender_seat(row)(email)
        reader = mine.seat if mine else None
        others = [names.get(s.seat, s.seat) for s in row.seats if s.seat != reader]
        title = _("{id}  {game} vs {players}").format(
            id=row.id, game=get_game(row.game).title, players=", ".join(others) or _("anyone"))
        if row.status == "active":
            turn = (_("your move") if row.to_move == reader
                    else _("{player} to move").format(player=who(row.to_move, reader, names)))
            if row.deadline_at:
                turn += "\n      " + _("deadline {when}").format(
                    when=format_when(row.deadline_at, zone, ctx.now))
        elif row.status == "invited":
            turn = _("waiting for {seats}").format(
                seats=", ".join(names.label(s.seat) for s in row.seats if not s.accepted))
        elif row.status == "open":
            turn = _("an open challenge, waiting for players (withdraw {id})").format(id=row.id)
        elif row.status == "over":
            loaded = ctx.load(row.id)
            turn = result_headline(row, loaded[1], reader, names) if loaded else status_word("over")
        else:
            turn = status_word(row.status)
        block = title + "\n      " + _("you play {seat}; {state}").format(
            seat=names.label(reader) if reader else "-", state=turn)
        blocks.append("\n".join(_within(line) for line in block.split("\n")))
    if blocks:
        ctx.reply(Section(pre="\n".join(blocks)), headline=ngettext(
            "Your games: {n}", "Your games: {n}", len(blocks)).format(n=len(blocks)))
    else:
        ctx.reply(Section(lines=[_("Start one with: new alien-city with FRIEND@EXAMPLE.ORG")]),
                  headline=_("You have no games"))
    for hook in hooks.GAMES_LISTING:
        for section in hook(ctx):
            ctx.reply(section)


def _within(line: str) -> str:
    """A line of the games listing (a table the mail does not wrap) within 78 columns: a long list
    of opponents or a long result goes on under the listing's indent."""
    if len(line) <= 78:
        return line
    return "\n".join(textwrap.wrap(line, 78, subsequent_indent=" " * 8, break_on_hyphens=False))


# --- playing ---------------------------------------------------------------------------------------

#: The commands a game waiting for its players, or over, takes instead of a move.
WHAT_FITS = {"invited": ("accept", "decline", "rules"), "open": ("join", "withdraw", "challenges"),
             "over": ("rematch", "history", "board", "record")}


def do_move(ctx: MailContext, command: Command) -> None:
    game_id = game_id_of(ctx, command)
    row, state = load_game(ctx, game_id)
    seat = authenticate(ctx, row, command)
    names = game_names(ctx.tx, row)
    if row.status != "active":
        words = command.line.split()  # "acept": a command mistyped, of those that fit the game now
        fitting = WHAT_FITS.get(row.status, ())
        near = [v for v in suggest_verbs(words[0]) if v in fitting] if len(words) == 1 else []
        hint = " " + _("Did you mean {words}?").format(words=_(" or ").join(near)) if near else ""
        raise CommandFailed(_("game {id} is {status}; no moves can be made.").format(
            id=row.id, status=status_word(row.status)) + hint)
    expected = command.ply if command.ply is not None else ctx.expected_ply.pop(game_id, None)

    def current(position: State = state) -> Section:
        """The board as it is, for a refusal only: most moves are applied and never need it."""
        return board_section(position, seat.seat, [scores_line(position, seat.seat, names)])

    if expected is not None and expected != state.ply:
        raise CommandFailed(
            _("your mail answers the board of move {meant}, but game {id} is at move {now}: the move "
              "was not applied. Here is the board now.").format(meant=expected + 1, id=row.id,
                                                                now=state.ply + 1), current(),
            headline=_("Not applied: {move!r} was meant for move {meant}, the game is at move {now}").format(
                move=command.move, meant=expected + 1, now=state.ply + 1))
    refuse_if_dropped(row, state, seat)
    if state.to_move != seat.seat:
        raise CommandFailed(_("it is {player}'s turn, not yours.").format(
            player=who(state.to_move, seat.seat, names)), current(),
            headline=_("Not applied: it is {player}'s turn").format(
                player=names.get(state.to_move or "", state.to_move)))
    game = get_game(row.game)
    before, start = state.copy(), len(row.record["moves"])
    try:
        canonical, notes = append_move(game, state, row.record, command.move or "", ctx.now, seat.seat)
    except MoveError as exc:
        reason = exc.message.split(": ")[0] if len(exc.message) > 60 else exc.message
        raise CommandFailed(_("{move!r} was not applied: {reason}").format(move=command.move, reason=exc),
                            current(before), headline=_("Not applied: {move}: {reason}").format(
                                move=command.move, reason=reason)) from None
    added = row.record["moves"][start:]
    number = state.ply
    # in the same step: a queued reply of the next seat, a proposal that lapses (pbem.community)
    after = hooks.after_move(ctx, row, state, seat.seat)
    ctx.expected_ply[game_id] = state.ply  # a second move in the same mail continues from here
    save_game(ctx, row, state)
    ctx.outcomes.append(f"applied {canonical}")
    mover = names.get(seat.seat, seat.seat)
    note = [f"{mover}: {line}" for line in command.note]
    announce_position(ctx, row, state,
                      # names again per reader: a computer's name is said in the reader's language
                      lambda: _("{player} played {move}").format(
                          player=game_names(ctx.tx, row).get(seat.seat, mover),
                          move=local_move(before, canonical)),
                      exclude=seat.seat, note=note, after=after, number=number,
                      notes=(lambda: notes_again(before, added, start)) if notes else [])
    followed = "".join(f" {_('You') if s == seat.seat else names.get(s, s)} {say(what)}."
                       for s, what in after.followed)  # e.g. the mover's own move played for them
    notes = [*notes, *map(say, after.lines), *after.private.get(seat.seat, [])]
    if state.is_over:
        if followed:
            notes.insert(0, followed.strip())
        ctx.reply(board_section(state, seat.seat, notes), row.id,
                  headline=result_headline(row, state, seat.seat, names))
        ctx.reply(result_section(row, state))
        ctx.attach_record = True
        return
    lines = [*notes, scores_line(state, seat.seat, names)]
    if command.note:
        lines.insert(0, _("Your note went to {players}.").format(players=", ".join(
            who(s.seat, None, names) for s in row.seats if s.seat != seat.seat)))
    applied = _("Applied: {move} (move {number}).").format(move=canonical, number=number) + followed
    if state.to_move == seat.seat:
        again = _("Your move (move {number}).") if after.followed else _("Your move again (move {number}).")
        ctx.reply(board_section(state, seat.seat, lines), row.id, kind=TURN,
                  headline=f"{applied} {again.format(number=state.ply + 1)}")
    else:
        told = command.note or after.lines or after.private.get(seat.seat) or seat.seat in after.tell
        ctx.reply(Section(lines=lines), row.id, kind=REPLY if told else CONFIRM,  # e.g. played for them
                  headline=applied + " " + _("{player} is next.").format(
                      player=who(state.to_move, seat.seat, names)))


def resign_code(secret: bytes, game_id: str, seat: str, ply: int) -> str:
    """Four letters that confirm a resignation: tied to the position, so a confirmation found in an
    old mail does nothing once the game has moved on."""
    digest = hmac.new(secret, f"resign:{game_id}:{seat}:{ply}".encode(), hashlib.sha256).hexdigest()
    return "".join("ABCDEFGHJKLMNPQRSTUVWXYZ"[int(digest[i:i + 2], 16) % 24] for i in range(0, 8, 2))


def do_resign(ctx: MailContext, command: Command) -> None:
    """One word never ends a game: ``resign GAME`` says what would happen and the exact line that
    confirms it."""
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    names = game_names(ctx.tx, row)
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; only running games can be resigned.").format(
            id=row.id, status=status_word(row.status)))
    refuse_if_dropped(row, state, seat)
    winners = [s.seat for s in row.seats if s.seat != seat.seat and s.seat not in state.dropped_seats]
    code = resign_code(ctx.secret, row.id, seat.seat, state.ply)
    line = f"resign {row.id} confirm {code}"
    given = command.args.get("code")
    if given != code:
        others = ", ".join(who(w, seat.seat, names) for w in winners)
        first = (_("That confirmation is out of date or mistyped; here is the current one.")
                 if given else _("Nothing has changed yet."))
        ctx.reply(Section(lines=[
            first, ngettext("Resigning ends game {id} at once: you lose, and {players} wins. It cannot "
                            "be taken back.", "Resigning ends game {id} at once: you lose, and {players} "
                            "win. It cannot be taken back.", len(winners)).format(id=row.id, players=others),
            _("To resign, send this line: {line}").format(line=line)],
            actions=[ActionGroup("", [Action(_("Resign now"), line)])]),
            row.id, headline=_("To resign {id}, confirm with: {line}").format(id=row.id, line=line))
        return
    row.status = "over"
    row.to_move = None
    row.updated_at = row.finished_at = ctx.now
    row.record["result"] = {"reason": "resigned", "resigned": seat.seat, "winners": winners,
                            "at": iso(ctx.now)}
    ctx.tx.save_game(row)
    ctx.touched[row.id] = (row, state)
    ctx.outcomes.append(f"resigned by {seat.seat}")
    ctx.reply(result_section(row, state), row.id, headline=result_headline(row, state, seat.seat, names))
    ctx.attach_record = True
    announce_end(ctx, row, state, exclude=seat.seat)


HANDLERS: dict[str, Handler] = {
    "help": do_help, "rules": do_rules, "games": do_games, "board": do_board, "history": do_history,
    "move": do_move, "resign": do_resign,
}


def register_handler(verb: str, handler: Handler) -> None:
    """Feature modules add their commands here (and their words with commands.register_verb)."""
    HANDLERS[verb] = handler
