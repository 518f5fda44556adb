"""The parts of mails that show a game: board, scores, legal moves, result, subjects and footers.

Game-neutral: everything shown comes from the engine's State interface.
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Callable
from typing import Any

from engine import State, get_game
from pbem.outbox.compose import Attachment, Section
from pbem.store.base import GameRow


def subject(game_id: str, text: str) -> str:
    return f"[pbem {game_id}] {text}"


def seat_label(row: GameRow, seat: str) -> str:
    for s in row.seats:
        if s.seat == seat:
            return f"{s.name} <{s.email}>" if s.name else s.email
    return seat


def players_line(row: GameRow) -> str:
    return "Players: " + ", ".join(f"{s.seat} {seat_label(row, s.seat)}" for s in row.seats)


# Renderings of one position are shared by all the mails about it (mover, opponents, observers).
# Keyed by the state object's identity and ply; the weak reference proves the object is the same one.
_MEMO: dict[int, tuple[weakref.ref, int, dict[tuple[str, str | None], Any]]] = {}


def _memo(state: State, what: str, viewer: str | None, make: Callable[[], Any]) -> Any:
    entry = _MEMO.get(id(state))
    if entry is None or entry[0]() is not state or entry[1] != state.ply:
        if len(_MEMO) > 64:
            _MEMO.clear()
        entry = (weakref.ref(state), state.ply, {})
        _MEMO[id(state)] = entry
    cache = entry[2]
    key = (what, viewer)
    if key not in cache:
        cache[key] = make()
    return cache[key]


def scores_line(state: State) -> str:
    totals = _memo(state, "score", None, state.score).totals
    joined = ", ".join(f"{seat} {points}" for seat, points in totals.items())
    return f"Scores so far: {joined}"


def board_section(state: State, viewer: str | None, title: str | None = None,
                  lines: list[str] | None = None, with_legal: bool = True) -> Section:
    """Board, scores and (unless over) the legal moves of the seat to move."""
    section = Section(title=title, lines=list(lines or []),
                      board_text=_memo(state, "text", viewer, lambda: state.render(viewer)),
                      board_html=_memo(state, "html", viewer, lambda: state.render_html(viewer)))
    if state.is_over:
        section.scores = _memo(state, "score", None, state.score).text
    else:
        section.scores = scores_line(state)
        mover = state.to_move
        if with_legal and mover is not None:
            section.legal = _memo(state, "legal", mover, lambda: state.render_legal(mover))
    return section


def result_lines(row: GameRow, state: State) -> list[str]:
    result = row.record.get("result") or {}
    winners = result.get("winners") or state.score().winners
    totals = state.score().totals
    reason = result.get("reason")
    lines = []
    if reason == "resigned":
        lines.append(f"{result.get('resigned')} resigned.")
    if len(winners) > 1:
        lines.append("The game is a draw: " + ", ".join(winners) + " share the win.")
    elif winners:
        lines.append(f"{winners[0]} ({seat_label(row, winners[0])}) wins.")
    if reason != "resigned":
        lines.append("Final scores: " + ", ".join(f"{s} {p}" for s, p in totals.items()))
    return lines


def record_attachment(row: GameRow) -> Attachment:
    """The player-facing record (hidden setup removed), ready for ``pbem replay``."""
    # A shallow view: serialised at once and never mutated, so the deep copy player_view makes for
    # callers that edit their copy is not needed; compact JSON uses the C encoder (indent does not).
    view = {**row.record, "setup": get_game(row.game).redact_setup(row.record["setup"]), "id": row.id}
    content = json.dumps(view, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
    return Attachment(filename=f"{row.id}.json", content=content)


def reply_footer(game_id: str | None, server_address: str, status: str | None = None) -> list[str]:
    lines = []
    if game_id and status == "invited":
        lines.append(f"Game {game_id} starts when every player has accepted: reply 'accept' or "
                     "'decline' to the invitation. Keep this mail's Reply-To address: it carries "
                     "your secret token.")
    elif game_id:
        lines.append(f"Game {game_id}: to move, press Reply and write your move on the first line "
                     "(for example: tower red C4 claim C4). Keep this mail's Reply-To address: it "
                     "carries your secret token.")
        lines.append(f"Other commands: board {game_id}, resign {game_id}, games, help.")
    else:
        lines.append(f"Write commands to {server_address}, one per line. Send 'help' for the list.")
    if status not in (None, "invited"):
        lines.append("The attached .json file is the game record: replay it with `pbem replay FILE`.")
    return lines
