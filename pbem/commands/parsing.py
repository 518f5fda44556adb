"""Commands read from mail: the text forms players type and the JSON turn file, into one shape.

Parsing knows the command words but no game rules: a line that is not a command is a move only when
the mail is a reply about a game (its token or subject names one); otherwise it is an unknown command
and the nearest command words are suggested.

People write mail, not scripts: a greeting before the first command ("Hi Bob, fancy a game?") is
skipped, a sign-off ("Cheers, Ann") ends the commands, and free text after a move ("Good luck!") is
a note to the opponents, relayed with the move. A line whose first word is a command word, or
nearly one, is always read as a command, so a mistyped second command is answered, not swallowed.

Every text command has a JSON twin. ``JSON_FIELDS`` says, per command word, which fields of a
turn-file command become the words after it, in order; ``parse_json`` writes those words as the
text line and parses that with the text parser, so a turn file means exactly what the same
command typed means, errors included. A command word cannot be registered without an entry there
(``register_verb`` refuses), and ``tests/mail/test_json_twins.py`` checks every word against
``schemas/command.schema.json``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from pbem.commands.keywords import english_inner, english_verb, is_keyword
from pbem.i18n import N_, _
from pbem.resources import json_path, validator

# In the order help lists them and suggestions prefer them: playing first, resigning last.
VERBS: list[str] = ["move", "board", "history", "games", "rules", "help", "message", "settings", "set",
                    "new", "accept", "decline", "rematch", "record", "resign"]
GAME_ID = re.compile(r"^[a-z]+-\d+$", re.IGNORECASE)
#: An opponent of ``new`` that is the computer: ``computer`` or ``computer:LEVEL`` (checked later,
#: against the levels the game offers).
COMPUTER_WORD = re.compile(r"^computer(?::(.*))?$", re.IGNORECASE)
USAGE = {
    "move": N_("move GAME MOVE   (or just MOVE in a reply to your board mail)"),
    "board": N_("board GAME [N]   (the board now, or after move N)"),
    "history": N_("history GAME   (every move so far, numbered)"),
    "games": N_("games   (your games: opponents, whose turn, deadlines, results)"),
    "rules": N_("rules [GAME]   (the rules and every ruling the server applies)"),
    "help": N_("help [TOPIC]   (topics: commands, notation, settings, a game's name)"),
    "message": N_("message GAME [all] TEXT   (a note to your opponents; all: observers too)"),
    "settings": N_("settings   (what you have chosen with set)"),
    "set": N_("set KEY VALUE   (notify, mail, nickname, language, address: see help settings)"),
    "new": N_("new GAME [OPTIONS] with ADDRESS|computer[:LEVEL] [...] [as SEAT]   (or 'new GAME "
              "[OPTIONS] open' for anyone: see challenges; help new)"),
    "accept": N_("accept GAME"),
    "decline": N_("decline GAME"),
    "rematch": N_("rematch GAME   (the same players and options, seats swapped)"),
    "record": N_("record GAME   (the game record as an attachment, for pbem replay)"),
    "resign": N_("resign GAME   (asks you to confirm first)"),
}


def usage(verb: str) -> str:
    """The command's usage line in the reader's language (the command words stay English)."""
    return _(USAGE[verb])


# Suggesting "resign" for a typo would invite one word to end a game ("design" is as near to it
# as "resing"), so it is never suggested: whoever means it finds it in 'help'.
_CAUTIOUS = {"resign": 2.0}
_MOVE_NUMBER = re.compile(r"\s*\(\s*move\s+(\d{1,6})\s*\)\s*$", re.IGNORECASE)
_GREETING = re.compile(
    r"^(hi|hello|hey|hiya|dear|greetings|good (morning|afternoon|evening|day)|hallo|servus|moin|"
    r"guten (tag|morgen|abend)|ahoj|dobr[ýy] (de[nň]|večer|vecer)|čau|cau|ciao|salut|bonjour|hola)"
    r"\b", re.IGNORECASE)
_SIGN_OFF = re.compile(
    r"^(cheers|thanks|thank you|thx|many thanks|regards|kind regards|best( wishes| regards)?|"
    r"all the best|bye|see you|yours|love|take care|have fun|good game|gg|"
    r"viele grüße|viele gruesse|liebe grüße|gruß|grüße|gruss|lg|mfg|danke|"
    r"s pozdravom|pozdravujem|vďaka|vdaka|ďakujem|dakujem|díky|diky)\b[\s,.!]*(\w+[\s.!]*)?$",
    re.IGNORECASE)


#: The JSON twin of each command word: the turn-file fields that become the words after the verb,
#: in the order the text form takes them. "name" puts the field's value there (a list: its items;
#: true: the field's name itself, as a flag); "name=" puts the word "name" and then the value, for
#: text forms with keywords ("history from 2026-01-01"). ``new`` has its own JSON form (options as
#: an object) and is not in this table. Every field must also be in the schema.
JSON_FIELDS: dict[str, tuple[str, ...]] = {
    "help": ("topic",), "games": (), "accept": ("game",), "decline": ("game",),
    "board": ("game", "after"), "resign": ("game", "confirm="), "move": ("game", "move"),
    # feature commands (pbem/community/*_commands.py)
    "observe": ("game",), "unobserve": ("game",), "undo": ("game",), "accept undo": ("game",),
    "decline undo": ("game",),
    "vacation": ("from", "to", "cancel"), "timezone": ("name",),
    "timecontrol": ("game", "days", "fischer=", "cap=", "total=", "policy", "weekends=", "nights="),
    "history": ("name", "from=", "to=", "player="), "standings": ("name",),
    # the commands of the mail experience (pbem/processing/*.py)
    "rules": ("topic",), "message": ("game", "all", "text"), "settings": (), "set": ("key", "value"),
    "rematch": ("game",), "record": ("game",),
    # the classic servers' commands (pbem/community: agreements, queued_moves, preview, challenges,
    # addresses); the queue's lines are the text form's lines after "queue GAME" ("lines" below)
    "propose": ("game", "what"), "reject": ("game",), "withdraw": ("game",), "join": ("game",),
    "rekey": ("game",), "queue": ("game", "clear"), "preview": ("game", "move"),
    "challenges": ("name",), "confirm address": ("code",),
    # what players keep for themselves (pbem/players: notes, automove, blocking)
    "note": ("game", "secret", "text"), "notes": ("game", "clear"), "block": ("address",),
    "unblock": ("address",), "blocked": (),
    "admin": ("op", "filters", "game", "seat", "address", "when", "n", "result", "why"),
    # tournaments (pbem/tournaments/commands.py)
    "tournament": ("id", "action", "game", "format", "settings", "target", "why"),
    "tournaments": ("name",), "enter": ("tournament",),
}

# Extra command words registered by feature modules (observe, vacation, admin, history, ...):
# verb -> parser of the words after the verb. A parser returns a Command or a CommandError.
ExtraParser = Callable[[str, list[str], bool], "Command | CommandError"]
_EXTRA: dict[str, ExtraParser] = {}
#: Command words people also write as the label of a remark ("Note: I am away next week", below a
#: move): with the colon, a line after another command is free text (a note to the opponents), not
#: the command. Registered with ``register_verb(..., label=True)``.
LABEL_WORDS: set[str] = set()


def register_verb(verb: str, usage: str, parser: ExtraParser, *, label: bool = False) -> None:
    """Teach the reader a new command word (or two words, like "accept undo", which then take
    precedence over the first word's own meaning); ``usage`` appears in help and in suggestions.
    The word needs its JSON twin in ``JSON_FIELDS`` (and in the schema) first. ``label``: see
    ``LABEL_WORDS``."""
    if verb not in JSON_FIELDS:
        raise ValueError(f"command {verb!r} has no JSON twin: add its fields to "
                         "pbem.commands.parsing.JSON_FIELDS and schemas/command.schema.json")
    if verb not in VERBS:
        VERBS.append(verb)
        _close_verbs.cache_clear()
    USAGE[verb] = usage
    _EXTRA[verb] = parser
    if label:
        LABEL_WORDS.add(verb)


def game_verb_parser(verb: str) -> ExtraParser:
    """The parser of a registered command that takes at most a game id (``reject GAME``)."""
    def parse(line: str, rest: list[str], in_game_reply: bool) -> Command | CommandError:
        return _game_command(line, verb, rest)
    return parse


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
    note: list[str] = field(default_factory=list)  # free text after a move: a note to the others


@dataclass
class CommandError:
    line: str
    message: str


def suggest_verbs(word: str) -> list[str]:
    word = word.lower()[:40]
    near = [v for v in _close_verbs(word)
            if difflib.SequenceMatcher(None, word, v).ratio() >= _CAUTIOUS.get(v, 0)]
    return sorted(near[:3], key=VERBS.index)


@lru_cache(maxsize=2048)
def _close_verbs(word: str, n: int = 4, cutoff: float = 0.5) -> tuple[str, ...]:
    # difflib costs ~0.3 ms per word; junk mail repeats its words, and a mail may hold thousands
    return tuple(difflib.get_close_matches(word, VERBS, n=n, cutoff=cutoff))


def looks_like_command(line: str, *, near: bool = True) -> bool:
    """Whether a line after the first command is one (so it is parsed and answered) rather than
    free text: its first word is a command word, or (``near``) so near one that it is surely a
    typo. A question is never a command ("Game?"), and a near miss must look like a command: short,
    without a sentence's punctuation ("Game on!" is a remark, "gmaes" a typo)."""
    text = line.strip()
    words = text.split()
    if not words or text.endswith("?"):
        return False
    word = words[0].lower().rstrip(":")
    if word in LABEL_WORDS and words[0].endswith(":"):
        return False
    if word in VERBS or word == "token" or is_keyword(word) or any(v.startswith(word + " ") for v in _EXTRA):
        return True
    if not near or len(word) < 4 or len(words) > 3 or text[-1] in "!.,;":
        return False
    return bool(_close_verbs(word[:40], 1, 0.8))


def is_greeting(line: str) -> bool:
    return bool(_GREETING.match(line.strip())) and not looks_like_command(line)


def is_sign_off(line: str) -> bool:
    text = line.strip()
    return len(text) <= 40 and bool(_SIGN_OFF.match(text)) and not looks_like_command(text)


def without_signed_name(lines: list[str], address: str, name: str = "") -> list[str]:
    """The lines without a last one that is only the sender's own name ("Bob", "- Bob"): a
    signature, though without the "-- " line; after a move it was relayed to the opponents as a
    note. ``address`` and ``name``: the sender's (its local part, the display name, its first
    word); a line that reads as a command stays (a player whose address is games@... writing
    "games")."""
    names = {address.partition("@")[0].lower()}
    if name.split():
        names |= {" ".join(name.split()).lower(), name.split()[0].lower()}
    names.discard("")
    while len(lines) > 1 and lines[-1].strip(" -–—~.,!").lower() in names \
            and not looks_like_command(lines[-1], near=False):
        lines = lines[:-1]
    return lines


def _move_number(text: str) -> tuple[str, int | None]:
    """``tower red C4 (move 12)``: the move and the ply it was meant to follow (11); the one-tap
    links write it so that a tap on an old mail is refused, not played in a later position."""
    match = _MOVE_NUMBER.search(text)
    if match is None:
        return text, None
    return text[:match.start()].rstrip(), max(int(match.group(1)) - 1, 0)


def parse_line(line: str, *, in_game_reply: bool) -> Command | CommandError | None:
    """One typed line. Returns None for lines that carry no command (the ``token`` line)."""
    text = line.strip().rstrip(".").strip()
    if not text:
        return None
    words = text.split()
    verb = english_verb(words[0].lower().rstrip(":"))  # "hilfe", "ťah": the German and Slovak words
    rest = words[1:]
    if verb in ("new", "resign"):
        rest = [english_inner(w) for w in rest]  # "mit", "als", "bestätigen"
    if verb == "token":
        return None
    if rest and f"{verb} {rest[0].lower()}" in _EXTRA:  # two-word commands, e.g. "accept undo GAME"
        return _EXTRA[f"{verb} {rest[0].lower()}"](line, rest[1:], in_game_reply)
    if verb in _EXTRA:
        return _EXTRA[verb](line, rest, in_game_reply)
    if verb in ("help", "rules"):
        topic = " ".join(rest).lower() or None
        return Command(verb, line, topic=topic, game=topic if topic and GAME_ID.match(topic) else None)
    if verb in ("games", "settings") and not rest:
        return Command(verb, line)
    raw_rest = line.split()[1:]  # with the final full stop, which belongs to a nickname or a note
    if verb == "set":
        if len(raw_rest) < 2:
            return CommandError(line, _("set takes a setting and a value: {usage}").format(
                usage=usage("set")))
        return Command("set", line, args={"key": raw_rest[0].lower(), "value": " ".join(raw_rest[1:])})
    if verb in ("accept", "decline", "rematch", "record", "history"):
        return _game_command(line, verb, rest)
    if verb == "board":
        if rest and rest[-1].isdigit() and len(rest) <= 2:
            number = int(rest[-1])
            parsed = _game_command(line, verb, rest[:-1])
            if isinstance(parsed, Command):
                parsed.args["after"] = number
            return parsed
        return _game_command(line, verb, rest)
    if verb == "resign":
        if len(rest) >= 3 and rest[-2].lower() == "confirm":
            parsed = _game_command(line, verb, rest[:-2])
            if isinstance(parsed, Command):
                parsed.args["code"] = rest[-1].upper()
            return parsed
        return _game_command(line, verb, rest)
    if verb == "message":
        return _parse_message(line, raw_rest)
    if verb == "move":
        if rest and GAME_ID.match(rest[0]):
            if len(rest) < 2:
                return CommandError(line, _("the move is missing: {usage}").format(usage=usage("move")))
            move, ply = _move_number(" ".join(rest[1:]))
            return Command("move", line, game=rest[0].lower(), move=move, ply=ply)
        if rest and in_game_reply:
            move, ply = _move_number(" ".join(rest))
            return Command("move", line, move=move, ply=ply)
        return CommandError(line, _("name the game: {usage}").format(usage=usage("move")))
    if verb == "new":
        return _parse_new(line, rest)
    if in_game_reply:
        move, ply = _move_number(text)
        return Command("move", line, move=move, ply=ply)
    near = suggest_verbs(verb)
    hint = " " + _("Did you mean {words}?").format(words=_(" or ").join(near)) if near else ""
    return CommandError(
        line, _("unknown command {word!r}.{hint} Send 'help' for the list of commands. To move, reply "
                "to your board mail with the move, or write: move GAME MOVE.").format(
                  word=words[0], hint=hint))


def _game_command(line: str, verb: str, rest: list[str]) -> Command | CommandError:
    if len(rest) > 1 or (rest and not GAME_ID.match(rest[0])):
        return CommandError(line, _("{verb} takes a game id like ac-17: {usage}").format(
            verb=verb, usage=usage(verb)))
    return Command(verb, line, game=rest[0].lower() if rest else None)


def _parse_message(line: str, rest: list[str]) -> Command | CommandError:
    game = rest[0].lower() if rest and GAME_ID.match(rest[0]) else None
    words = rest[1:] if game else rest
    to_all = bool(words) and english_inner(words[0]) == "all"
    words = words[1:] if to_all else words
    command = Command("message", line, game=game, args={"all": to_all})
    if words:
        command.note.append(" ".join(words))
    return command


def _parse_new(line: str, rest: list[str]) -> Command | CommandError:
    if not rest:
        return CommandError(line, _("which game? {usage}").format(usage=usage("new")))
    lowered = [w.lower() for w in rest]
    if "with" not in lowered and "open" in lowered[1:]:
        return _parse_open(line, rest)
    if "with" not in lowered:
        return CommandError(line, _("say whom you challenge: {usage}").format(usage=usage("new")))
    at = lowered.index("with")
    option_words = rest[1:at]
    tail = rest[at + 1:]
    seat = None
    if len(tail) >= 2 and tail[-2].lower() == "as":
        seat = tail[-1].lower()
        tail = tail[:-2]
    cleaned = [w.strip(",;<>") for w in _without_display_names(tail) if w.strip(",;<>")]
    def opponent(word: str) -> bool:
        return "@" in word or COMPUTER_WORD.match(word) is not None

    opponents = [w.lower() for w in cleaned if opponent(w)]
    option_words = option_words + [w for w in cleaned if not opponent(w)]  # "with bob@x time 3"
    if not opponents:
        return CommandError(line, _("'with' takes mail addresses or 'computer': {usage}").format(
            usage=usage("new")))
    return Command("new", line, game=rest[0].lower(), opponents=opponents, seat=seat,
                   option_words=option_words)


def _without_display_names(words: list[str]) -> list[str]:
    """``with Bob Smith <bob@x>`` as a mail client writes an address: the name before an address in
    angle brackets is dropped (a player's name is learnt from their own mail, never from another's
    word), so it is not read as the game's options."""
    kept: list[str] = []
    name: list[str] = []  # words since the last address or comma: a name if an <address> follows
    for word in words:
        if word.startswith(("<", '"<')) and "@" in word:
            name = []
            kept.append(word)
        elif "@" in word or COMPUTER_WORD.match(word.strip(",;")):
            kept += [*name, word]
            name = []
        else:
            name.append(word)
            if word.endswith(","):
                kept += name
                name = []
    return kept + name


def _parse_open(line: str, rest: list[str]) -> Command:
    """``new GAME [OPTIONS] open [players N] [rating LOW-HIGH] [reliable PERCENT] [as SEAT]``: a
    challenge anyone may take (pbem.community.challenges reads ``players``, ``rating`` and
    ``reliable`` from the option words)."""
    words = [w for w in rest[1:] if w.lower() != "open"]
    seat = None
    if len(words) >= 2 and words[-2].lower() == "as":
        seat, words = words[-1].lower(), words[:-2]
    return Command("new", line, game=rest[0].lower(), seat=seat, option_words=words, args={"open": True})


def parse_text(lines: list[str], *, in_game_reply: bool) -> list[Command | CommandError]:
    """The commands of a mail's lines, with greetings skipped, a sign-off ending them, and free
    text after a command kept as its note (a move's note goes to the opponents; commands that
    take no note have it reported back as not read)."""
    results: list[Command | CommandError] = []
    for line in lines:
        if not line.strip():
            continue
        if is_sign_off(line):
            break
        if not results:
            if is_greeting(line):
                continue
        else:
            last = results[-1]
            if not looks_like_command(line):
                if isinstance(last, Command):
                    last.note.append(line.strip())
                continue
        parsed = parse_line(line, in_game_reply=in_game_reply)
        if parsed is not None:
            results.append(parsed)
    return results


def read_commands(lines: list[str], *, subject_first: bool, in_game_reply: bool
                  ) -> tuple[list[str], list[Command | CommandError]]:
    """The commands of a mail: ``lines`` are its command lines, the subject first when
    ``subject_first``. Returns the lines read (without the subject when it is not) and their
    commands.

    People title a new mail as they would any other ("new game", "Fancy a game?") and write the
    commands below; some write the command in both places. So the subject is read as a command
    only when it looks like one and adds one: not when the body holds the same command ("games"
    and "games" is one command), and not when it is no command at all while the body holds
    commands (then "new game" is a title, and answering it "Not understood" would only confuse).
    Alone, a subject that looks like a command is answered as one, errors included."""
    if subject_first and lines and not looks_like_command(lines[0], near=False):
        lines, subject_first = lines[1:], False
    if subject_first and len(lines) > 1:
        body = parse_text(lines[1:], in_game_reply=in_game_reply)
        subject = parse_line(lines[0], in_game_reply=in_game_reply)
        if subject is None or any(_same(subject, found) for found in body) or (
                isinstance(subject, CommandError) and any(isinstance(found, Command) for found in body)):
            return lines[1:], body
    return lines, parse_text(lines, in_game_reply=in_game_reply)


def _same(one: Command | CommandError, other: Command | CommandError) -> bool:
    """The same command however it was written (case, spacing, a full stop, a note below it)."""
    if isinstance(one, CommandError) or isinstance(other, CommandError):
        return (isinstance(one, CommandError) and isinstance(other, CommandError)
                and " ".join(one.line.lower().rstrip(".").split())
                == " ".join(other.line.lower().rstrip(".").split()))
    return replace(one, line="", note=[]) == replace(other, line="", note=[])


def parse_json(document: Any) -> list[Command | CommandError]:
    """A turn file already decoded from JSON; schema errors name the JSON path."""
    errors = sorted(validator("command").iter_errors(document), key=lambda e: len(e.absolute_path))
    if errors:
        listed = isinstance(document, dict) and "commands" in document
        best = _deepest(errors, 2 if listed else int(isinstance(document, list)))
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
        verb = item["command"]
        takes_game = verb == "new" or "game" in JSON_FIELDS.get(verb, ())
        merged = {**{k: v for k, v in defaults.items() if k != "game" or takes_game}, **item}
        parsed = _parse_json_new(merged) if verb == "new" else _parse_json_command(verb, merged)
        if isinstance(parsed, Command):
            parsed.ply = merged.get("ply")
            parsed.token = merged.get("token")
        commands.append(parsed)
    return commands


def _parse_json_new(item: dict[str, Any]) -> Command:
    if item.get("open"):  # the twin of 'new GAME open [players N] [rating LOW-HIGH] [reliable PERCENT]'
        words = [word for key in ("players", "rating", "reliable") if item.get(key) is not None
                 for word in (key, _json_word(item[key]))]
        return Command("new", _describe_json(item), game=item["game"].lower(), seat=item.get("as"),
                       options=item.get("options"), option_words=words, args={"open": True})
    return Command("new", _describe_json(item), game=item["game"].lower(),
                   opponents=[a.lower() for a in item["with"]], seat=item.get("as"),
                   options=item.get("options"))


def _parse_json_command(verb: str, item: dict[str, Any]) -> Command | CommandError:
    """The text line the fields stand for, read by the text parser (see JSON_FIELDS)."""
    words: list[str] = [verb]
    for spec in JSON_FIELDS[verb]:
        name = spec.rstrip("=")
        value = item.get(name)
        if value is None or value is False:
            continue
        if value is True:
            words.append(name)
            continue
        text = " ".join(_json_word(v) for v in (value if isinstance(value, list) else [value]))
        if text.strip():
            words += [name, text] if spec.endswith("=") else [text]
    line = " ".join(words)
    parsed = parse_line(line, in_game_reply=True)  # a move without "game" names the reply's game
    if isinstance(parsed, Command):  # the lines a text form takes after its command line
        parsed.note += [" ".join(str(x).split()) for x in item.get("lines") or [] if str(x).strip()]
    return parsed if parsed is not None else CommandError(line, _("{verb}: nothing to do").format(verb=verb))


def _json_word(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return " ".join(str(value).split())


def _deepest(errors: list[Any], shape: int) -> Any:
    """For oneOf failures, the most specific sub-error tells the writer what to fix; at the top, of
    the form the document has (``shape``: 0 one command, 1 a list, 2 ``{"commands": [...]}``), not a
    deeper one of a form it does not try to be (a lone command's "game" against the list's)."""
    best = max(errors, key=lambda e: len(e.absolute_path))
    while best.context:
        context = best.context
        if not best.absolute_path and list(best.schema_path) == ["oneOf"]:
            context = [e for e in context if e.relative_schema_path[0] == shape] or context
        best = max(context, key=lambda e: len(e.absolute_path))
    return best


def _describe_json(item: dict[str, Any]) -> str:
    parts = [item["command"], str(item.get("game", ""))]
    if item.get("with"):
        parts += ["with", *item["with"]]
    if item.get("open"):
        parts += ["open", *(f"{key} {_json_word(item[key])}" for key in ("players", "rating", "reliable")
                            if item.get(key) is not None)]
    if item.get("as"):
        parts += ["as", str(item["as"])]
    return " ".join(p for p in parts if p)
