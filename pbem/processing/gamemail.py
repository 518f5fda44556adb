"""What the mails about a game show, written for the person who reads them.

Every function takes the reader's seat (None for observers and moderators): "(you)" marks the
reader, only the seat to move is told to move, and the legal list goes only to that seat. Players
are named by their nickname, else the name their mail client sent, else their address. Moves are
numbered one way everywhere: "move 12" is the twelfth move of the game.

Game-neutral: everything shown comes from the engine's State interface and the record.
"""

from __future__ import annotations

import json
import textwrap
import weakref
from collections.abc import Callable
from typing import Any

from engine import EngineError, State, get_game
from pbem.clocks.privacy import others_view
from pbem.i18n import _, language
from pbem.outbox.compose import ActionGroup, Attachment, Section
from pbem.processing.computer_seats import display_name, is_computer
from pbem.processing.mail_names import player_name
from pbem.record import hidden_keys, place_order
from pbem.store.base import GameRow, Tx

SUBJECT_NAMES_MAX = 48


# --- who is who --------------------------------------------------------------------------------------

class SeatNames(dict[str, str]):
    """Seat -> how a player is called, knowing the game, so that ``who`` shows the seat in the
    reader's words (``Schwarz (du)``) wherever the names go, without naming a game."""

    def __init__(self, game: str, names: dict[str, str] | None = None):
        super().__init__(names or {})
        self.game = game

    def label(self, seat: str) -> str:
        return seat_label(self.game, seat)


def seat_label(game: str, seat: str) -> str:
    """A seat of ``game`` as the reader calls it; the stored key (``black``) stays what commands and
    records use."""
    return get_game(game).seat_label(seat)


def game_names(tx: Tx, row: GameRow) -> SeatNames:
    """Seat -> how players are called in mails: nickname, else the mail client's name, else the
    address (``mail_names``)."""
    names = SeatNames(row.game)
    for seat in row.seats:
        if is_computer(seat.email):
            names[seat.seat] = display_name(seat.email or "", seat.name or "")
            continue
        names[seat.seat] = player_name(tx, seat.email, seat.name or "") or seat.seat
    return names


def who(seat: str | None, reader: str | None, names: dict[str, str]) -> str:
    """"black (you)" for the reader, "white (Bo)" for another player."""
    if seat is None:
        return _("nobody")
    label = names.label(seat) if isinstance(names, SeatNames) else seat
    if seat == reader:
        return _("{seat} (you)").format(seat=label)
    name = names.get(seat)
    return f"{label} ({name})" if name and name != seat else label


def players_line(row: GameRow, reader: str | None, names: dict[str, str]) -> str:
    return _("Players: {players}").format(players=", ".join(who(s.seat, reader, names) for s in row.seats))


def thread_subject(row: GameRow, names: dict[str, str]) -> str:
    """The one subject of every mail of a game, fixed when the game is created (a later nickname
    must not split the thread): ``[pbem ac-12] Ann vs Bo``. The tag names the game (its prefix, the
    kind); the subject stays short because every one-tap link of a mail repeats it."""
    stored = row.record.get("subject")
    if isinstance(stored, str) and stored:
        return stored
    short = [(names.get(s.seat) or s.seat).split("@")[0] for s in row.seats]
    joined = " vs ".join(short) if len(short) == 2 else ", ".join(short)
    if len(joined) > SUBJECT_NAMES_MAX:
        joined = joined[:SUBJECT_NAMES_MAX - 1].rstrip(" ,") + "…"
    subject = f"[pbem {row.id}] {joined}"
    row.record["subject"] = subject
    return subject


# --- positions ---------------------------------------------------------------------------------------

# Renderings of one position are shared by all the mails about it (mover, opponents, observers).
# Keyed by the state object's identity and ply; the weak reference proves the object is the same one.
_MEMO: dict[int, tuple[weakref.ref, int, dict[tuple[str, str | None, str], Any]]] = {}


def _memo(state: State, what: str, viewer: str | None, make: Callable[[], Any]) -> Any:
    entry = _MEMO.get(id(state))
    if entry is None or entry[0]() is not state or entry[1] != state.ply:
        if len(_MEMO) > 64:
            _MEMO.clear()
        entry = (weakref.ref(state), state.ply, {})
        _MEMO[id(state)] = entry
    cache = entry[2]
    key = (what, viewer, language())  # the engine writes boards and scores in the reader's language
    if key not in cache:
        cache[key] = make()
    return cache[key]


def score_of(state: State) -> Any:
    return _memo(state, "score", None, state.score)


def scores_line(state: State, reader: str | None, names: dict[str, str]) -> str:
    totals = score_of(state).totals
    return _("Scores: {scores}").format(
        scores=", ".join(f"{who(seat, reader, names)} {points}" for seat, points in totals.items()))


def next_move(state: State) -> int:
    """The number the next move will have."""
    return state.ply + 1


def legal_actions(state: State, viewer: str) -> list[ActionGroup]:
    """The legal moves as taps. A tap on an old mail is refused, not played in a later position:
    the link's address carries the move number (see ``games.reply_key``)."""
    def make() -> list[ActionGroup]:
        return [ActionGroup(label, items, moves=True)  # the engine's (text, line) pairs as they are
                for label, items in state.game.renderer.legal_groups(state, viewer)]
    return _memo(state, "actions", viewer, make)


def game_ended(row: GameRow) -> bool:
    """The game will have no more moves, whatever its last position says: over (by its rules, a
    resignation, a loss on time, an agreement, a moderator), declined or cancelled."""
    return row.status in ("over", "declined", "cancelled")


def board_section(state: State, viewer: str | None, lines: list[str] | None = None, *,
                  title: str | None = None, with_legal: bool = True,
                  moderator: bool = False, ended: bool = False) -> Section:
    """Board and scores; the legal moves too when the viewer is the seat to move (a moderator sees
    them listed, without links: a moderator does not move for a seat). ``ended``: the game is over
    (``game_ended``), so the board names nobody to move even where its position would go on."""
    ended = ended and not state.is_over  # a position that ended by the rules says so itself
    section = Section(title=title, lines=list(lines or []),
                      board_text=_memo(state, f"text{ended:d}", viewer,
                                       lambda: state.render(viewer, ended=ended)),
                      board_html=_memo(state, f"html{ended:d}", viewer,
                                       lambda: state.render_html(viewer, ended=ended)))
    mover = state.to_move
    if state.is_over or ended or not with_legal or mover is None:
        return section
    if viewer is not None and mover == viewer:
        section.legal = _memo(state, "legal", viewer, lambda: state.render_legal(viewer))
        section.actions = legal_actions(state, viewer)
    elif moderator:
        section.legal = _memo(state, "legal", mover, lambda: state.render_legal(mover))
    return section


def example_move(state: State, viewer: str | None) -> str | None:
    """A move the viewer could write now, for the footer's "for example": in the reader's words,
    which the server reads back in any language."""
    if state.is_over or viewer is None or state.to_move != viewer:
        return None
    moves = _memo(state, "moves", viewer, state.legal_moves)
    return state.local_move_text(moves[len(moves) // 2]) if moves else None


def local_move(state: State, text: str) -> str:
    """A move's canonical text (what records keep) in the reader's words; ``state`` is the
    position it was made in. The text itself if it does not parse there."""
    try:
        return state.local_move_text(state.parse_move(text))
    except EngineError:
        return text


# --- results -----------------------------------------------------------------------------------------

def _totals(state: State, winners: list[str], result: dict[str, Any]) -> str:
    """The points in place order, the winner's first: "you win 35–27", "Bo wins 35–27"."""
    totals = score_of(state).totals
    return "–".join(str(totals[seat]) for seat in place_order(totals, winners, result.get("ranking")))


def result_headline(row: GameRow, state: State, reader: str | None, names: dict[str, str]) -> str:
    """"Game over: you win 84–66", "Game over: Bo resigned; you win", ..."""
    result = row.record.get("result") or {}
    winners = result.get("winners") or score_of(state).winners
    reason = result.get("reason")
    if reason == "resigned":
        quitter = result.get("resigned")
        cause = _("you resigned") if quitter == reader else _("{player} resigned").format(
            player=names.get(quitter, quitter))
    elif reason == "forfeit":
        late = result.get("forfeited") or result.get("seat")
        cause = _("you forfeited") if late == reader else _("{player} forfeited").format(
            player=names.get(late, late))
    elif reason in ("adjudicated", "ended", "moderator"):
        cause = _("ended by a moderator")
    elif reason == "agreed draw":
        return _("Game over: drawn by agreement {scores}").format(scores=_totals(state, winners, result))
    elif reason == "abandoned by agreement":
        return _("Game over: abandoned by agreement (not rated)")
    else:
        cause = ""
    if len(winners) > 1:
        outcome = _("a draw") if len(winners) == len(row.seats) else _("shared win: {players}").format(
            players=", ".join(_("you") if w == reader else names.get(w, w) for w in winners))
    elif winners:
        outcome = _("you win") if winners[0] == reader else _("{player} wins").format(
            player=names.get(winners[0], winners[0]))
    else:
        outcome = _("no winner")
    if reason in (None, "scored"):
        return _("Game over: {outcome} {scores}").format(outcome=outcome,
                                                         scores=_totals(state, winners, result))
    return _("Game over: {cause}; {outcome}").format(cause=cause, outcome=outcome)


def result_section(row: GameRow, state: State) -> Section:
    """The final scoring as the engine tabulates it; the headline already named the winner. A prose
    line of it that would pass the mail width (the "if the game ended now" note of a game ended
    before its last move, with many players) is wrapped."""
    lines = []
    for line in score_of(state).text.split("\n"):
        lines += textwrap.wrap(line, 76, subsequent_indent="  ") if len(line) > 76 else [line]
    return Section(title=_("Final scores"), pre="\n".join(lines))


def record_attachment(row: GameRow) -> Attachment:
    """The player-facing record (hidden setup removed, the clock log without the players' private
    dates: ``pbem.clocks.privacy``), ready for ``pbem replay``."""
    # A shallow view: serialised at once and never mutated, so the deep copy player_view makes for
    # callers that edit their copy is not needed; compact JSON uses the C encoder (indent does not).
    hidden = hidden_keys(row.record)
    view = others_view({k: v for k, v in row.record.items() if k != "subject" and k not in hidden})
    view.update(setup=get_game(row.game).redact_setup(row.record["setup"]), id=row.id)
    content = json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    return Attachment(filename=f"{row.id}.json", content=content)


# --- footers -----------------------------------------------------------------------------------------

def footer(row: GameRow | None, state: State | None, reader: str | None, server_address: str, *,
           observer: bool = False, attached: bool = False, moves_shown: bool = True) -> list[str]:
    """What the reader can do next, in two or three lines, right for this game and this moment.
    How to move is said only in a mail that lists the legal moves (``moves_shown``): the example
    must be one of them."""
    if row is None:
        return [_("Write commands to {address}, one per line. Send 'help' for the list.").format(
            address=server_address)]
    gid = row.id
    lines = []
    mine = next((s for s in row.seats if s.seat == reader), None)
    if row.status == "invited" and mine is not None and not mine.accepted:
        lines.append(_("Reply 'accept' to play or 'decline' to refuse. 'rules {game}' sends the rules."
                       ).format(game=row.game))
    elif row.status == "invited":
        lines.append(_("The game starts when every player has accepted. Commands: games, rules {game}, "
                       "help.").format(game=row.game))
    elif row.status == "active" and state is not None and not observer and reader is not None:
        example = example_move(state, reader) if moves_shown else None
        if example:
            lines.append(_("To move, press Reply and write your move on the first line, for example:"))
            lines.append(f"  {example}")
        lines.append(_("Commands: board {id}, history {id}, message {id} TEXT, games, help, resign {id}."
                       ).format(id=gid))
    elif observer:
        lines.append(_("You are observing {id}. To stop, send: unobserve {id}").format(id=gid))
    elif row.status == "active":  # a moderator, or someone who asked about a game they do not play
        lines.append(_("Commands: board {id}, history {id}, games, help.").format(id=gid))
    elif row.status in ("declined", "cancelled"):  # nothing was played: no board, no rematch
        lines.append(_("Game {id} was not played. Commands: games, challenges, help.").format(id=gid))
    else:
        lines.append(_("This game is over. Commands: history {id}, board {id} N, rematch {id}, record {id}."
                       ).format(id=gid))
    if attached:
        lines.append(_("The attached {id}.json is the game record: replay it with `pbem replay`.").format(
            id=gid))
    if reader is not None and not observer and row.status == "invited":
        lines.append(_("Keep the Reply-To address: it carries your secret token for this seat."))
    return lines
