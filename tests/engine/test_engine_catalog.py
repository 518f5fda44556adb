"""The engine's catalogs (domain "engine", German and Slovak) are complete, exact and compiled.

Every text the engine marks is in each catalog, translated, not fuzzy; a translation keeps the
placeholders of its English text (a missing ``{seat}`` would raise or lose a word in a mail); the
plural forms are the contract's (German 2, Slovak 3); and the compiled ``.mo`` that the server
loads says what the ``.po`` says (a stale ``.mo`` would send yesterday's words). The checker itself
is tried on a broken catalog, so that it is known to catch what it is for.
"""

from __future__ import annotations

import gettext
import re
from pathlib import Path

import pytest
from babel.messages.catalog import Catalog
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "engine" / "locale"
LANGUAGES = ("de", "sk")
KEYWORDS = {"_": None, "N_": None, "ngettext": (1, 2), "pgettext": ((1, "c"), 2)}
PLURAL_FORMS = {"de": "nplurals=2; plural=(n != 1);",
                "sk": "nplurals=3; plural=((n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2);"}
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}|%\([A-Za-z_]+\)[sd]|%[sd]")


def _po(lang: str) -> Catalog:
    with open(LOCALE / lang / "LC_MESSAGES" / "engine.po", "rb") as f:
        return read_po(f, locale=lang)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def problems(catalog: Catalog) -> list[str]:
    """Missing, fuzzy or placeholder-changing entries of a catalog, one line each."""
    found = []
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, (list, tuple)) else (message.id,)
        strings = message.string if isinstance(message.string, (list, tuple)) else (message.string,)
        name = ids[0][:60]
        if message.fuzzy:
            found.append(f"fuzzy: {name!r}")
        if not all(strings):
            found.append(f"untranslated: {name!r}")
            continue
        for index, text in enumerate(strings):
            # a plural form other than the first follows the English plural
            source = ids[1] if len(ids) > 1 and index > 0 else ids[0]
            if placeholders(text) != placeholders(source):
                found.append(f"placeholders differ in {name!r} form {index}: "
                             f"{sorted(placeholders(source))} vs {sorted(placeholders(text))}")
    return found


def extracted() -> set[tuple[str | None, str]]:
    """What the engine's code marks today, as (context, msgid)."""
    out = set()
    for _file, _line, message, _comments, context in extract_from_dir(
            str(ROOT / "engine"), [("**.py", "python")], keywords=KEYWORDS):
        out.add((context, message if isinstance(message, str) else message[0]))
    return out


def _keys(catalog: Catalog) -> set[tuple[str | None, str]]:
    return {(m.context, m.id if isinstance(m.id, str) else m.id[0]) for m in catalog if m.id}


def test_the_checker_finds_missing_fuzzy_and_changed_placeholders() -> None:
    broken = Catalog(locale="de")
    broken.add("You play {seat}.", "Sie spielen.")
    broken.add("To move: {seat}.", "")
    broken.add("Total", "Summe", flags=["fuzzy"])
    broken.add(("{n} extra cap", "{n} extra caps"), ("{n} Deckel", "zusätzliche Deckel"))
    broken.add("ok {seat}", "gut {seat}")
    found = problems(broken)
    assert len(found) == 4, found
    assert any("untranslated" in p and "To move" in p for p in found)
    assert any("fuzzy" in p and "Total" in p for p in found)
    assert any("You play" in p for p in found)
    assert any("extra cap" in p and "form 1" in p for p in found)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_entry_translated_with_its_placeholders(lang: str) -> None:
    catalog = _po(lang)
    assert problems(catalog) == []
    assert len(_keys(catalog)) > 200


def test_catalogs_hold_every_marked_text() -> None:
    marked = extracted()
    for lang in LANGUAGES:
        missing = marked - _keys(_po(lang))
        assert not missing, f"{lang}: not in the catalog (run make i18n): {sorted(missing)[:5]}"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_plural_forms_are_the_contracts(lang: str) -> None:
    with open(LOCALE / lang / "LC_MESSAGES" / "engine.po", encoding="utf-8") as f:
        header = f.read(2000)
    assert f"Plural-Forms: {PLURAL_FORMS[lang]}" in header


@pytest.mark.parametrize("lang", LANGUAGES)
def test_compiled_catalog_matches_the_po(lang: str) -> None:
    compiled = gettext.translation("engine", str(LOCALE), [lang])
    assert compiled.info()["language"] == lang
    for message in _po(lang):
        if not message.id:
            continue
        if isinstance(message.id, (list, tuple)):
            for n, form in ((1, 0), (2, 1), (5, 2 if lang == "sk" else 1)):
                assert compiled.ngettext(message.id[0], message.id[1], n) == message.string[form]
        elif message.context:
            assert compiled.pgettext(message.context, message.id) == message.string
        else:
            assert compiled.gettext(message.id) == message.string
