"""The text part's ``wordwrap`` wraps words itself; it wraps them as Jinja's own filter does (with
lines broken at spaces only, not after hyphens)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from jinja2 import Environment, FileSystemLoader, StrictUndefined, pass_environment
from jinja2.filters import do_wordwrap

from pbem.outbox.compose import Section, render
from pbem.resources import data_dir

STOCK = Environment(loader=FileSystemLoader(str(data_dir("templates"))), keep_trailing_newline=True,
                    undefined=StrictUndefined)
STOCK.filters["wordwrap"] = pass_environment(
    lambda environment, s, width: do_wordwrap(environment, s, width, break_on_hyphens=False))

# Words of every length up to past the 72 columns, with hyphens, accents, symbols, and between
# them mostly one space (the case wrapped without textwrap), sometimes two, a tab or a line break.
_word = st.integers(1, 80).flatmap(lambda n: st.text(
    st.sampled_from("abcxyz-–.,;:'()éß★▲0123456789"), min_size=n, max_size=n))
_gap = st.sampled_from([" "] * 12 + ["  ", "\t", "\n", "\u00a0"])
_line = st.lists(st.tuples(_word, _gap), max_size=24).map(lambda pairs: "".join(w + g for w, g in pairs))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_line, _line.map(str.strip)), min_size=3, max_size=6))
def test_lines_are_wrapped_as_jinja_wraps_them(lines: list[str]) -> None:
    context = {"subject": "s", "headline": lines[0], "sections": [Section(lines=lines[1:3])],
               "footer": lines[2:], "mailto": None, "taps": False}
    assert render("mail.txt.j2", **context) == STOCK.get_template("mail.txt.j2").render(**context)


def test_the_commands_line_breaks_between_words() -> None:
    text = render("mail.txt.j2", subject="s", headline="Your move (move 2).", sections=[], mailto=None,
                  taps=False, footer=["Commands: board ac-7, history ac-7, message ac-7 TEXT, games, help, "
                                      "resign ac-7."])
    assert text.splitlines()[-3:-1] == ["Commands: board ac-7, history ac-7, message ac-7 TEXT, games, help,",
                                      "resign ac-7."]
