"""Notes on a game: ``note GAME TEXT`` keeps a note only its writer reads; ``note GAME secret TEXT``
seals one until the game ends, when everyone reads it; ``notes GAME`` mails them, ``notes GAME
clear`` deletes the private ones.

Where they live: in the game's record, which stays the game's one truth, under keys that every
view of the record given to someone leaves out (``pbem.record.hidden_keys``): ``record["notes"]``
(per seat) is private for good, like a queue; ``record["secret_notes"]`` is sealed while the game
has no result, and part of the record everyone gets once it has one. So neither reaches an
opponent or an observer before its time through ``record GAME``, the game-over attachment, the
archive site or a public export; ``history`` and ``board`` show moves only, and observers' mails
carry no notes. A full moderator's export (``pbem archive export`` without ``--public``) keeps
everything, as it keeps queues.

Where they are shown: at the end of the writer's own mails that show the game (its board, or the
record attached), a short "Your notes" block (the latest few, one line each); and, once the game
is over, the sealed notes of every player in each such mail (the game-over mails first), except
those of a writer the reader has shut out. Notes are written by a seat's player with the seat's token (a
forged sealed note would speak for them to everyone at the end).
"""

from __future__ import annotations

from typing import Any

from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import GAME_ID, Command, CommandError, register_verb
from pbem.i18n import N_, _, ngettext, status_word
from pbem.outbox.compose import Section, quoted
from pbem.processing import hooks
from pbem.processing.context import MailContext, PlannedMail
from pbem.processing.gamemail import game_names, who
from pbem.processing.games import CommandFailed, authenticate, game_id_of, load_game, sender_seat
from pbem.processing.handlers import register_handler
from pbem.record import iso
from pbem.store.base import GameRow, Tx

USAGE_NOTE = N_("note GAME [secret] TEXT   (a note only you read; secret: everyone reads it at the end)")
USAGE_NOTES = N_("notes GAME [clear]   (your notes on a game; clear: delete the private ones)")
PRIVATE, SEALED = "notes", "secret_notes"  # their keys in the record (pbem.record.PRIVATE_KEYS ...)
MAX_CHARS = 1000  # of one note
MAX_LINES = 12
MAX_NOTES = 50  # private notes of one seat in one game
MAX_SEALED = 10
SHOWN = 3  # notes in the block at the end of a game mail
LINE = 68  # a note's first line in that block is cut to this
CLOSED = ("declined", "cancelled")
HELP = N_("""Notes: remember your plans, or seal a prediction for the end.

  note GAME TEXT          a note only you read; your latest notes are shown
                          at the end of your own mails about the game
  note GAME secret TEXT   sealed until the game ends: then everyone reads
                          it (in the game-over mail), and it stays in the
                          game record
  notes GAME              all your notes on the game
  notes GAME clear        deletes your private notes (sealed ones stay)

In a reply to a mail about the game, GAME may be left out. The lines
below the command line belong to the note. Nobody else reads your notes:
not your opponents, not observers, not the game record they ask for,
before the game ends (sealed notes) or ever (private notes).
A note has at most {chars} characters and {lines} lines; a game keeps
{most} private and {sealed} sealed notes of each player.""")


def parse_note(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = line.split()[1:]  # as written: the text keeps its case and its full stop
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    # Only the word as the command takes it, in lower case: a private note that happens to begin
    # "Secret ..." must not become one everyone reads at the end.
    secret = bool(words) and words[0] == "secret"
    text = words[1:] if secret else words
    command = Command("note", line, game=game, args={"secret": secret})
    if text:
        command.note.append(" ".join(text))
    return command


def parse_notes(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
    words = list(rest)
    game = words.pop(0).lower() if words and GAME_ID.match(words[0]) else None
    clear = [w.lower() for w in words] == ["clear"]
    if words and not clear:
        return CommandError(line, _("notes takes a game id and 'clear' at most: {usage}").format(
            usage=_(USAGE_NOTES)))
    return Command("notes", line, game=game, args={"clear": clear})


# --- writing ---------------------------------------------------------------------------------------

def do_note(ctx: MailContext, command: Command) -> None:
    row, state = load_game(ctx, game_id_of(ctx, command))
    seat = authenticate(ctx, row, command)
    secret = bool(command.args.get("secret"))
    lines = [line.rstrip() for line in command.note]
    while lines and not lines[-1].strip():
        lines.pop()
    text = "\n".join(lines).strip()
    form = f"note {row.id} secret TEXT" if secret else f"note {row.id} TEXT"
    if not text:
        raise CommandFailed(_("the note is empty: write {form} (the text may go on the following "
                              "lines).").format(form=form))
    if len(text) > MAX_CHARS or len(lines) > MAX_LINES:
        raise CommandFailed(ngettext(
            "a note has at most {chars} characters and {lines} lines; yours has {n} characters and {m} "
            "line. Split it, or shorten it.",
            "a note has at most {chars} characters and {lines} lines; yours has {n} characters and {m} "
            "lines. Split it, or shorten it.", len(lines)).format(
            chars=MAX_CHARS, lines=MAX_LINES, n=len(text), m=len(lines)))
    if row.status in CLOSED:
        raise CommandFailed(_("game {id} was {status}; there is nothing to keep notes on.").format(
            id=row.id, status=status_word(row.status)))
    if secret and row.status == "over":
        raise CommandFailed(_("game {id} is over: a sealed note would be read at once. Write 'note {id} "
                              "TEXT' for a note only you read, or 'message {id} TEXT' to tell the "
                              "others.").format(id=row.id))
    key, most = (SEALED, MAX_SEALED) if secret else (PRIVATE, MAX_NOTES)
    mine = notes_of(row.record, key, seat.seat)
    if len(mine) >= most:
        raise CommandFailed((ngettext("you have sealed {most} note in game {id}, the most a game keeps; "
                                      "it cannot be taken back.", "you have sealed {most} notes in game "
                                      "{id}, the most a game keeps; they cannot be taken back.", most)
                             if secret else
                             ngettext("you have {most} note on game {id}, the most a game keeps. 'notes "
                                      "{id}' shows it; 'notes {id} clear' deletes it.", "you have {most} "
                                      "notes on game {id}, the most a game keeps. 'notes {id}' shows them; "
                                      "'notes {id} clear' deletes them.", most)).format(
            most=most, id=row.id))
    entry = {"at": iso(ctx.now), "ply": state.ply, "text": text}
    row.record.setdefault(key, {}).setdefault(seat.seat, []).append(entry)
    ctx.tx.save_game(row)  # not a change of position: no clock or hook is concerned
    ctx.outcomes.append(f"{'sealed' if secret else 'private'} note on {row.id}")
    count = len(mine) + 1
    said = quoted(text)
    if secret:
        ctx.reply(Section(lines=[*said, _("Nobody reads it before game {id} ends; then everyone does, in "
                                          "the game-over mail, and it stays in the game record. It cannot "
                                          "be taken back.").format(id=row.id),
                                 _("Your notes: notes {id}").format(id=row.id)]),
                  row.id, headline=ngettext("Sealed note {n} kept for {id}: read by everyone when the game "
                                            "ends", "Sealed note {n} kept for {id}: read by everyone when "
                                            "the game ends", count).format(n=count, id=row.id))
        return
    ctx.reply(Section(lines=[*said, _("Only you read it: your latest notes are shown at the end of your "
                                      "mails about {id}. All of them: notes {id}").format(id=row.id)]),
              row.id, headline=ngettext("Note {n} kept for {id} (only you read it)",
                                        "Note {n} kept for {id} (only you read it)", count).format(
                  n=count, id=row.id))


def notes_of(record: dict[str, Any], key: str, seat: str) -> list[dict[str, Any]]:
    found = (record.get(key) or {}).get(seat)
    return [n for n in found if isinstance(n, dict)] if isinstance(found, list) else []


# --- reading ---------------------------------------------------------------------------------------

def _stamp(note: dict[str, Any]) -> str:
    when = str(note.get("at", ""))[:10]
    return _("after move {number}, {date}").format(number=note.get("ply", 0), date=when)


def _full(note: dict[str, Any], label: str) -> list[str]:
    text = str(note.get("text", "")).split("\n")
    return [f"{label}: {text[0]}", *(f"  {line}" for line in text[1:])]


def do_notes(ctx: MailContext, command: Command) -> None:
    row, _state = load_game(ctx, game_id_of(ctx, command))
    mine = sender_seat(row)(ctx.mail.from_addr)
    revealed = _revealed_lines(ctx.tx, ctx.mail.from_addr, row, mine.seat if mine else None)
    if mine is None:
        if revealed:
            ctx.reply(Section(lines=revealed), row.id, headline=_("Sealed notes of {id}").format(id=row.id))
            return
        raise CommandFailed(_("you do not play in game {id}; only its players keep notes on it.").format(
            id=row.id))
    if command.args.get("clear"):
        seat = authenticate(ctx, row, command)
        count = len(notes_of(row.record, PRIVATE, seat.seat))
        if not count:
            raise CommandFailed(_("you have no private notes on game {id} to clear; keep one with: note {id} "
                                  "TEXT").format(id=row.id))
        (row.record.get(PRIVATE) or {}).pop(seat.seat, None)
        if not row.record.get(PRIVATE):
            row.record.pop(PRIVATE, None)
        ctx.tx.save_game(row)
        ctx.outcomes.append(f"notes on {row.id} cleared")
        sealed = notes_of(row.record, SEALED, seat.seat)
        lines = [_("Sealed notes stay sealed until the game ends.")] if sealed and not row.record.get(
            "result") else []
        ctx.reply(Section(lines=lines) if lines else None, row.id, headline=ngettext(
            "{n} note on {id} deleted", "{n} notes on {id} deleted", count).format(n=count, id=row.id))
        return
    private = notes_of(row.record, PRIVATE, mine.seat)
    sealed = [] if row.record.get("result") else notes_of(row.record, SEALED, mine.seat)
    lines = [line for note in private for line in _full(note, _stamp(note))]
    lines += [line for note in sealed
              for line in _full(note, _("{when}, sealed until the end").format(when=_stamp(note)))]
    if not lines and not revealed:
        ctx.reply(Section(lines=[_("Keep one with: note {id} TEXT").format(id=row.id),
                                 _("Seal one for the end with: note {id} secret TEXT").format(id=row.id),
                                 _("'help notes' explains more.")]),
                  row.id, headline=_("You have no notes on {id}").format(id=row.id))
        return
    if private:
        lines.append(_("To delete your private notes: notes {id} clear").format(id=row.id))
    sections = [Section(lines=lines)] if lines else []
    if revealed:
        sections.append(Section(title=_("Sealed notes, read at the end"), lines=revealed))
    count = len(private) + len(sealed)
    ctx.reply(None, row.id, headline=ngettext("Your notes on {id}: {n}", "Your notes on {id}: {n}",
                                              count).format(id=row.id, n=count))
    for section in sections:
        ctx.reply(section)


def _revealed_lines(tx: Tx, reader_email: str | None, row: GameRow, reader: str | None) -> list[str]:
    """Every player's sealed notes once the game has a result, oldest first, each with its writer;
    not those of a writer the reader has shut out."""
    if not row.record.get("result") or not row.record.get(SEALED):
        return []
    names = game_names(tx, row)
    found = []
    for seat in row.seats:
        if hooks.shut_out(tx, reader_email, seat.email):
            continue
        for note in notes_of(row.record, SEALED, seat.seat):
            found.append((str(note.get("at", "")), seat.seat, note))
    found.sort(key=lambda item: item[0])
    return [line for _at, seat, note in found
            for line in _full(note, f"{who(seat, reader, names)}, {_stamp(note)}")]


# --- in the game's mails ---------------------------------------------------------------------------

def notes_in_mail(tx: Tx, planned: PlannedMail, row: GameRow) -> list[Section]:
    """hooks.GAME_MAIL: in a mail that shows the game (its board, or the record attached, as the
    game-over mails do), the reader's own latest notes (if they play the game) and, once the game
    is over, everyone's sealed notes."""
    if not planned.attach_record and not any(section.board_text for section in planned.sections):
        return []
    record = row.record
    if not record.get(PRIVATE) and not record.get(SEALED):
        return []
    sections = []
    seat = planned.seat
    if seat and not planned.observer and any(s.seat == seat and s.email == planned.to for s in row.seats):
        own = [(n, False) for n in notes_of(record, PRIVATE, seat)]
        if not record.get("result"):
            own += [(n, True) for n in notes_of(record, SEALED, seat)]
        own.sort(key=lambda item: str(item[0].get("at", "")))
        if own:
            lines = [_short(note, sealed) for note, sealed in own[-SHOWN:]]
            if len(own) > SHOWN:
                lines.append(ngettext("({n} note in all: notes {id})", "({n} notes in all: notes {id})",
                                      len(own)).format(n=len(own), id=row.id))
            sections.append(Section(title=_("Your notes"), lines=lines))
    revealed = _revealed_lines(tx, planned.to, row, seat if not planned.observer else None)
    if revealed:
        sections.append(Section(title=_("Sealed notes, read at the end"), lines=revealed))
    return sections


def _short(note: dict[str, Any], sealed: bool) -> str:
    text = " ".join(str(note.get("text", "")).split())
    label = (_("after move {number}, sealed") if sealed else _("after move {number}")).format(
        number=note.get("ply", 0))
    line = f"{label}: {text}"
    return line if len(line) <= LINE else line[:LINE - 1].rstrip() + "…"


HELP_TOPICS["notes"] = lambda: _(HELP).format(chars=MAX_CHARS, lines=MAX_LINES, most=MAX_NOTES,
                                              sealed=MAX_SEALED)
HELP_TOPICS["note"] = HELP_TOPICS["notes"]
register_verb("note", USAGE_NOTE, parse_note, label=True)  # "Note: ..." below a move is for the others
register_verb("notes", USAGE_NOTES, parse_notes, label=True)
register_handler("note", do_note)
register_handler("notes", do_notes)
hooks.GAME_MAIL.append(notes_in_mail)

__all__ = ["do_note", "do_notes", "notes_in_mail", "notes_of", "parse_note", "parse_notes"]
