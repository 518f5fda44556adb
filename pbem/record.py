"""Game records (the turn log): reading with precise errors, replaying, writing atomically.

A record is the setup plus the ordered moves; every state is derived by replaying it, so the record is
the only thing stored for a game and the only thing a player needs to check a game with ``pbem replay``.
"""

from __future__ import annotations

import copy
import json
import os
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engine import Game, State, get_game, replay
from engine.base import EngineError, ReplayError, apply_entry, is_move_entry
from engine.registry import UnknownGameError
from pbem.i18n import _, ngettext, status_word
from pbem.resources import schema_errors

FORMAT = "pbem-record/1"
# Server-side keys a player may not see: each seat's queued replies (a queue is its player's plan)
# and each seat's private notes (``note GAME TEXT``: shown only in that player's own mails).
PRIVATE_KEYS = ("queue", "notes")
# Keys sealed until the game has a result, then part of the record everyone sees: the notes a
# player wrote to be read at the end (``note GAME secret TEXT``).
SEALED_KEYS = ("secret_notes",)
# Actions the players take (the others are moderators'): shown as "players' action" in replays.
PLAYER_ACTIONS = ("undo", "proposal", "address", "rekey")


class RecordError(ValueError):
    """A record that is not well-formed: ``errors`` are "PATH: reason" strings."""

    def __init__(self, source: str, errors: list[str]):
        self.source = source
        self.errors = errors
        super().__init__(f"{source}: " + "; ".join(errors))


class MissingRecordError(RecordError):
    """The record file is not there: nothing is wrong with a record, so the CLI says "no such file"
    rather than "malformed record"."""

    def __init__(self, source: str):
        super().__init__(source, ["no such file"])


def iso(when: datetime) -> str:
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def place_order(totals: Mapping[str, Any], winners: Sequence[str] = (),
                ranking: Sequence[str] | None = None) -> list[str]:
    """The seats of a result in the order a reader takes it in: the winners first, then the others
    by their points, most first ("Bo wins 35-27", not the seats' order "27-35"). A result's own
    ``ranking`` (players dropped at a deadline after everyone who played on) decides where it has
    one."""
    if ranking:
        order = [s for s in ranking if s in totals] + [s for s in totals if s not in ranking]
    else:
        order = sorted(totals, key=lambda seat: -totals[seat])  # stable: equal points keep seat order
    return [*(s for s in order if s in winners), *(s for s in order if s not in winners)]


def check_record(data: Any, source: str = "record") -> tuple[dict[str, Any], Game]:
    """Validate against the schema, then the game's own option and setup checks."""
    errors = schema_errors(data, "record")
    if errors:
        raise RecordError(source, errors)
    try:
        game = get_game(data["game"])
    except UnknownGameError as exc:
        raise RecordError(source, [f"$.game: {exc}"]) from None
    try:
        game.start(game.normalize_options(data.get("options")), data["setup"])
    except EngineError as exc:
        where = "$.options" if exc.__class__.__name__ == "OptionsError" else "$.setup"
        raise RecordError(source, [f"{where}: {exc}"]) from None
    return data, game


def parse_record(text: str, source: str = "record") -> tuple[dict[str, Any], Game]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RecordError(source, [f"line {exc.lineno} column {exc.colno}: {exc.msg}"]) from None
    return check_record(data, source)


def load_record(path: Path) -> tuple[dict[str, Any], Game]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MissingRecordError(str(path)) from None
    except OSError as exc:
        raise RecordError(str(path), [exc.strerror or str(exc)]) from None
    except UnicodeDecodeError as exc:
        raise RecordError(str(path), [f"not UTF-8 text: {exc.reason}"]) from None
    return parse_record(text, str(path))


def dump_record(record: Mapping[str, Any]) -> str:
    return json.dumps(record, indent=1, ensure_ascii=False) + "\n"


def write_record(path: Path, record: Mapping[str, Any]) -> None:
    """Write atomically (temp file, fsync, rename): a crash leaves the old or the new record whole."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(dump_record(record))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def new_record(game: Game, options: Mapping[str, Any], setup: Mapping[str, Any],
               players: Mapping[str, Mapping[str, str]] | None = None) -> dict[str, Any]:
    record: dict[str, Any] = {"format": FORMAT, "game": game.name, "options": dict(options),
                              "setup": dict(setup)}
    if players:
        record["players"] = {seat: dict(info) for seat, info in players.items()}
    record["moves"] = []
    return record


def replay_record(record: Mapping[str, Any], game: Game | None = None,
                  upto_ply: int | None = None) -> State:
    game = game or get_game(record["game"])
    return replay(game, record.get("options"), record["setup"], record["moves"], upto_ply=upto_ply)


def draw_chances(game: Game, state: State, record: dict[str, Any], now: datetime) -> list[str]:
    """Draw every chance event now due (Space Truckin' tiles and quadrant) and log it in the record."""
    notes: list[str] = []
    while state.pending_chance() is not None and not state.is_over:
        value = game.draw_chance(state, record["setup"], now.second)
        notes += state.apply_chance(value)
        record["moves"].append({"chance": value, "at": iso(now)})
    return notes


def append_move(game: Game, state: State, record: dict[str, Any], text: str, now: datetime,
                seat: str | None = None) -> tuple[str, list[str]]:
    """Apply a move (raising MoveError) and log it; returns its canonical text and announcements."""
    seat = seat or state.to_move
    move = state.parse_move(text)
    canonical = state.move_text(move)
    notes = state.push(move)
    record["moves"].append({"seat": seat, "move": canonical, "at": iso(now)})
    notes += draw_chances(game, state, record, now)
    return canonical, notes


def notes_again(before: State, entries: list[dict[str, Any]], start: int) -> list[str]:
    """The announcements of ``entries`` (a move and its chance events, at ``start`` in the record)
    made once more from the position ``before`` them: in the language now active, for a reader
    other than the one whose language the move was played in."""
    state = before.copy()
    return [note for i, entry in enumerate(entries) for note in apply_entry(state, entry, start + i)]


def positions(record: Mapping[str, Any], game: Game | None = None) -> Iterator[State]:
    """Each position in turn: ply 0, then after every move (chance events and drops folded in: they
    are not plies, so they belong to the position of the move before them)."""
    for state, _entries in _positions_counted(record, game):
        yield state


def _positions_counted(record: Mapping[str, Any],
                       game: Game | None = None) -> Iterator[tuple[State, int]]:
    """Each position with the number of record entries it took to reach it."""
    game = game or get_game(record["game"])
    state = game.start(game.normalize_options(record.get("options")), record["setup"])
    entries = record["moves"]
    index = 0
    while index < len(entries) and not is_move_entry(entries[index]):
        apply_entry(state, entries[index], index)
        index += 1
    yield state.copy(), index
    while index < len(entries):
        apply_entry(state, entries[index], index)
        index += 1
        while index < len(entries) and not is_move_entry(entries[index]):
            apply_entry(state, entries[index], index)
            index += 1
        yield state.copy(), index


def _action_entries(action: Mapping[str, Any], moves: list[Mapping[str, Any]]) -> int:
    """Where an action stands in the entry list: its ``entries`` (the record's length right after
    it), or for an action written without it, the entries up to its ``ply``."""
    entries = action.get("entries")
    if isinstance(entries, int):
        return entries
    ply = action.get("ply") if isinstance(action.get("ply"), int) else 0
    seen = 0
    for index, entry in enumerate(moves):
        if is_move_entry(entry):
            if seen == ply:
                return index
            seen += 1
    return len(moves)


def positions_with_actions(record: Mapping[str, Any], game: Game | None = None
                           ) -> Iterator[tuple[State, list[dict[str, Any]]]]:
    """Each position with the actions (``record["actions"]``: moderators' rollbacks, pauses, ...,
    players' undos) taken while the game stood there.

    Actions are placed by entry count, not by ply: after a rollback the plies it removed are played
    again, but the rollback belongs after the position it went back to.
    """
    actions = [a for a in record.get("actions") or [] if isinstance(a, Mapping)]
    placed = [(_action_entries(a, record["moves"]), dict(a)) for a in actions]
    # Actions are in time order. One taken before a rollback, further along than the rollback went
    # back to, belongs to the abandoned line: it is shown where that line was cut off.
    cut: int | None = None
    for i in range(len(placed) - 1, -1, -1):
        at, action = placed[i]
        if cut is not None and at > cut:
            placed[i] = (cut, action)
        if "removed" in action or action.get("action") in ("rollback", "undo"):
            cut = at if cut is None else min(cut, at)
    held: State | None = None
    low = -1
    for state, consumed in _positions_counted(record, game):
        if held is not None:
            yield held, [a for at, a in placed if low <= at < consumed]
            low = consumed
        held = state
    assert held is not None  # there is always ply 0
    yield held, [a for at, a in placed if at >= low]


def describe_action(action: Mapping[str, Any], game: Game | None = None) -> str:
    """One line for ``pbem replay``, moderators' listings and the archive, in the reader's language
    (seats as the reader names them when ``game`` is given)."""
    kind = str(action.get("action", "?"))
    moves = action.get("moves")
    count = moves if isinstance(moves, int) else 0
    seat = _seat_label(game, action.get("seat"))
    if kind == "rollback":
        what = ngettext("rollback {n} move", "rollback {n} moves", count).format(n=moves)
    elif kind == "undo":
        what = ngettext("undo {n} move", "undo {n} moves", count).format(n=moves)
    elif kind == "end":
        winners = (action.get("result") or {}).get("winners") or []
        what = _("end: {result}").format(result=_("draw") if len(winners) != 1 else _("{seat} wins").format(
            seat=_seat_label(game, winners[0])))
    else:
        what = {
            "deadline": lambda: _("deadline set to {when}").format(when=action.get("until")),
            "replace": lambda: _("replace {seat}: {old} -> {new}").format(
                seat=seat, old=action.get("old"), new=action.get("new")),
            "block": lambda: _("block {address}").format(address=action.get("address")),
            "unblock": lambda: _("unblock {address}").format(address=action.get("address")),
            "proposal": lambda: _("{seat} proposed {what}: {outcome}").format(
                seat=seat, what=_proposed(action), outcome=status_word(str(action.get("outcome")))),
            "address": lambda: _("{seat} moved to a new address").format(seat=seat),
            "rekey": lambda: _("new token for {seat}").format(seat=seat),
            "pause": lambda: _("pause"), "resume": lambda: _("resume"), "resend": lambda: _("resend"),
        }.get(kind, lambda: kind)()
    players = kind in PLAYER_ACTIONS and not action.get("moderator")
    label = _("players' action") if players else _("moderator action")
    text = _("--- {label} at ply {ply}: {what} by {by}").format(
        label=label, ply=action.get("ply"), what=what, by=action.get("by"))
    if kind == "undo" and action.get("accepted_by"):
        text += " " + _("(accepted by {players})").format(players=", ".join(action["accepted_by"]))
    return text + (f": {action['why']}" if action.get("why") else "")


def _seat_label(game: Game | None, seat: Any) -> str:
    return game.seat_label(str(seat)) if game is not None and seat else str(seat)


def _proposed(action: Mapping[str, Any]) -> str:
    return _("a draw") if action.get("what") == "draw" else _("to abandon the game")


def hidden_keys(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The keys that a player's (or the public's) view of ``record`` leaves out now: the private
    ones always, the sealed ones until the game has a result."""
    return PRIVATE_KEYS if record.get("result") else PRIVATE_KEYS + SEALED_KEYS


def player_view(record: Mapping[str, Any], game: Game | None = None) -> dict[str, Any]:
    """The record as a player may see it: hidden setup (future draws), queued replies and private
    notes removed, and notes sealed until the end while it has not come."""
    game = game or get_game(record["game"])
    hidden = hidden_keys(record)
    view = copy.deepcopy({k: v for k, v in record.items() if k not in hidden})
    view["setup"] = game.redact_setup(record["setup"])
    return view


def replay_json(state: State) -> dict[str, Any]:
    """One line of ``pbem replay --json``: a stable contract for moderators' tools."""
    over = state.is_over
    legal_texts = getattr(state, "legal_placement_texts", None)
    if over:
        legal: list[str] = []
    elif legal_texts is not None:
        legal = legal_texts()
    else:
        legal = [state.move_text(m) for m in state.legal_moves()]
    line: dict[str, Any] = {"ply": state.ply, "to_move": None if over else state.to_move,
                            "over": over, "legal": legal}
    info = state.replay_info()
    if over and "ending" in info:
        info = {**info, "ending": []}
    line.update(info)
    line["scores"] = dict(state.score().totals)
    return line


__all__ = ["FORMAT", "PRIVATE_KEYS", "SEALED_KEYS", "RecordError", "ReplayError", "append_move",
           "check_record", "describe_action", "draw_chances", "dump_record", "hidden_keys", "iso",
           "load_record", "new_record", "parse_record", "place_order",
           "player_view", "positions", "positions_with_actions", "replay_json", "replay_record",
           "write_record"]
