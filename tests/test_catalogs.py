"""The message catalogs are complete and safe: every text of pbem (and of the engine, once it has
catalogs) is translated in German and Slovak, none fuzzy, none stale, and every translation keeps
the placeholders of its English text, so a ``.format(...)`` or ``%`` can never fail or drop a value
in one language only. The catalogs are read as Babel reads them, from the ``.po`` sources."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.pofile import read_po

from pbem.i18n import LANGUAGES, speaking, translations
from tests import formal_address as address
from tests.formal_address import formal_de, formal_sk

REPO = Path(__file__).resolve().parents[1]
DOMAINS = {"pbem": ("pbem", "templates"), "engine": ("engine",)}
TRANSLATED = [lang for lang in LANGUAGES if lang != "en"]
CATALOGS = [(domain, lang) for domain in DOMAINS for lang in TRANSLATED
            if domain == "pbem" or (REPO / domain / "locale").is_dir()]
# {name}, {name!r}, {0:>4}; %s, %(name)s, %d
_PLACEHOLDER = re.compile(r"\{[^{}]*\}|%(?:\([a-z_]+\))?[sdfr]")


def placeholders(text: str) -> list[str]:
    """A named placeholder may be said twice where the language needs it ("{seat} ... {seat}");
    a positional one (``%s``) must stay exactly as often as in the English."""
    found = _PLACEHOLDER.findall(text.replace("{{", "").replace("}}", ""))
    named = {p for p in found if p.startswith(("{", "%(")) and p not in ("{}",)}
    return sorted([*named, *(p for p in found if p not in named)])


def catalog(domain: str, lang: str):
    path = REPO / domain / "locale" / lang / "LC_MESSAGES" / f"{domain}.po"
    with path.open("rb") as po:
        return read_po(po, locale=lang, domain=domain)


def source_msgids(domain: str) -> set[str]:
    """Every text marked in the source now (as ``make i18n`` extracts them)."""
    method_map = [("**.py", "python"), ("**.j2", "jinja2")]
    found = set()
    for folder in DOMAINS[domain]:
        for _file, _line, message, _comments, _context in extract_from_dir(str(REPO / folder), method_map):
            found.add(message if isinstance(message, str) else message[0])
    return found


def entries(domain: str, lang: str):
    """Each message as (its English forms, its translated forms, the entry): plurals have several."""
    for message in catalog(domain, lang):
        if message.id:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            yield ids, message.string if isinstance(message.string, tuple) else (message.string,), message


@pytest.mark.parametrize(("domain", "lang"), CATALOGS)
def test_every_text_is_translated_and_none_is_fuzzy(domain: str, lang: str) -> None:
    problems = []
    for _ids, strings, message in entries(domain, lang):
        if not all(strings):
            problems.append(f"missing: {message.id!r}")
        if message.fuzzy:
            problems.append(f"fuzzy: {message.id!r}")
    assert not problems, f"{domain}/{lang}: {len(problems)} problems (run `make i18n`, translate):\n" + \
        "\n".join(problems[:40])


@pytest.mark.parametrize(("domain", "lang"), CATALOGS)
def test_the_catalog_holds_every_text_of_the_source(domain: str, lang: str) -> None:
    """A text marked since the last ``make i18n`` would silently stay English."""
    ids = {m.id if isinstance(m.id, str) else m.id[0] for m in catalog(domain, lang) if m.id}
    missing = sorted(source_msgids(domain) - ids)
    assert not missing, f"{domain}/{lang}: not in the catalog (run `make i18n`): {missing[:20]}"


@pytest.mark.parametrize(("domain", "lang"), CATALOGS)
def test_placeholders_are_the_same_in_every_translation(domain: str, lang: str) -> None:
    wrong = []
    for ids, strings, message in entries(domain, lang):
        wanted = placeholders(ids[-1])
        for string in strings:
            # a plural form may leave the count out ("one tower" said as a word), nothing else
            got = placeholders(string)
            if string and got != wanted and not (len(ids) > 1 and set(got) <= set(wanted)):
                wrong.append(f"{message.id!r}: {wanted} -> {string!r}")
    assert not wrong, f"{domain}/{lang}:\n" + "\n".join(wrong[:40])


@pytest.mark.parametrize("lang", TRANSLATED)
def test_the_compiled_catalog_is_used(lang: str) -> None:
    """``make install`` compiled the .po (the .mo is no file git holds), and it is the one loaded."""
    mo = REPO / "pbem" / "locale" / lang / "LC_MESSAGES" / "pbem.mo"
    assert mo.is_file(), "run `make install` (or `make catalogs`)"
    assert mo.stat().st_mtime >= (mo.with_suffix(".po")).stat().st_mtime, "stale .mo: `make catalogs`"
    text = "Your commands"
    assert translations(lang, "pbem").gettext(text) != text
    with speaking(lang) as code:
        assert code == lang


def test_slovak_has_three_plural_forms_and_german_two() -> None:
    assert catalog("pbem", "sk").num_plurals == 3
    assert catalog("pbem", "de").num_plurals == 2
    plurals = [m.id for m in catalog("pbem", "sk") if isinstance(m.id, tuple)]
    assert plurals, "no count is said with ngettext"
    sk, de = translations("sk", "pbem"), translations("de", "pbem")
    # the compiled catalogs choose the form by the count: 1, 2-4 and 5+ in Slovak, 1 and 2+ in German
    assert any(len({sk.ngettext(one, many, n) for n in (1, 3, 5)}) == 3 for one, many in plurals)
    assert any(de.ngettext(one, many, 1) != de.ngettext(one, many, 2) for one, many in plurals)


def test_the_address_checker_tells_formal_address_from_they() -> None:
    assert formal_de("Sie spielen {seat}.", "You play {seat}.") == ["Sie spielen {seat}."]
    assert formal_de("leerer Zug: schreiben Sie z.B. E4", "empty move: write e.g. E4") == [
        "Sie z.B. E4"]
    assert formal_de("wenn Ihr Bau endet", "when your build ends") == ["Ihr Bau endet"]
    # "they": written "sie" inside a sentence; "Sie" at its start when the English says they / it
    assert formal_de("Zwei Felder. Sie dürfen Nachbarn sein.", "Two cells. They may be neighbours.") == []
    assert formal_de("die Felder, wenn sie frei sind", "the cells, when you see them free") == []
    assert formal_de("Zwei Felder. Sie dürfen bauen.", "Two cells. You may build.") == ["Sie dürfen bauen."]
    assert formal_de("Text. Sie dürfen Nachbarn sein.", they={"Sie dürfen Nachbarn"}) == []
    assert formal_sk("Ťahali ste {tile}. Napíšte:") == ["ste", "Napíšte"]
    assert formal_sk("ak vám zostal klobúčik, keď vaša stavba") == ["vám", "vaša"]
    assert formal_sk("Ťahal si {tile}; ešte môžeš, napíš: white") == []


@pytest.mark.parametrize("lang", TRANSLATED)
def test_one_form_of_address_du_and_ty(lang: str) -> None:
    """pbem says "du" / "ty" to a player; the engine's texts in the same mail must too."""
    formal = [(source[:50], text[:70]) for source, text in address.translations(lang)
              if (formal_de(text, source) if lang == "de" else formal_sk(text))]
    assert formal == []


# Swiss spellings of words Germany and Austria write with ß (stems: Weiss, weisser, Strassennetz,
# heisst, ausser, schliesst ...); names (Schoessow) and words with a real "ss" (muss, passt) pass.
_SWISS = re.compile(r"\b(?:[Ww]eiss|[Ss]trasse|[Hh]eiss|[Aa]usser(?!d)|[Gg]ross|\w*schliesst|[Gg]emäss|"
                    r"[Ff]uss\b|[Bb]loss|[Gg]rüss|[Ss]pass)")


@pytest.mark.parametrize("domain", DOMAINS)
def test_german_writes_eszett_as_in_germany(domain: str) -> None:
    swiss = [(ids[0][:40], word) for ids, texts, _m in entries(domain, "de") for text in texts
             for word in _SWISS.findall(text or "")]
    assert swiss == []
