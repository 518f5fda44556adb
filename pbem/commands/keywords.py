"""Command words in German and Slovak, beside the English ones, which always work.

Every language's words are read from everyone (a German player's mail forwarded by a Slovak one
must still work, and nobody has to tell the server their language before writing ``hilfe``). The
words were chosen not to collide with any English command or with the move notation of either
game; Slovak words are read with and without their accents, as phones and old keyboards write
them. ``help`` lists the words of the reader's language.
"""

from __future__ import annotations

import unicodedata

from pbem.i18n import _, language

# English command -> the word in each language (the first word of a two-word command).
KEYWORDS: dict[str, dict[str, str]] = {
    "de": {"move": "zug", "board": "brett", "history": "verlauf", "games": "spiele", "rules": "regeln",
           "help": "hilfe", "message": "nachricht", "settings": "einstellungen", "set": "setze",
           "new": "neu", "accept": "annehmen", "decline": "ablehnen", "rematch": "revanche",
           "record": "partie", "resign": "aufgeben", "observe": "beobachten", "undo": "zurücknehmen",
           "vacation": "urlaub", "standings": "rangliste", "tournament": "turnier",
           "tournaments": "turniere", "enter": "anmelden"},
    "sk": {"move": "ťah", "board": "doska", "history": "história", "games": "hry", "rules": "pravidlá",
           "help": "pomoc", "message": "správa", "settings": "nastavenia", "set": "nastav",
           "new": "nová", "accept": "prijať", "decline": "odmietnuť", "rematch": "odveta",
           "record": "záznam", "resign": "vzdať", "observe": "sledovať", "undo": "späť",
           "vacation": "dovolenka", "standings": "poradie", "tournament": "turnaj",
           "tournaments": "turnaje", "enter": "prihlásiť"},
}
# Words inside commands: "neu alien-city mit bob@example.org als white", "aufgeben ac-1 bestätigen X".
INNER_WORDS: dict[str, dict[str, str]] = {
    "de": {"with": "mit", "as": "als", "open": "offen", "confirm": "bestätigen", "all": "alle"},
    "sk": {"with": "s", "as": "ako", "open": "otvorená", "confirm": "potvrdiť", "all": "všetkým"},
}


def _plain(word: str) -> str:
    """Without accents: "ťah" -> "tah"; "zurücknehmen" also as "zurucknehmen"."""
    return "".join(c for c in unicodedata.normalize("NFD", word) if not unicodedata.combining(c))


def _index(table: dict[str, dict[str, str]]) -> dict[str, str]:
    found: dict[str, str] = {}
    for words in table.values():
        for english, word in words.items():
            for form in {word, _plain(word), word.replace("ü", "ue").replace("ä", "ae")}:
                found[form] = english
    return found


_VERBS = _index(KEYWORDS)
_INNER = _index(INNER_WORDS)


def english_verb(word: str) -> str:
    """The English command a (lower-case) first word stands for; the word itself if none."""
    return _VERBS.get(word, word)


def english_inner(word: str) -> str:
    return _INNER.get(word.lower(), word)


def is_keyword(word: str) -> bool:
    return word in _VERBS


def keywords_help() -> str:
    """The reader's language's words, for ``help`` (empty in English)."""
    words = KEYWORDS.get(language())
    if not words:
        return ""
    inner = INNER_WORDS[language()]
    pairs = [f"{word} = {english}" for english, word in words.items()]
    pairs += [f"{word} = {english}" for english, word in inner.items()]
    lines = [""]
    for pair in pairs:  # as many as fit the mail's width
        if lines[-1] and len(lines[-1]) + len(pair) + 4 > 76:
            lines.append("")
        lines[-1] += (", " if lines[-1] else "") + pair
    return _("Commands in your language (the English words always work too):") + "\n" + "\n".join(
        f"  {line}" for line in lines)
