"""Moderator operations, shared by the mail commands (``admin ...``) and ``pbem admin``.

Both doors run the same functions on a ``MailContext``: the mail path uses the context of the mail
being processed, so the operation commits with that mail; ``Moderation.run`` builds one for the
command line around its own store transaction. Either way an operation, the record of it and the
mails it causes commit together or not at all.

Every operation that concerns a game is written into the game record, ``record["actions"]``, with
who, when, why, the ply it happened at and ``entries``: how many record entries there were right
after it. ``entries`` is what places an action in a replay: after a rollback, plies are reused by the
moves played later, but positions in the entry list are not.

Moderator mail is trusted only with a token: the From header can be forged, so an ``admin`` command
also needs the line ``token XXXX`` with the address's moderator token (``pbem admin token ADDRESS``).
"""

from __future__ import annotations

import hmac
import json
import re
import textwrap
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, time
from typing import TYPE_CHECKING, Any

from engine import State, get_game, is_move_entry
from engine.registry import available_games
from pbem.i18n import Text, _, ngettext, say
from pbem.outbox.compose import Action, ActionGroup, Section, render
from pbem.processing import hooks
from pbem.processing.context import EVENT, NOTICE, MailContext, PlannedMail
from pbem.processing.gamemail import (
    board_section,
    game_ended,
    game_names,
    players_line,
    result_headline,
    who,
)
from pbem.processing.games import announce_end, announce_position, save_game
from pbem.reading.incoming import IncomingMail
from pbem.record import describe_action, iso, replay_record
from pbem.store.base import GAME_STATUSES, GameRow, Seat
from pbem.tokens import seat_token, token_hash

if TYPE_CHECKING:
    from pbem.clock import Clock
    from pbem.config import Config
    from pbem.store.base import Store

ADDRESS = re.compile(r"^[^@\s<>,;]+@[^@\s<>,;]+$")


class ModerationError(Exception):
    """An operation that cannot be carried out; the message tells the moderator why."""


# --- who may moderate --------------------------------------------------------------------------------

def moderator_token(secret: bytes, address: str) -> str:
    """Derived like a seat token, from a pseudo-game "moderator", so it needs no storage and changes
    when the server secret is replaced."""
    return seat_token(secret, "moderator", address.strip().lower())


def is_moderator(config: Config, secret: bytes, address: str, tokens: Iterable[str | None]) -> bool:
    """From must be a configured moderator address AND one of the mail's tokens must be its token."""
    address = address.strip().lower()
    if not address or address not in config.moderators:
        return False
    expected = moderator_token(secret, address).encode("ascii")
    return any(t and hmac.compare_digest(t.strip().lower().encode("utf-8"), expected) for t in tokens)


# --- records -----------------------------------------------------------------------------------------

def record_action(row: GameRow, action: str, by: str, why: str, now: datetime, ply: int,
                  **details: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"action": action, "by": by, "at": iso(now), "why": why or "",
                             "ply": ply, "entries": len(row.record["moves"]), **details}
    row.record.setdefault("actions", []).append(entry)
    return entry


def rewind(record: dict[str, Any], keep_plies: int) -> list[dict[str, Any]]:
    """Cut the record back to the position after ``keep_plies`` moves; returns the removed entries.

    The chance entries right after the last kept move stay: they are the draw already made for that
    position (Space Truckin' tile and quadrant), which everyone has seen; drawing again would turn a
    rollback or an undo into a way to re-roll the draw. Drops there stay too (they belong to that
    position); a drop that is cut off is taken back with its moves and that seat plays again.
    ``record["dropped"]`` is brought in line with the drop entries left: a forfeit that ended the game
    (a seat listed there without a drop entry) is taken back too, as the game runs again.
    """
    moves = record["moves"]
    cut = len(moves)
    count = 0
    for index, entry in enumerate(moves):
        if not is_move_entry(entry):
            continue
        if count == keep_plies:
            cut = index
            break
        count += 1
    removed = moves[cut:]
    record["moves"] = moves[:cut]
    dropped = [entry["drop"] for entry in record["moves"] if "drop" in entry]
    if dropped:
        record["dropped"] = dropped
    else:
        record.pop("dropped", None)
    return removed


def parse_when(text: str, now: datetime | None = None) -> datetime:
    """``YYYY-MM-DD`` (the end of that day) or ``YYYY-MM-DDTHH:MM``, both UTC."""
    text = text.strip().upper().rstrip("Z")
    try:
        if "T" in text:
            when = datetime.strptime(text, "%Y-%m-%dT%H:%M").replace(tzinfo=UTC)
        else:
            day = datetime.strptime(text, "%Y-%m-%d").date()
            when = datetime.combine(day, time(23, 59), tzinfo=UTC)
    except ValueError:
        raise ModerationError(f"{text!r} is not a date: write YYYY-MM-DD or YYYY-MM-DDTHH:MM (UTC)"
                              ) from None
    if now is not None and when <= now:
        raise ModerationError(f"{iso(when)} is in the past (it is now {iso(now)})")
    return when


def _deadlines() -> Any:
    """Deadlines are another module's business (move clocks, reminders); imported when needed so
    the rest of moderation works without it."""
    try:
        import pbem.community.deadlines as deadlines
    except ModuleNotFoundError as exc:
        if exc.name != "pbem.community.deadlines":
            raise
        raise ModerationError("pause, resume and deadline need pbem.community.deadlines (move clocks), which "
                              "this installation does not have") from None
    return deadlines


# --- helpers -----------------------------------------------------------------------------------------

def load_game(ctx: MailContext, game_id: str) -> tuple[GameRow, State]:
    loaded = ctx.load(game_id.lower())
    if loaded is None:
        raise ModerationError(f"there is no game {game_id}")
    return loaded


def _ply(row: GameRow) -> int:
    return sum(1 for entry in row.record["moves"] if is_move_entry(entry))


def _why(why: str) -> str:
    """Called in the reader's language, like every text below that a player reads."""
    return " " + _("Reason: {why}").format(why=why) if why else ""


def _seat(row: GameRow, seat: str | None) -> str:
    return get_game(row.game).seat_label(seat) if seat else ""


def _tell_players(ctx: MailContext, row: GameRow, headline: Text, lines: Callable[[], list[str]],
                  exclude: Iterable[str] = ()) -> None:
    """A short note to every seat, in the game's thread and with the seat's token; ``headline`` and
    ``lines`` are written anew in each seat's language."""
    skip = set(exclude)
    for seat in row.seats:
        if seat.seat in skip:
            continue
        with ctx.speaking_to(seat.email):
            ctx.planned.append(PlannedMail(to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
                                           headline=say(headline), sections=[Section(lines=lines())]))


def _announce(ctx: MailContext, row: GameRow, state: State, headline: Callable[[], str], why: str = "",
              exclude: str | None = None) -> None:
    """Everyone (players and observers) hears how the game now stands, whatever their notification
    level: a moderator's change is news to every player. A game that a moderator ended is over
    although its position is not, so it gets the result, not "your move". The reason goes into the
    body: the headline stays one sentence, followed by what it means for the reader."""
    def note() -> list[str]:
        return [_("Reason: {why}").format(why=why)] if why else []

    if row.status == "active" and not state.is_over:
        announce_position(ctx, row, state, lambda: headline().rstrip("."), exclude=exclude, notes=note,
                          start=True)
    else:
        announce_end(ctx, row, state, exclude=exclude, note=lambda: [headline(), *note()])


def _invite(ctx: MailContext, row: GameRow, seat: Seat, first_line: Callable[[], str]) -> None:
    title = get_game(row.game).title
    names = game_names(ctx.tx, row)
    with ctx.speaking_to(seat.email):
        ctx.planned.append(PlannedMail(
            to=seat.email, seat=seat.seat, game_id=row.id, kind=EVENT,
            headline=_("Invitation to {title} ({id})").format(title=title, id=row.id),
            sections=[Section(lines=[
                first_line(), _("You would play {seat}.").format(seat=_seat(row, seat.seat))
                + " " + players_line(row, seat.seat, names),
                _("To play, reply: accept {id}. To refuse: decline {id}.").format(id=row.id),
                _("The rules and every ruling: reply 'rules {game}'.").format(game=row.game)],
                actions=[ActionGroup("", [Action(_("Accept"), f"accept {row.id}"),
                                          Action(_("Decline"), f"decline {row.id}")])])]))


def _wrap_json(value: Any) -> str:
    return "\n".join(textwrap.wrap(json.dumps(value, ensure_ascii=False), 72,
                                   break_long_words=True, break_on_hyphens=False))


# --- operations --------------------------------------------------------------------------------------

def list_games(ctx: MailContext, filters: Iterable[str] = ()) -> None:
    """Filters, in any order: a status, a game name, or a player's address."""
    status = game = player = None
    games = set(available_games())
    for word in filters:
        word = word.lower()
        if word in GAME_STATUSES:
            status = word
        elif word in games:
            game = word
        elif "@" in word:
            player = word
        else:
            raise ModerationError(f"list filters are a status ({', '.join(GAME_STATUSES)}), a game "
                                  f"({', '.join(sorted(games))}) or an address, not {word!r}")
    rows = ctx.tx.search_games(status=status, game=game, player=player)
    lines = []
    for row in rows:
        when = row.updated_at.strftime("%Y-%m-%d %H:%M") if row.updated_at else "-"
        lines.append(f"{row.id:<8} {row.status:<9} {_ply(row)} move(s), updated {when}")
        turn = [f"{row.to_move} to move"] if row.to_move else []
        if row.deadline_at:
            turn.append(f"deadline {row.deadline_at:%Y-%m-%d %H:%M}")
        if row.record.get("undo_request"):
            turn.append("undo asked")
        if turn:
            lines.append(f"{'':<8} " + ", ".join(turn))
        lines += textwrap.wrap(" ".join(f"{s.seat}={s.email}" for s in row.seats), 78,
                               initial_indent=" " * 9, subsequent_indent=" " * 9,
                               break_long_words=False, break_on_hyphens=False)
    described = " ".join(x for x in (status, game, player) if x) or "all"
    ctx.reply(Section(pre="\n".join(lines) if lines else None,
                      lines=[] if lines else ["No game matches."]),
              headline=f"Games ({described}): {len(rows)}")


def show_game(ctx: MailContext, game_id: str) -> None:
    """Everything about a game, hidden setup included: what a moderator needs before acting."""
    row, state = load_game(ctx, game_id)
    game = get_game(row.game)
    record = row.record
    lines = [f"{game.title}, status {row.status}, move {state.ply}, "
             + (f"{row.to_move} to move." if row.to_move else "nobody to move.")]
    for seat in row.seats:
        info = record.get("players", {}).get(seat.seat, {})
        lines.append(f"{seat.seat}: {seat.email}" + (f" ({seat.name})" if seat.name else "")
                     + ("" if seat.accepted else ", not accepted yet")
                     + f", token generation {int(info.get('token_generation', 0))}")
    when = [f"created {row.created_at:%Y-%m-%d %H:%M}" if row.created_at else "",
            f"last activity {row.updated_at:%Y-%m-%d %H:%M}" if row.updated_at else "",
            f"deadline {row.deadline_at:%Y-%m-%d %H:%M}" if row.deadline_at else "no deadline"]
    lines.append(", ".join(w for w in when if w) + " (UTC).")
    observers = ctx.tx.observers(row.id)
    lines.append("Observers: " + (", ".join(observers) if observers else "none") + ".")
    if record.get("undo_request"):
        request = record["undo_request"]
        lines.append(f"Undo asked by {request.get('seat')} after move {request.get('ply')} "
                     f"({request.get('moves')} move(s)); accepted by: "
                     + (", ".join(request.get("accepted") or []) or "nobody yet") + ".")
    if record.get("result"):
        lines.append("Result: " + json.dumps(record["result"], ensure_ascii=False))
    ctx.reply(board_section(state, None, lines, with_legal=row.status == "active", moderator=True,
                            ended=game_ended(row)),
              row.id, headline=f"Game {row.id}: {row.status}, move {state.ply}")
    redacted = game.redact_setup(record["setup"])
    hidden = {k: v for k, v in record["setup"].items() if k not in redacted or redacted[k] != v}
    ctx.reply(Section(title="Hidden information (never shown to players or observers)",
                      pre=_wrap_json(hidden) if hidden else None,
                      lines=[] if hidden else ["This game has no hidden information."]))
    queues = record.get("queue") or {}
    if queues:
        ctx.reply(Section(title="Queued moves (seen by nobody but their player)", lines=[
            f"{seat}: if {line.get('if') or 'anything'} then {line.get('then')}"
            for seat, entry in queues.items() for line in entry.get("lines", [])]))
    actions = record.get("actions") or []
    if actions:
        ctx.reply(Section(title="Moderator actions", lines=[describe_action(a, game) for a in actions]))


def pause(ctx: MailContext, game_id: str, *, by: str, why: str = "") -> None:
    deadlines = _deadlines()
    row, state = load_game(ctx, game_id)
    if row.status != "active":
        raise ModerationError(f"game {row.id} is {row.status}; only running games can be paused")
    try:
        deadlines.pause(row, ctx.now)
    except ValueError as exc:
        raise ModerationError(f"game {row.id}: {exc}") from None
    record_action(row, "pause", by, why, ctx.now, state.ply)
    ctx.tx.save_game(row)
    _tell_players(ctx, row, lambda: _("A moderator has paused {id}").format(id=row.id), lambda: [
        _("The move clock is stopped until it is resumed.") + _why(why)])
    ctx.reply(Section(lines=[_("The players have been told.")]), row.id,
              headline=_("Paused {id}").format(id=row.id))


def resume(ctx: MailContext, game_id: str, *, by: str, why: str = "") -> None:
    deadlines = _deadlines()
    row, state = load_game(ctx, game_id)
    if row.status != "active":
        raise ModerationError(f"game {row.id} is {row.status}; only running games can be resumed")
    vacations = getattr(deadlines, "seat_vacations", None)
    away = vacations(ctx.tx, row, row.to_move) if vacations and row.to_move else []
    try:
        deadlines.resume(row, ctx.now, away)
    except ValueError as exc:
        raise ModerationError(f"game {row.id}: {exc}") from None
    record_action(row, "resume", by, why, ctx.now, state.ply)
    ctx.tx.save_game(row)
    def until() -> str:
        return " " + _("{seat} must move by {when} UTC.").format(
            seat=_seat(row, row.to_move), when=f"{row.deadline_at:%Y-%m-%d %H:%M}") if (
            row.deadline_at and row.to_move) else ""
    _tell_players(ctx, row, lambda: _("A moderator has resumed {id}").format(id=row.id), lambda: [
        _("The move clock runs again.") + until() + _why(why)])
    ctx.reply(Section(lines=[_("The players have been told.") + until()]), row.id,
              headline=_("Resumed {id}").format(id=row.id))


def set_deadline(ctx: MailContext, game_id: str, when: datetime | str, *, by: str,
                 why: str = "") -> None:
    deadlines = _deadlines()
    if isinstance(when, str):
        when = parse_when(when, ctx.now)
    row, state = load_game(ctx, game_id)
    if row.status != "active":
        raise ModerationError(f"game {row.id} is {row.status}; only running games have deadlines")
    away = deadlines.seat_vacations(ctx.tx, row, row.to_move) if row.to_move else []
    try:
        applies = deadlines.set_deadline(row, when, ctx.now, away)
    except ValueError as exc:
        raise ModerationError(f"game {row.id}: {exc}") from None
    record_action(row, "deadline", by, why, ctx.now, state.ply, until=iso(applies),
                  **({"asked": iso(when)} if applies != when else {}))
    ctx.tx.save_game(row)
    text = f"{applies:%Y-%m-%d %H:%M} UTC"

    def moved() -> str:
        return " " + _("The moderator asked for {when} UTC; the clock does not run during {seat}'s "
                       "vacation, so the deadline moves by that time.").format(
            when=f"{when:%Y-%m-%d %H:%M}", seat=_seat(row, row.to_move)) if applies != when else ""
    _tell_players(ctx, row, lambda: _("New deadline in {id}: {seat} must move by {when}").format(
                      id=row.id, seat=_seat(row, row.to_move), when=text),
                  lambda: [_("A moderator has set the deadline of game {id}.").format(id=row.id)
                           + moved() + _why(why)])
    ctx.reply(Section(lines=[_("{seat} must move by {when}.").format(seat=_seat(row, row.to_move), when=text)
                             + moved()]), row.id, headline=_("Deadline of {id} set").format(id=row.id))


def replace(ctx: MailContext, game_id: str, seat_name: str, address: str, *, by: str,
            why: str = "") -> None:
    """A new player takes a seat: new address, new token (the old one stops working at once)."""
    row, state = load_game(ctx, game_id)
    address = address.strip().strip("<>").lower()
    seat_name = seat_name.lower()
    if not ADDRESS.match(address):
        raise ModerationError(f"{address!r} is not a mail address")
    if row.status not in ("invited", "active"):
        raise ModerationError(f"game {row.id} is {row.status}; players can be replaced only in "
                              "invited or running games")
    seat = next((s for s in row.seats if s.seat == seat_name), None)
    if seat is None:
        raise ModerationError(f"game {row.id} has no seat {seat_name!r}; seats: "
                              + ", ".join(s.seat for s in row.seats))
    if any(s.email == address for s in row.seats):
        raise ModerationError(f"{address} already plays in game {row.id}")
    if address == ctx.config.address:
        raise ModerationError(f"{address} is the server, not a player")
    if ctx.tx.is_blocked(address):
        raise ModerationError(f"{address} is blocked; unblock it first")
    players = row.record.setdefault("players", {})
    info = players.setdefault(seat.seat, {})
    generation = int(info.get("token_generation", 0)) + 1
    old = seat.email
    info.update({"name": "", "email": address, "token_generation": generation})
    seat.email, seat.name = address, ""
    seat.token_hash = token_hash(seat_token(ctx.secret, row.id, seat.seat, generation))
    if row.status == "invited":
        seat.accepted = False  # nobody has agreed to play for the new address yet
    if row.record.get("undo_request", {}).get("seat") == seat.seat:
        del row.record["undo_request"]  # the new player did not ask for it
    record_action(row, "replace", by, why, ctx.now, state.ply, seat=seat.seat, old=old, new=address)
    row.updated_at = ctx.now
    ctx.tx.save_game(row)
    title = get_game(row.game).title
    with ctx.speaking_to(old):
        label = _seat(row, seat.seat)
        ctx.planned.append(PlannedMail(
            to=old, game_id=row.id, kind=NOTICE,
            headline=_("You no longer play {seat} in {id}").format(seat=label, id=row.id),
            sections=[Section(lines=[
                _("A moderator has replaced you as {seat} in game {id} ({title}) by {address}.").format(
                    seat=label, id=row.id, title=title, address=address)
                + _why(why), _("Mails from you about this game are no longer accepted.")])]))
    if row.status == "invited":
        _invite(ctx, row, seat, lambda: _("A moderator has invited you to take over {seat} in a game "
                                          "of {title} (game {id}).").format(
            seat=_seat(row, seat.seat), title=title, id=row.id))
    else:
        mine = state.to_move == seat.seat
        names = game_names(ctx.tx, row)
        with ctx.speaking_to(address):
            label = _seat(row, seat.seat)
            section = board_section(state, seat.seat, [
                _("A moderator has made you the player of {seat} in game {id} ({title}), "
                  "taking over from {old}.").format(seat=label, id=row.id, title=title, old=old)
                + _why(why), players_line(row, seat.seat, names)])
            ctx.planned.append(PlannedMail(
                to=address, seat=seat.seat, game_id=row.id, kind=EVENT, sections=[section],
                headline=_("You now play {seat} in {id}").format(seat=label, id=row.id) + (
                    _(": your move (move {number})").format(number=state.ply + 1) if mine else
                    _("; {player} is to move").format(player=who(state.to_move, seat.seat, names)))))
    _tell_players(ctx, row, lambda: _("{seat} in {id} has a new player").format(
        seat=_seat(row, seat.seat), id=row.id), lambda: [
        _("A moderator has replaced {old} by {new} as {seat} in game {id}.").format(
            old=old, new=address, seat=_seat(row, seat.seat), id=row.id) + _why(why)],
        exclude=[seat.seat])
    ctx.reply(Section(lines=[
        _("{seat}: {old} -> {new} (token generation {generation}). Old, new and other "
          "players have been told.").format(seat=_seat(row, seat.seat), old=old, new=address,
                                            generation=generation)]),
        row.id, headline=_("Replaced {seat} in {id}").format(seat=_seat(row, seat.seat), id=row.id))


def rollback(ctx: MailContext, game_id: str, plies: int, *, by: str, why: str = "") -> None:
    """Take back the last ``plies`` moves; a finished game runs again."""
    row, state = load_game(ctx, game_id)
    if row.status not in ("active", "over"):
        raise ModerationError(f"game {row.id} is {row.status}; only started games can be rolled back")
    if plies < 1:
        raise ModerationError("roll back at least one move")
    if plies > state.ply:
        raise ModerationError(f"game {row.id} has {state.ply} move(s); cannot roll back {plies}")
    before = state.ply
    removed = rewind(row.record, before - plies)
    details: dict[str, Any] = {"moves": plies, "to_ply": before - plies, "removed": removed}
    if row.status == "over":
        details["result_before"] = row.record.pop("result", None)
        row.status = "active"
        row.finished_at = None
    row.record.pop("undo_request", None)
    record_action(row, "rollback", by, why, ctx.now, before, **details)
    state = replay_record(row.record, get_game(row.game))
    save_game(ctx, row, state)
    def headline() -> str:
        return ngettext("A moderator has taken back the last move of game {id}: it is at "
                        "move {number} again.",
                        "A moderator has taken back the last {n} moves of game {id}: it is at "
                        "move {number} again.", plies).format(n=plies, id=row.id, number=state.ply)
    _announce(ctx, row, state, headline, why)
    ctx.reply(board_section(state, None, [_("{seat} is to move.").format(seat=_seat(row, state.to_move))
                                          if state.to_move else ""], with_legal=False), row.id,
              headline=_("Rolled back {id} to move {number}").format(id=row.id, number=state.ply))


def end(ctx: MailContext, game_id: str, result: str, *, by: str, why: str = "") -> None:
    """RESULT: a seat (it wins) or "draw"."""
    row, state = load_game(ctx, game_id)
    if row.status != "active":
        raise ModerationError(f"game {row.id} is {row.status}; only running games can be ended")
    seats = [s.seat for s in row.seats]
    result = result.lower()
    if result == "draw":
        winners = seats
    elif result in seats:
        winners = [result]
    else:
        raise ModerationError(f"result must be a seat ({', '.join(seats)}) or draw, not {result!r}")
    outcome = {"reason": "moderator", "winners": winners, "totals": dict(state.score().totals),
               "by": by, "why": why or "", "at": iso(ctx.now)}
    row.record["result"] = outcome
    row.record.pop("undo_request", None)
    row.status = "over"
    row.to_move = None
    row.deadline_at = None
    if row.finished_at is None:
        row.finished_at = ctx.now
    record_action(row, "end", by, why, ctx.now, state.ply, result=outcome)
    for hook in hooks.GAME_SAVED:
        hook(ctx, row, state)
    ctx.tx.save_game(row)
    def headline() -> str:
        return _("A moderator has ended game {id}.").format(id=row.id) + _why(why)
    _announce(ctx, row, state, headline)
    ctx.reply(Section(lines=[headline()]), row.id,
              headline=_("Ended {id}: {result}").format(
                  id=row.id, result=result_headline(row, state, None, game_names(ctx.tx, row))))


def resend(ctx: MailContext, game_id: str, *, by: str, why: str = "") -> None:
    """Mail everyone the game as it stands (a player lost a mail, or a mail server lost it)."""
    row, state = load_game(ctx, game_id)
    if row.status in ("declined", "cancelled"):
        raise ModerationError(f"game {row.id} is {row.status}; there is nothing to resend")
    record_action(row, "resend", by, why, ctx.now, state.ply)
    ctx.tx.save_game(row)
    if row.status == "invited":
        waiting = [s for s in row.seats if not s.accepted]
        for seat in waiting:
            _invite(ctx, row, seat, lambda: _("A reminder: you are invited to a game of "
                                              "{title} (game {id}).").format(
                title=get_game(row.game).title, id=row.id))
        told = ", ".join(s.email for s in waiting)
    else:
        _announce(ctx, row, state, lambda: _("The current board of game {id}, sent again by a "
                                             "moderator.").format(id=row.id), why)
        told = ", ".join(s.email for s in row.seats)
    ctx.reply(Section(lines=[_("Sent to {addresses}.").format(addresses=told)]), row.id,
              headline=_("Resent {id}").format(id=row.id))


def block(ctx: MailContext, address: str, *, by: str, why: str = "") -> None:
    address = address.strip().strip("<>").lower()
    if not ADDRESS.match(address):
        raise ModerationError(f"{address!r} is not a mail address")
    if address in ctx.config.moderators or address == ctx.config.address:
        raise ModerationError(f"{address} is a moderator or the server; it cannot be blocked")
    ctx.tx.block(address, ctx.now, by, why or "")
    running = _record_in_games(ctx, address, "block", by, why)
    lines = [_("Mail from {address} is now ignored, without reply.").format(address=address)]
    if running:
        lines.append(_("They play in {games}: replace them there (admin replace GAME SEAT ADDRESS) or end "
                       "those games.").format(games=", ".join(running)))
    ctx.reply(Section(title=_("Blocked {address}").format(address=address), lines=lines))


def unblock(ctx: MailContext, address: str, *, by: str, why: str = "") -> None:
    address = address.strip().strip("<>").lower()
    if not ctx.tx.unblock(address):
        raise ModerationError(f"{address} is not blocked")
    _record_in_games(ctx, address, "unblock", by, why)
    ctx.reply(Section(title=_("Unblocked {address}").format(address=address),
                      lines=[_("Mail from {address} is read again.").format(address=address)]))


def _record_in_games(ctx: MailContext, address: str, action: str, by: str, why: str) -> list[str]:
    """A block concerns an address, not a game, but the games it plays in should say why they
    stalled: the action goes into each of their records."""
    ids = []
    for found in ctx.tx.games_for_email(address):
        if found.status not in ("invited", "active"):
            continue
        row, state = load_game(ctx, found.id)
        record_action(row, action, by, why, ctx.now, state.ply, address=address)
        ctx.tx.save_game(row)
        ids.append(row.id)
    return ids


# --- the command line --------------------------------------------------------------------------------

class Moderation:
    """Runs operations for ``pbem admin``: one store transaction each, mails queued in the outbox
    with the server's own composer (threading, tokens in Reply-To, player-view attachments)."""

    def __init__(self, config: Config, store: Store, clock: Clock | None = None,
                 secret: bytes | None = None):
        from pbem.processing.processor import Processor

        self.processor = Processor(config, store, clock, secret)

    @property
    def secret(self) -> bytes:
        return self.processor.secret

    def run(self, by: str, operation: Callable[[MailContext], None]) -> tuple[str, list[Section], int]:
        """Returns the report's headline and sections, and how many mails were planned."""
        processor = self.processor
        now = processor.clock.now()
        with processor.store.transaction() as tx:
            ctx = MailContext(config=processor.config, tx=tx, now=now, mail=IncomingMail(from_addr=by),
                              secret=processor.secret, cache=processor.cache,
                              token_for=processor.token_for)
            operation(ctx)
            processor.outgoing.queue_planned(ctx)
        return "; ".join(ctx.reply_headlines), ctx.reply_sections, len(ctx.planned)


def sections_text(sections: list[Section], headline: str = "") -> str:
    """The report as the mail's text part would show it."""
    return render("mail.txt.j2", subject="", headline=headline, sections=sections,
                  footer=[]).strip("\n") + "\n"


__all__ = ["Moderation", "ModerationError", "block", "end", "is_moderator",
           "list_games", "moderator_token", "parse_when", "pause", "record_action", "replace",
           "resend", "resume", "rewind", "rollback", "sections_text", "set_deadline", "show_game",
           "unblock"]
