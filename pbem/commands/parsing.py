"""Commands read from mail: the text forms players type and the JSON turn file, into one shape.

Parsing knows the command words but no game rules: a line that is not a command is a move only when
the mail is a reply about a game (its token or subject names one); otherwise it is an unknown command
and the nearest command words are suggested.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pbem.resources import json_path, validator

VERBS: list[str] = ["help", "new", "accept", "decline", "move", "board", "games", "resign"]
GAME_ID = re.compile(r"^[a-z]+-\d+$", re.IGNORECASE)
USAGE = {
    "help": "help [TOPIC]   (topics: commands, notation, alien-city, ...)",
    "new": "new GAME [OPTIONS] with ADDRESS [ADDRESS ...] [as SEAT]",
    "accept": "accept GAME",
    "decline": "decline GAME",
    "move": "move GAME MOVE   (or just MOVE in a reply to your board mail)",
    "board": "board GAME",
    "games": "games",
    "resign": "resign GAME",
}


# Extra command words registered by feature modules (observe, vacation, admin, history, ...):
# verb -> parser of the words after the verb. A parser returns a Command or a CommandError.
ExtraParser = Callable[[str, list[str], bool], "Command | CommandError"]
_EXTRA: dict[str, ExtraParser] = {}


def register_verb(verb: str, usage: str, parser: ExtraParser) -> None:
    """Teach the reader a new command word (or two words, like "accept undo", which then take
    precedence over the first word's own meaning); ``usage`` appears in help and in suggestions."""
    if verb not in VERBS:
        VERBS.append(verb)
    USAGE[verb] = usage
    _EXTRA[verb] = parser


@dataclass
class Command:
    verb: str
    line: str  # as written (for reports)
    game: str | None = None  # game id for game commands; game name for "new"
    move: str | None = None
    ply: int | None = None
    token: str | None = None
    opponents: list[str] = field(default_factory=list)
    seat: str | None = None  # "new ... as SEAT"
    option_words: list[str] = field(default_factory=list)
    options: dict[str, Any] | None = None
    topic: str | None = None
    args: dict[str, Any] = field(default_factory=dict)  # for registered commands


@dataclass
class CommandError:
    line: str
    message: str


def suggest_verbs(word: str) -> list[str]:
    return difflib.get_close_matches(word.lower(), VERBS, n=3, cutoff=0.5)


def parse_line(line: str, *, in_game_reply: bool) -> Command | CommandError | None:
    """One typed line. Returns None for lines that carry no command (the ``token`` line)."""
    text = line.strip().rstrip(".").strip()
    if not text:
        return None
    words = text.split()
    verb = words[0].lower().rstrip(":")
    rest = words[1:]
    if verb == "token":
        return None
    if rest and f"{verb} {rest[0].lower()}" in _EXTRA:  # two-word commands, e.g. "accept undo GAME"
        return _EXTRA[f"{verb} {rest[0].lower()}"](line, rest[1:], in_game_reply)
    if verb in _EXTRA:
        return _EXTRA[verb](line, rest, in_game_reply)
    if verb == "help":
        return Command("help", line, topic=" ".join(rest).lower() or None)
    if verb == "games" and not rest:
        return Command("games", line)
    if verb in ("accept", "decline", "board", "resign"):
        if len(rest) > 1 or (rest and not GAME_ID.match(rest[0])):
            return CommandError(line, f"{verb} takes a game id like ac-17: {USAGE[verb]}")
        return Command(verb, line, game=rest[0].lower() if rest else None)
    if verb == "move":
        if rest and GAME_ID.match(rest[0]):
            if len(rest) < 2:
                return CommandError(line, f"the move is missing: {USAGE['move']}")
            return Command("move", line, game=rest[0].lower(), move=" ".join(rest[1:]))
        if rest and in_game_reply:
            return Command("move", line, move=" ".join(rest))
        return CommandError(line, f"name the game: {USAGE['move']}")
    if verb == "new":
        return _parse_new(line, rest)
    if in_game_reply:
        return Command("move", line, move=text)
    near = suggest_verbs(verb)
    hint = f" Did you mean {' or '.join(near)}?" if near else ""
    return CommandError(
        line, f"unknown command {words[0]!r}.{hint} Commands: {', '.join(VERBS)}. "
              "To move, reply to your board mail with the move, or write: move GAME MOVE.")


def _parse_new(line: str, rest: list[str]) -> Command | CommandError:
    if not rest:
        return CommandError(line, f"which game? {USAGE['new']}")
    lowered = [w.lower() for w in rest]
    if "with" not in lowered:
        return CommandError(line, f"say whom you challenge: {USAGE['new']}")
    at = lowered.index("with")
    option_words = rest[1:at]
    tail = rest[at + 1:]
    seat = None
    if len(tail) >= 2 and tail[-2].lower() == "as":
        seat = tail[-1].lower()
        tail = tail[:-2]
    cleaned = [w.strip(",;<>") for w in tail if w.strip(",;<>")]
    opponents = [w.lower() for w in cleaned if "@" in w]
    option_words = option_words + [w for w in cleaned if "@" not in w]  # e.g. "with bob@x time 3"
    if not opponents:
        return CommandError(line, f"'with' takes mail addresses: {USAGE['new']}")
    return Command("new", line, game=rest[0].lower(), opponents=opponents, seat=seat,
                   option_words=option_words)


def parse_text(lines: list[str], *, in_game_reply: bool) -> list[Command | CommandError]:
    results = []
    for line in lines:
        parsed = parse_line(line, in_game_reply=in_game_reply)
        if parsed is not None:
            results.append(parsed)
    return results


def parse_json(document: Any) -> list[Command | CommandError]:
    """A turn file already decoded from JSON; schema errors name the JSON path."""
    errors = sorted(validator("command").iter_errors(document), key=lambda e: len(e.absolute_path))
    if errors:
        best = _deepest(errors)
        return [CommandError("(JSON turn file)", f"{json_path(best)}: {best.message}")]
    defaults: dict[str, Any] = {}
    if isinstance(document, dict) and "commands" in document:
        defaults = {k: document[k] for k in ("game", "ply", "token") if k in document}
        items = document["commands"]
    elif isinstance(document, list):
        items = document
    else:
        items = [document]
    commands: list[Command | CommandError] = []
    for item in items:
        merged = {**defaults, **item}
        verb = merged["command"]
        game = merged.get("game")
        command = Command(verb, _describe_json(merged), game=game.lower() if game else None,
                          move=merged.get("move"), ply=merged.get("ply"), token=merged.get("token"),
                          topic=merged.get("topic"))
        if verb == "new":
            command.opponents = [a.lower() for a in merged["with"]]
            command.seat = merged.get("as")
            command.options = merged.get("options", {})
        commands.append(command)
    return commands


def _deepest(errors: list[Any]) -> Any:
    """For oneOf failures, the most specific sub-error tells the writer what to fix."""
    best = max(errors, key=lambda e: len(e.absolute_path))
    while best.context:
        best = max(best.context, key=lambda e: len(e.absolute_path))
    return best


def _describe_json(item: dict[str, Any]) -> str:
    parts = [item["command"]]
    for key in ("game", "move", "topic"):
        if item.get(key):
            parts.append(str(item[key]))
    if item.get("with"):
        parts += ["with", *item["with"]]
    return " ".join(parts)
