"""Help texts for the ``help`` mail command: commands, notation, and each game's rules and rulings."""

from __future__ import annotations

import difflib

from engine import get_game
from engine.options import describe_options
from engine.registry import UnknownGameError, available_games
from pbem.commands.parsing import USAGE

COMMANDS = """\
Write commands one per line at the top of a mail (or in the subject). Quoted text
and signatures are ignored. Commands:

{usage}

Moves: reply to the board mail you received and write the move on the first line.
The Reply-To address of every game mail carries your secret token; a move is
applied only when it comes from your registered address with your token. When
you write a new mail instead, add a line: token YOURTOKEN.

JSON: every command may be sent as a JSON turn file (the whole body or an
application/json attachment); its fields are the words of the command, e.g.
  {{"commands": [{{"command": "move", "game": "ac-17", "move": "tower red C4"}}]}}
  {{"command": "vacation", "from": "2026-12-20", "to": "2027-01-03"}}

Help topics: commands, notation, {games}, or GAME rulings / GAME notation.
"""


def _commands() -> str:
    usage = "\n".join(f"  {text}" for text in USAGE.values())
    return COMMANDS.format(usage=usage, games=", ".join(available_games()))


def _game_help(name: str, part: str | None) -> str:
    game = get_game(name)
    topics = game.help_topics()
    if part:
        return topics.get(part, f"No topic {part!r} for {game.title}; topics: {', '.join(topics)}")
    options = "\n".join(f"  {usage}: {text}" for usage, text in describe_options(game))
    return "\n\n".join([
        f"{game.title} ({game.min_players}-{game.max_players} players)",
        "Options for 'new " + game.name + " [OPTIONS] with ADDRESS':\n" + (options or "  none"),
        topics.get("rules", ""), "Rulings:\n" + topics.get("rulings", ""),
        "Notation:\n" + topics.get("notation", ""),
    ])


def help_text(topic: str | None) -> str:
    if not topic or topic in ("commands", "help"):
        return _commands()
    words = topic.split()
    if words[0] == "notation":
        return "\n\n".join(f"{get_game(n).title}:\n{get_game(n).help_topics().get('notation', '')}"
                           for n in available_games())
    if words[0] == "rulings":
        return "\n\n".join(f"{get_game(n).title}:\n{get_game(n).help_topics().get('rulings', '')}"
                           for n in available_games())
    try:
        return _game_help(words[0], words[1] if len(words) > 1 else None)
    except UnknownGameError:
        known = ["commands", "notation", "rulings", *available_games()]
        near = difflib.get_close_matches(words[0], known, n=2, cutoff=0.5)
        hint = f" Did you mean {' or '.join(near)}?" if near else ""
        return f"No help topic {topic!r}.{hint} Topics: {', '.join(known)}.\n\n" + _commands()
