"""Computer seats: ``new GAME with computer`` (level 3) or ``with computer:N``, for any seat of any
game that offers computer players (``Game.computer_levels``), mixed with people as the game allows.

A computer seat is a seat like any other, so that every rule of the server (turns, deadlines,
stale moves, the record) applies to it unchanged: it has an address, one that can never receive
mail (``ai-LEVEL-TAG@computer.invalid``: ``.invalid`` is reserved and never resolves), and the
outgoing stage drops every mail to it. Its moves come in as mails from that address, with the
seat's token, stored in the durable intake like anyone's (``pbem.daemon.thinker`` thinks and
writes them): one Message-ID per game and position, so a move computed twice is stored once, and
a move that arrives late is refused as stale like a person's.

Games with a computer seat are not rated: they do not count in the standings.
"""

from __future__ import annotations

import secrets
import textwrap
from datetime import datetime
from email.message import EmailMessage
from email.utils import format_datetime, formataddr

from engine import EngineError, Game, get_game
from engine.ai import DEFAULT_LEVEL, level_info, levels_help, player_entry
from engine.registry import UnknownGameError, available_games
from pbem.commands.helptext import HELP_TOPICS
from pbem.commands.parsing import COMPUTER_WORD
from pbem.config import Config
from pbem.i18n import _
from pbem.processing.computer_seats import DOMAIN, is_computer, level_of
from pbem.processing.games import CommandFailed
from pbem.reading.addresses import plus_address
from pbem.store.base import GameRow, Seat
from pbem.tokens import seat_token

SOURCE = "computer"  # the intake's source of its moves


def computer_seat(row: GameRow) -> Seat | None:
    """The seat to move, if the computer plays it."""
    return next((s for s in row.seats if s.seat == row.to_move and is_computer(s.email)), None)


def rated(row: GameRow) -> bool:
    """Games against the computer do not count in the standings (a level-1 computer would hand out
    points; a rating of the computer is measured by ``bench/ai.py`` instead)."""
    return not any(is_computer(s.email) for s in row.seats)


def _level(game: Game, word: str) -> int:
    match = COMPUTER_WORD.match(word)
    text = match.group(1) if match else None
    offered = game.computer_levels
    if not offered:
        raise CommandFailed(_("{game} has no computer player; challenge people: new {name} with "
                              "ADDRESS").format(game=game.title, name=game.name))
    example = _("e.g. {command}").format(command=f"new {game.name} with computer:{offered[-1]}")
    if text is None:
        return DEFAULT_LEVEL if DEFAULT_LEVEL in offered else offered[-1]
    if not text.isdigit():
        raise CommandFailed(_("'{word}': the computer's level is a number from {low} to {high}, "
                              "{example}.").format(word=word, low=offered[0], high=offered[-1],
                                                   example=example))
    try:
        level_info(int(text), offered)
    except EngineError as exc:
        raise CommandFailed(f"{exc}; {example}.") from None
    return int(text)


def seat_addresses(game_name: str, opponents: list[str]) -> tuple[list[str], dict[str, str]]:
    """The opponents with each ``computer[:N]`` replaced by a new computer seat's address, and the
    names the players read: "computer level 3", or with several "computer A level 3", ..."""
    if not any(COMPUTER_WORD.match(w) for w in opponents):
        return opponents, {}
    try:
        game = get_game(game_name)
    except UnknownGameError as exc:
        raise CommandFailed(str(exc)) from None
    words = [w for w in opponents if COMPUTER_WORD.match(w)]
    people, names = [], {}
    for word in opponents:
        if not COMPUTER_WORD.match(word):
            people.append(word)
            continue
        level = _level(game, word)
        address = f"ai-{level}-{secrets.token_hex(4)}@{DOMAIN}"
        letter = f" {'ABCDE'[len(names)]}" if len(words) > 1 else ""
        names[address] = f"computer{letter} level {level}"  # the record's name: English
        people.append(address)
    return people, names


def adopt(row: GameRow) -> None:
    """Computer seats accept at once and are named in the record as the engine's players."""
    for seat in row.seats:
        if is_computer(seat.email):
            seat.accepted = True
            entry = {**player_entry(level_of(seat.email)), "name": seat.name, "email": seat.email}
            row.record.setdefault("players", {})[seat.seat] = entry


def message_id(row: GameRow) -> str:
    """One per game and position: a move computed again after a crash is the same message."""
    return f"<pbem-ai.{row.id}.m{len(row.record['moves'])}@{DOMAIN}>"


def move_mail(config: Config, secret: bytes, row: GameRow, seat: Seat, ply: int, move: str,
              now: datetime) -> bytes:
    """The computer's move as the mail a player would send: from the seat's address, to its tokened
    reply address keyed with the move number (so a late move is refused as stale)."""
    generation = int((row.record.get("players") or {}).get(seat.seat, {}).get("token_generation", 0))
    token = seat_token(secret, row.id, seat.seat, generation)
    message = EmailMessage()
    message["From"] = formataddr((seat.name, seat.email))
    message["To"] = plus_address(config.address, f"{token}-{ply + 1}")
    message["Date"] = format_datetime(now)
    message["Message-ID"] = message_id(row)
    message.set_content(f"move {row.id} {move}\n")
    return message.as_bytes()


def help_new() -> str:
    lines = ["new GAME [OPTIONS] with ADDRESS [ADDRESS ...] [as SEAT]", "",
             _("Challenges the players at those addresses; each gets an invitation to accept. "
               "Instead of an address, write 'computer' (level {level}) or 'computer:N' for a "
               "computer player at level N: it accepts at once and moves within seconds of your "
               "move. In games for more players, mix people and computers as you like, e.g."
               ).format(level=DEFAULT_LEVEL),
             "  new alien-city with computer:2",
             "  new space-truckin with bo@example.org computer computer:1", "",
             _("Games against the computer are not rated: they do not count in the standings. "
               "'new GAME open' posts a challenge anyone may join (see challenges)."), "",
             _("Options of every game: a time control (time 5, time fischer 10+1.5 cap 10, time "
               "total 30, weekends off, nights off: see help time).")]
    text = []
    for line in lines:
        text += [line] if line.startswith("  ") else (textwrap.wrap(line, 72) or [""])
    for name in available_games():
        game = get_game(name)
        if game.computer_levels:
            text += ["", f"{game.title}:", levels_help(game.computer_levels)]
    return "\n".join(text)


HELP_TOPICS["new"] = help_new
HELP_TOPICS["computer"] = help_new
