"""What the organizer of a tournament (or a server moderator) may do by mail: ``tournament T
OPERATION ...``: start it now, pause and resume it, extend the round's deadline, replace or remove
a player, pair the round again while none of its games has begun, decide a game, end it; and,
on a ladder, ``challenge`` (any entrant). Every operation is written into the tournament's
``actions`` (who, when, why) and told to every entrant in their own language.

The organizer proves the address with a token (a reply to any of the server's mails); a server
moderator with the moderator token. Anyone else gets a clear refusal.
"""

from __future__ import annotations

from pbem.commands.parsing import GAME_ID, Command
from pbem.community import moderation
from pbem.i18n import N_, _
from pbem.outbox.compose import Section
from pbem.processing.context import TURN, MailContext
from pbem.processing.gamemail import board_section, game_names, players_line
from pbem.processing.games import CommandFailed, address_proven, mail_tokens
from pbem.reading.addresses import normalize
from pbem.record import iso
from pbem.store.tournaments import TournamentRow
from pbem.tournaments import document as d
from pbem.tournaments import ladder, pausing, running
from pbem.tournaments.access import save, tournament_of
from pbem.tournaments.texts import reach_text


def operate(ctx: MailContext, command: Command) -> None:
    trow = tournament_of(ctx, command)
    action = command.args["action"]
    if action == "challenge":
        challenge(ctx, command, trow)
        save(ctx, trow)
        return
    by = ctx.mail.from_addr
    moderator = moderation.is_moderator(ctx.config, ctx.secret, by, mail_tokens(ctx, command))
    if not moderator and not (by == trow.organizer and address_proven(ctx, command)):
        if by == trow.organizer:
            raise CommandFailed(_("this needs your token: reply to one of my mails about {id} with the same "
                                  "line.").format(id=trow.id))
        raise CommandFailed(_("only the organizer of {id} ({organizer}) or a moderator can {action} it; ask "
                              "them. 'tournament {id}' sends you the table.").format(
            id=trow.id, action=action, organizer=running.name_of(ctx, trow.doc, trow.organizer)))
    if trow.status in ("over", "cancelled"):
        raise CommandFailed(_("{id} is over; nothing more can be changed.").format(id=trow.id))
    target, why = command.args["target"], command.args["why"]
    told = OPS[action](ctx, trow, target, why)
    trow.doc.setdefault("actions", []).append({"action": action, "by": by, "why": why, "at": iso(ctx.now),
                                               **({"target": target} if target else {})})
    if told is not None:
        told, own, games = told if isinstance(told, tuple) else (told, None, [])
        running.tell_entrants(ctx, trow, lambda: told(), lines=lambda: [
            _("Reason: {why}").format(why=why)] if why else [], own=own, exclude=by)
        lines = [_("Every entrant was told.")]
        if games:
            lines.append(_("Games: {games}.").format(games=", ".join(games)))
        ctx.reply(Section(lines=lines), headline=told())
    save(ctx, trow)
    ctx.outcomes.append(f"tournament {trow.id} {action}")


def _start(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    if trow.status != "open":
        raise CommandFailed(_("{id} has already started.").format(id=trow.id))
    running.start(ctx, trow)
    return lambda: _("{id} was started by its organizer").format(id=trow.id)


def _pause(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    if trow.status != "running":
        raise CommandFailed(_("{id} is not running.").format(id=trow.id))
    trow.status = "paused"
    stopped = pausing.stop_clocks(ctx, trow, ctx.mail.from_addr, why)
    return (lambda: _("{id} is paused: no new round, and its games' clocks stop until it resumes").format(
        id=trow.id), lambda email: pausing.clock_lines(ctx, trow, email, stopped, resumed=False), stopped)


def _resume(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    if trow.status != "paused":
        raise CommandFailed(_("{id} is not paused.").format(id=trow.id))
    trow.status = "running"
    restarted = pausing.restart_clocks(ctx, trow, ctx.mail.from_addr, why)
    running.advance(ctx, trow)
    return (lambda: _("{id} goes on: its games' clocks run again").format(id=trow.id),
            lambda email: pausing.clock_lines(ctx, trow, email, restarted, resumed=True), restarted)


def _deadline(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    try:
        when = d.parse_date(target[0])
    except d.SettingsError as exc:
        raise CommandFailed(str(exc)) from None
    rounds = trow.doc.get("rounds") or []
    if not rounds or trow.status not in ("running", "paused"):
        raise CommandFailed(_("{id} has no round in play.").format(id=trow.id))
    if when <= ctx.now:
        raise CommandFailed(_("the new deadline {when} is not in the future.").format(when=target[0]))
    rounds[-1]["deadline_at"] = iso(when)
    rounds[-1].pop("handled", None)
    running.schedule_due(trow)
    return lambda: _("The deadline of round {n} of {id} is now {when} UTC").format(
        n=rounds[-1]["number"], id=trow.id, when=f"{when:%Y-%m-%d %H:%M}")


def _replace(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    old, new = (_address(t) for t in target)
    doc = trow.doc
    entry = d.entrant(doc, old)
    if entry is None or entry.get("status") != "entered":
        raise CommandFailed(_("{address} is not playing in {id}.").format(address=old, id=trow.id))
    if d.entrant(doc, new) is not None:
        raise CommandFailed(_("{address} is already in {id}.").format(address=new, id=trow.id))
    for item in d.running_games(doc):
        if old in item["players"]:
            row = ctx.tx.get_game(item["id"])
            seat = next(s.seat for s in row.seats if s.email == old) if row else None
            if seat:
                try:
                    moderation.replace(ctx, item["id"], seat, new, by=ctx.mail.from_addr, why=_("tournament"))
                except moderation.ModerationError as exc:
                    raise CommandFailed(str(exc)) from None
    d.rename_entrant(doc, old, new)
    d.entrant(doc, new)["name"] = ""  # type: ignore[index]
    return lambda: _("{old} is replaced by {new} in {id}").format(old=old, new=new, id=trow.id)


def _address(text: str) -> str:
    try:
        return normalize(text)
    except ValueError:
        return text.strip().lower()


def _remove(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    email = _address(target[0])
    entry = d.entrant(trow.doc, email)
    if entry is None or entry.get("status") != "entered":
        raise CommandFailed(_("{address} is not playing in {id}.").format(address=email, id=trow.id))
    if trow.status == "open":
        entry["status"] = "removed"
    else:
        running.leave(ctx, trow, email, "withdrawn", ctx.mail.from_addr)
        running.advance(ctx, trow)
    return lambda: _("{player} was removed from {id}").format(player=running.name_of(ctx, trow.doc, email),
                                                              id=trow.id)


def _repair(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    rounds = trow.doc.get("rounds") or []
    if trow.status != "running" or not rounds or trow.format not in ("swiss", "round-robin", "league"):
        raise CommandFailed(_("only a round of a running round robin, Swiss or league can be paired again."))
    last = rounds[-1]
    for item in last["games"]:
        if item.get("id"):
            row = ctx.tx.get_game(item["id"], for_update=True)
            if row is None or any("move" in e for e in row.record.get("moves", [])) or row.status != "active":
                raise CommandFailed(_("round {n} of {id} has begun (game {game} has a move); it cannot be "
                                      "paired again.").format(n=last["number"], id=trow.id, game=item["id"]))
    for item in last["games"]:
        if item.get("id"):
            row = ctx.tx.get_game(item["id"], for_update=True)
            assert row is not None
            row.status = "cancelled"
            row.to_move = None
            row.deadline_at = None
            row.updated_at = row.finished_at = ctx.now
            row.record["result"] = {"reason": "re-paired", "at": iso(ctx.now)}
            ctx.tx.save_game(row)
            ctx.touched.pop(row.id, None)
    rounds.pop()
    running.advance(ctx, trow)
    return lambda: _("Round {n} of {id} was paired again; the new games replace the old ones").format(
        n=last["number"], id=trow.id)


def _end(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    if trow.status == "open":
        running.cancel(ctx, trow, N_("its organizer ended it before it started."))
        return None
    running.finish(ctx, trow, note=_("The organizer ended it early."))
    return None


def _result(ctx: MailContext, trow: TournamentRow, target: list[str], why: str):  # type: ignore[no-untyped-def]
    game_id, result = target[0].lower(), target[1].lower()
    if not GAME_ID.match(game_id) or not any(item.get("id") == game_id for item in d.running_games(trow.doc)):
        raise CommandFailed(_("{game} is not a game in play in {id}.").format(game=game_id, id=trow.id))
    try:
        moderation.end(ctx, game_id, result, by=ctx.mail.from_addr,
                       why=_("decided for {id}").format(id=trow.id))
    except moderation.ModerationError as exc:
        raise CommandFailed(str(exc)) from None
    running.advance(ctx, trow)
    return None


def challenge(ctx: MailContext, command: Command, trow: TournamentRow) -> None:
    """``tournament T challenge PLACE|ADDRESS`` on a ladder."""
    if trow.format != "ladder":
        raise CommandFailed(_("{id} is not a ladder; challenges are for ladders.").format(id=trow.id))
    if trow.status != "running":
        raise CommandFailed(_("{id} is not running.").format(id=trow.id))
    email = ctx.mail.from_addr
    if not address_proven(ctx, command):
        raise CommandFailed(_("a challenge starts a game, so it needs your token: reply to one of my mails "
                              "with the same line."))
    doc = trow.doc
    board = doc.get("ladder", [])
    word = command.args["target"][0]
    if word.isdigit():
        place = int(word)
        if not 1 <= place <= len(board):
            raise CommandFailed(_("the ladder has places 1 to {n}.").format(n=len(board)))
        defender = board[place - 1]
    else:
        defender = _address(word)
    settings = d.settings_from_json(doc["settings"])
    refusal = ladder.refusal(board, email, defender, running.challenges_of(doc), ctx.now,
                             settings.rematch_days)
    if refusal is not None:
        key, values = refusal
        raise CommandFailed(_ladder_reason(key, values, trow, email))
    row = running.challenge(ctx, trow, email, defender)
    ctx.outcomes.append(f"{email} challenged {defender} in {trow.id}")
    loaded = ctx.load(row.id)
    assert loaded is not None
    game_row, state = loaded
    names = game_names(ctx.tx, game_row)
    seat = next(s.seat for s in game_row.seats if s.email == email)
    ctx.reply(board_section(state, seat, [players_line(game_row, seat, names)]), row.id, kind=TURN,
              headline=_("Your move (move 1). You challenged {player} (place {n}) in {id}: game "
                         "{game}.").format(
                  player=running.name_of(ctx, doc, defender), n=board.index(defender) + 1, id=trow.id,
                  game=row.id))


def _ladder_reason(key: str, values: dict, trow: TournamentRow, email: str) -> str:
    texts = {
        "not-on-ladder": _("you are not on the ladder of {id}; enter first: enter {id}"),
        "defender-not-on-ladder": _("that player is not on the ladder of {id}"),
        "self": _("you cannot challenge yourself"),
        "below": _("you are number {position}: you may challenge only players above you."),
        "too-far": _("from place {position} you may challenge at most {reach} places above."),
        "open-challenge": _("you have a challenge in play already; one at a time"),
        "defences": _("that player defends two challenges already; try again when one is over"),
        "already": _("you two have a game in play already"),
        "rematch": _("you two played recently; the next challenge is possible after {after}"),
    }
    after = values.get("after")
    said = texts[key].format(id=trow.id, **{**values,
                                            **({"after": f"{after:%Y-%m-%d %H:%M} UTC"} if after else {})})
    board = trow.doc.get("ladder", [])
    if key in ("below", "too-far") and email in board:
        said += " " + reach_text(trow, board.index(email) + 1)
    return said


OPS = {"start": _start, "pause": _pause, "resume": _resume, "deadline": _deadline, "replace": _replace,
       "remove": _remove, "repair": _repair, "end": _end, "result": _result}
