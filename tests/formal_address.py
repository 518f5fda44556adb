"""Whether a German or Slovak text addresses its reader formally ("Sie", "vy") where pbem says
"du" / "ty": one mail mixing the two reads as if two people wrote it.

German "Sie" is also "they" (and "Ihr" "their"), so a capitalised "Sie" that starts a sentence is
formal address unless the English it translates says they / them / their / it (``source``); in a
rendered mail, where the source is not at hand, it is accepted only as one of the phrases the
catalogs translate from such English (``they_phrases``). Inside a sentence "they" is written "sie",
so a capitalised one there is always the formal "Sie".

Slovak's formal address is the second person plural: "vy", "vás", "váš", "ste", and the verbs in
"-te" ("napíšte", "môžete"). The few words in "-te" that are no verbs are listed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[1]
CATALOGS = (ROOT / "engine" / "locale" / "{lang}" / "LC_MESSAGES" / "engine.po",
            ROOT / "pbem" / "locale" / "{lang}" / "LC_MESSAGES" / "pbem.po")

_DE = re.compile(r"\b(Sie|Ihr|Ihre|Ihrem|Ihren|Ihrer|Ihres|Ihnen)\b")
_THIRD_PERSON = re.compile(r"\b(they|them|their|it|its)\b", re.IGNORECASE)
_SK_PRONOUNS = {"vy", "vás", "vám", "vami", "ste"}
# Words ending in "-te" that are no verbs: adverbs and nouns (ešte, ceste, ...), and English words
# the Slovak texts quote (command keys, placeholders' neighbours).
SK_NOT_VERBS = {"ešte", "ceste", "planéte", "siete", "monte", "white", "late", "date", "note", "state",
                "mieste", "promote", "adjudicate"}


def _flat(text: str) -> str:
    return " ".join(text.split())


def _starts_sentence(before: str) -> bool:
    before = before.rstrip().rstrip('"„“(')
    return not before or before.endswith((".", "!", "?", ":"))


def _phrase(flat: str, start: int) -> str:
    return " ".join(flat[start:].split()[:3])


def formal_de(text: str, source: str | None = None, they: Iterable[str] = ()) -> list[str]:
    """The formal "Sie"/"Ihr"/"Ihnen" of ``text`` (each with the two words after it)."""
    flat, allowed, hits = _flat(text), set(they), []
    for match in _DE.finditer(flat):
        phrase = _phrase(flat, match.start())
        if _starts_sentence(flat[:match.start()]) and match.group(1) != "Ihnen" and (
                (source is not None and _THIRD_PERSON.search(source)) or phrase in allowed):
            continue
        hits.append(phrase)
    return hits


def formal_sk(text: str) -> list[str]:
    """The second-person-plural words of ``text``."""
    return [word for word in re.findall(r"[^\W\d_]+", text)
            if word.lower() in _SK_PRONOUNS or word.lower().startswith(("vaš", "váš"))
            or (word.lower().endswith("te") and word.lower() not in SK_NOT_VERBS)]


def translations(lang: str) -> list[tuple[str, str]]:
    """(English, translation) of every entry of pbem's and the engine's catalogs in ``lang``."""
    pairs = []
    for template in CATALOGS:
        with open(str(template).format(lang=lang), "rb") as f:
            for message in read_po(f):
                if not message.id:
                    continue
                ids = message.id if isinstance(message.id, (list, tuple)) else (message.id,)
                strings = message.string if isinstance(message.string, (list, tuple)) else (message.string,)
                pairs += [(ids[min(i, len(ids) - 1)], text) for i, text in enumerate(strings)]
    return pairs


@cache
def they_phrases() -> frozenset[str]:
    """The German "Sie ..." that translate an English "they"/"it": what a rendered mail may hold."""
    phrases = set()
    for source, text in translations("de"):
        flat = _flat(text)
        for match in _DE.finditer(flat):
            if _starts_sentence(flat[:match.start()]) and _THIRD_PERSON.search(source):
                phrases.add(_phrase(flat, match.start()))
    return frozenset(phrases)


def formal(lang: str, text: str) -> list[str]:
    """Formal address in a rendered text (a mail, a board, a help page) of ``lang``."""
    return formal_de(text, they=they_phrases()) if lang == "de" else formal_sk(text)
