"""``preview GAME MOVE``: the board, the scores and the next player's legal replies after MOVE, with
nothing applied. MOVE is a move of the seat to move: one's own, or the opponent's ("what if they
play this?", which is how a queue is planned).

It changes nothing, so it needs no token; it answers only the game's players, and only with what
they may see: where the move would be followed by a draw (the Space Truckin' tile), the replies
depend on what nobody has seen yet and are not shown. An illegal move gets the same error a real move
would get.
"""

from __future__ import annotations

from engine import MoveError
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.i18n import N_, _, status_word
from pbem.outbox.compose import Section
from pbem.processing.context import MailContext
from pbem.processing.gamemail import game_names, local_move, scores_line, who
from pbem.processing.games import CommandFailed, game_id_of, load_game, sender_seat
from pbem.processing.handlers import register_handler

USAGE = N_("preview GAME MOVE   (the board and the replies after MOVE; nothing is played)")


def parse_preview(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = line.split()[1:]
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    if not words:
        return CommandError(line, _("which move? {usage}").format(usage=_(USAGE)))
    return Command("preview", line, game=game, move=" ".join(words).strip().rstrip("."))


def do_preview(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    mine = sender_seat(row)(ctx.mail.from_addr)
    if mine is None:
        raise CommandFailed(_("you do not play in game {id}; preview is for its players.").format(id=row.id))
    if row.status != "active":
        raise CommandFailed(_("game {id} is {status}; there is no move to preview.").format(
            id=row.id, status=status_word(row.status)))
    viewer = mine.seat
    names = game_names(ctx.tx, row)
    mover = state.to_move
    trial = state.copy()
    text = command.move or ""
    try:
        move = trial.parse_move(text)
        canonical = trial.move_text(move)
        notes = trial.push(move)
    except MoveError as exc:
        reason = exc.message.split(": ")[0] if len(exc.message) > 60 else exc.message
        raise CommandFailed(_("{move!r} would not be applied: {reason}").format(move=text, reason=exc),
                            headline=_("Not possible: {move}: {reason}").format(move=text, reason=reason)
                            ) from None
    lines = [_("Nothing was played: game {id} is still at move {number}, {player} to move.").format(
        id=row.id, number=state.ply + 1, player=who(mover, viewer, names)), *notes,
        scores_line(trial, viewer, names)]
    sections = [Section(lines=lines, board_text=trial.render(viewer), board_html=trial.render_html(viewer))]
    nxt = trial.to_move
    if trial.is_over:
        sections.append(Section(title=_("{move} would end the game").format(
            move=local_move(state, canonical)),
                                pre=trial.score().text))
    elif trial.pending_chance() is not None:
        sections.append(Section(lines=[
            _("The next player's replies are not shown: they depend on what is drawn after the move, "
              "which nobody may see yet.")]))
    elif nxt is not None:
        sections.append(Section(title=_("Legal replies of {player}").format(player=who(nxt, viewer, names)),
                                pre=trial.render_legal(nxt)))
    headline = (_("Preview of your {move} in {id} (nothing was played)") if mover == viewer
                else _("Preview of {player}'s {move} in {id} (nothing was played)")).format(
        move=local_move(state, canonical), id=row.id, player=names.get(mover or "", mover))
    for section in sections:
        ctx.reply(section, row.id, headline=None if section is not sections[0] else headline)


register_verb("preview", USAGE, parse_preview)
register_handler("preview", do_preview)

__all__ = ["do_preview", "parse_preview"]
