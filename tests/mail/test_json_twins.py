"""Every command a player can type has a JSON twin that means the same: a turn file is not a second,
smaller language. The list below must name every registered command word; a word added without a
twin fails here (and ``register_verb`` refuses a word missing from ``JSON_FIELDS``)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from pbem.commands.parsing import (
    JSON_FIELDS,
    VERBS,
    Command,
    CommandError,
    parse_json,
    parse_text,
    register_verb,
)
from pbem.processing import features
from pbem.resources import validator

assert features  # registers the feature commands (observe, vacation, admin, history, ...)

# verb -> (JSON command, the same command as a player types it)
TWINS: dict[str, list[tuple[dict[str, Any], str]]] = {
    "help": [({"command": "help"}, "help"), ({"command": "help", "topic": "alien-city"}, "help alien-city")],
    "new": [({"command": "new", "game": "alien-city", "with": ["bob@example.org"], "as": "white"},
             "new alien-city with bob@example.org as white"),
            ({"command": "new", "game": "alien-city", "open": True, "players": 2, "rating": "1400-1700",
              "reliable": 90}, "new alien-city open players 2 rating 1400-1700 reliable 90"),
            ({"command": "new", "game": "space-truckin", "open": True, "as": "red"},
             "new space-truckin open as red")],
    "accept": [({"command": "accept", "game": "ac-3"}, "accept ac-3")],
    "decline": [({"command": "decline", "game": "ac-3"}, "decline ac-3")],
    "move": [({"command": "move", "game": "ac-3", "move": "tower red C4 claim C4"},
              "move ac-3 tower red C4 claim C4")],
    "board": [({"command": "board", "game": "st-2"}, "board st-2"),
              ({"command": "board", "game": "st-2", "after": 7}, "board st-2 7")],
    "games": [({"command": "games"}, "games")],
    "resign": [({"command": "resign", "game": "ac-3"}, "resign ac-3"),
               ({"command": "resign", "game": "ac-3", "confirm": "KVFZ"}, "resign ac-3 confirm KVFZ")],
    "rules": [({"command": "rules"}, "rules"), ({"command": "rules", "topic": "ac-3"}, "rules ac-3")],
    "message": [({"command": "message", "game": "ac-3", "text": "Good luck!"}, "message ac-3 Good luck!"),
                ({"command": "message", "game": "ac-3", "all": True, "text": "Hello all"},
                 "message ac-3 all Hello all")],
    "settings": [({"command": "settings"}, "settings")],
    "set": [({"command": "set", "key": "notify", "value": "every"}, "set notify every"),
            ({"command": "set", "key": "nickname", "value": "Ann B."}, "set nickname Ann B.")],
    "rematch": [({"command": "rematch", "game": "ac-3"}, "rematch ac-3")],
    "record": [({"command": "record", "game": "ac-3"}, "record ac-3")],
    "propose": [({"command": "propose", "game": "ac-3", "what": "draw"}, "propose ac-3 draw")],
    "reject": [({"command": "reject", "game": "ac-3"}, "reject ac-3")],
    "withdraw": [({"command": "withdraw", "game": "ac-3"}, "withdraw ac-3")],
    "join": [({"command": "join", "game": "ac-7"}, "join ac-7")],
    "rekey": [({"command": "rekey", "game": "ac-3"}, "rekey ac-3")],
    "queue": [({"command": "queue", "game": "ac-3"}, "queue ac-3"),
              ({"command": "queue", "game": "ac-3", "clear": True}, "queue ac-3 clear")],
    "preview": [({"command": "preview", "game": "ac-3", "move": "dome blue D5"},
                 "preview ac-3 dome blue D5")],
    "challenges": [({"command": "challenges"}, "challenges"),
                   ({"command": "challenges", "name": "alien-city"}, "challenges alien-city")],
    "confirm address": [({"command": "confirm address", "code": "K7QXM2PA"}, "confirm address K7QXM2PA")],
    "tournament": [({"command": "tournament", "action": "new", "game": "alien-city", "format": "swiss",
                     "settings": ["rounds", "5", "time", "5", "forfeit", "starts", "2026-12-10"]},
                    "tournament new alien-city swiss rounds 5 time 5 forfeit starts 2026-12-10"),
                   ({"command": "tournament", "id": "t-3"}, "tournament t-3"),
                   ({"command": "tournament", "id": "t-3", "action": "replace",
                     "target": ["a@example.org", "b@example.org"], "why": "moved"},
                    "tournament t-3 replace a@example.org b@example.org moved"),
                   ({"command": "tournament", "id": "t-3", "action": "challenge", "target": ["4"]},
                    "tournament t-3 challenge 4")],
    "tournaments": [({"command": "tournaments"}, "tournaments"),
                    ({"command": "tournaments", "name": "space-truckin"}, "tournaments space-truckin")],
    "enter": [({"command": "enter", "tournament": "t-3"}, "enter t-3")],
    "observe": [({"command": "observe", "game": "ac-3"}, "observe ac-3")],
    "unobserve": [({"command": "unobserve", "game": "ac-3"}, "unobserve ac-3")],
    "undo": [({"command": "undo", "game": "ac-3"}, "undo ac-3")],
    "accept undo": [({"command": "accept undo", "game": "ac-3"}, "accept undo ac-3")],
    "decline undo": [({"command": "decline undo", "game": "ac-3"}, "decline undo ac-3")],
    "vacation": [({"command": "vacation"}, "vacation"),
                 ({"command": "vacation", "from": "2026-12-20", "to": "2027-01-03"},
                  "vacation 2026-12-20..2027-01-03"),
                 ({"command": "vacation", "from": "2026-12-24"}, "vacation 2026-12-24"),
                 ({"command": "vacation", "cancel": True}, "vacation cancel")],
    "timezone": [({"command": "timezone", "name": "Europe/Bratislava"}, "timezone Europe/Bratislava"),
                 ({"command": "timezone"}, "timezone")],
    "timecontrol": [({"command": "timecontrol", "game": "ac-3", "days": 3, "policy": "notify"},
                     "timecontrol ac-3 3 days notify"),
                    ({"command": "timecontrol", "days": 2.5}, "timecontrol 2.5")],
    "history": [({"command": "history"}, "history"),
                ({"command": "history", "name": "alien-city", "from": "2026-01-01", "to": "2026-06-30",
                  "player": "bob@example.org"},
                 "history alien-city from 2026-01-01 to 2026-06-30 player bob@example.org")],
    "standings": [({"command": "standings"}, "standings"),
                  ({"command": "standings", "name": "space-truckin"}, "standings space-truckin")],
    "admin": [({"command": "admin", "op": "list", "filters": ["active", "alien-city"]},
               "admin list active alien-city"),
              ({"command": "admin", "op": "show", "game": "ac-3"}, "admin show ac-3"),
              ({"command": "admin", "op": "pause", "game": "ac-3", "why": "holiday season"},
               "admin pause ac-3 holiday season"),
              ({"command": "admin", "op": "deadline", "game": "ac-3", "when": "2026-12-01T12:00"},
               "admin deadline ac-3 2026-12-01T12:00"),
              ({"command": "admin", "op": "replace", "game": "ac-3", "seat": "white",
                "address": "carol@example.org", "why": "Bob left"},
               "admin replace ac-3 white carol@example.org Bob left"),
              ({"command": "admin", "op": "rollback", "game": "ac-3", "n": 2}, "admin rollback ac-3 2"),
              ({"command": "admin", "op": "end", "game": "ac-3", "result": "draw"}, "admin end ac-3 draw"),
              ({"command": "admin", "op": "block", "address": "spam@example.net"},
               "admin block spam@example.net")],
    "note": [({"command": "note", "game": "ac-3", "text": "Keep F6 for the dome."},
              "note ac-3 Keep F6 for the dome."),
             ({"command": "note", "game": "ac-3", "secret": True, "text": "I win by ten."},
              "note ac-3 secret I win by ten."),
             ({"command": "note", "text": "watch the red towers"}, "note watch the red towers")],
    "notes": [({"command": "notes", "game": "ac-3"}, "notes ac-3"),
              ({"command": "notes", "game": "ac-3", "clear": True}, "notes ac-3 clear")],
    "block": [({"command": "block", "address": "pest@example.net"}, "block pest@example.net")],
    "unblock": [({"command": "unblock", "address": "pest@example.net"}, "unblock pest@example.net")],
    "blocked": [({"command": "blocked"}, "blocked")],
}


def same(command: Command) -> dict[str, Any]:
    fields = dataclasses.asdict(command)
    del fields["line"]  # the words as written differ; the meaning must not
    if fields["verb"] == "new" and not fields["option_words"] and fields["options"] in (None, {}):
        fields["options"] = fields["option_words"] = None
    return fields


def test_every_command_word_has_a_twin_listed_here() -> None:
    assert sorted(TWINS) == sorted(VERBS)
    assert set(JSON_FIELDS) | {"new"} >= set(VERBS)


@pytest.mark.parametrize(("document", "text"), [pair for pairs in TWINS.values() for pair in pairs],
                         ids=[text for pairs in TWINS.values() for _doc, text in pairs])
def test_json_twin_means_what_the_text_means(document: dict[str, Any], text: str) -> None:
    errors = [e.message for e in validator("command").iter_errors(document)]
    assert errors == []
    (from_text,) = parse_text([text], in_game_reply=False)
    (from_json,) = parse_json(document)
    assert isinstance(from_text, Command), from_text
    assert isinstance(from_json, Command), from_json
    assert same(from_json) == same(from_text)


def test_twin_in_a_list_with_defaults() -> None:
    """{"commands": [...]} gives game, ply and token to every command that takes them."""
    results = parse_json({"game": "ac-3", "ply": 4, "token": "t0k",
                          "commands": [{"command": "move", "move": "tower red C4"},
                                       {"command": "history", "name": "alien-city"}]})
    move, history = results
    assert isinstance(move, Command) and isinstance(history, Command)
    assert (move.game, move.move, move.ply, move.token) == ("ac-3", "tower red C4", 4, "t0k")
    assert history.args == {"game": "alien-city"} and history.token == "t0k"


def test_a_wrong_twin_gets_the_text_forms_answer() -> None:
    """A bad value is refused with what the typed command would get: what is wrong and what is right."""
    (error,) = parse_json({"command": "vacation", "from": "2026-13-45"})
    assert isinstance(error, CommandError)
    assert "vacation" in error.message and "YYYY" not in error.line
    (error,) = parse_json({"command": "timezone", "name": 7})
    assert isinstance(error, CommandError) and "$.name" in error.message


def test_queue_lines_come_as_a_list() -> None:
    """The text form's lines after "queue GAME" are the twin's "lines"."""
    (from_json,) = parse_json({"command": "queue", "game": "ac-3",
                               "lines": ["if tower red C4 then dome blue D5", "then tower green F8"]})
    from_text = parse_text(["queue ac-3", "if tower red C4 then dome blue D5", "then tower green F8"],
                           in_game_reply=False)
    assert isinstance(from_json, Command) and len(from_text) == 1
    assert same(from_json) == same(from_text[0])


def test_a_command_word_without_twin_cannot_be_registered() -> None:
    with pytest.raises(ValueError, match="no JSON twin"):
        register_verb("frobnicate", "frobnicate GAME", lambda line, words, reply: Command("frob", line))
    assert "frobnicate" not in VERBS
