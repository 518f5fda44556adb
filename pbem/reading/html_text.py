"""HTML mail bodies as plain text, shaped so that the plain-text quote stripping works on them.

Players who send HTML-only mail still write their moves at the top and let the client quote the
board mail below. Quote stripping in :mod:`pbem.reading.incoming` works on lines starting with ``>``,
so quotes are made visible here the same way: the content of ``<blockquote>`` gets ``> `` per
level, and everything from a client's reply container on (Gmail's ``gmail_quote``, Outlook's
``divRplyFwdMsg``/``appendonsend``, …) is prefixed too, since several clients put the quoted mail
in sibling elements after the marker rather than inside it.

Only the standard library is used; the converter must accept any markup mail clients produce and
never raise.
"""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

__all__ = ["QUOTE_MARKERS", "html_to_text"]

#: Substrings of an element's ``id`` or ``class`` that mark the start of a client's quoted part.
#: Matched case-insensitively as substrings because Outlook on the web prefixes ids with ``x_``
#: when the mail is itself quoted, and Gmail adds suffixes such as ``gmail_quote_container``.
QUOTE_MARKERS: tuple[str, ...] = (
    "gmail_quote",
    "divrplyfwdmsg",
    "yahoo_quoted",
    "moz-cite-prefix",
    "olk_src_body_section",
    "appendonsend",
    "protonmail_quote",
    "zmail_extra",
    "zwchr",  # Zimbra's <hr> above its "From: … Sent: …" block
)

_BLOCK_TAGS = frozenset(
    {
        "address", "article", "aside", "blockquote", "caption", "center", "dd", "details",
        "dialog", "dir", "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form",
        "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "legend", "li", "main", "menu", "nav",
        "ol", "p", "pre", "section", "summary", "table", "tbody", "tfoot", "thead", "tr", "ul",
    }
)
#: Elements whose text is never shown to the reader.
_SKIP_TAGS = frozenset({"head", "script", "style", "title", "template", "noscript", "xml"})
_CELL_TAGS = frozenset({"td", "th"})
_COLLAPSE = re.compile(r"[ \t\n\r\f\v]+")  # HTML whitespace; deliberately not \xa0
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_TAG = re.compile(r"<[^>]*>")
#: Markup read at most: the parser costs about 3 microseconds per tag, and a player's words come
#: first, above the quoted mail, so 10,000 tags (a long quoted thread from Outlook has a few
#: thousand) hold them with room to spare while a tag bomb cannot cost more than ~30 ms.
MAX_TAGS = 10_000
_CHUNK = 16_384


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.lines: list[tuple[int, str]] = []
        self._cur: list[str] = []
        self._has_text = False
        self._cur_depth = 0
        self._blockquote = 0
        self._quoted_rest = False
        self._skip = 0
        self._pre = 0
        self.tags = 0

    # --- line assembly -----------------------------------------------------------------------

    def _depth(self) -> int:
        return self._blockquote + (1 if self._quoted_rest else 0)

    def _flush(self, force: bool = False) -> None:
        if self._has_text or force:
            depth = self._cur_depth if self._has_text else self._depth()
            self.lines.append((depth, "".join(self._cur)))
        self._cur = []
        self._has_text = False

    def _write(self, text: str) -> None:
        if not text:
            return
        if not self._has_text:
            if not text.strip():
                if self._pre:
                    self._cur.append(text)
                return
            self._cur_depth = self._depth()
            self._has_text = True
        self._cur.append(text)

    # --- parser callbacks ----------------------------------------------------------------------

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags += 1
        if tag in _SKIP_TAGS:
            self._skip += 1
            return
        if tag == "body":
            self._skip = 0  # an unclosed <head> must not swallow the whole mail
        for name, value in attrs:
            if name in ("id", "class") and value:
                low = value.lower()
                if any(marker in low for marker in QUOTE_MARKERS):
                    self._flush()
                    self._quoted_rest = True
                    break
        if tag == "br":
            self._flush(force=True)
        elif tag in _BLOCK_TAGS:
            self._flush()
            if tag == "blockquote":
                self._blockquote += 1
            elif tag == "pre":
                self._pre += 1
        elif tag in _CELL_TAGS:
            self._write(" ")

    def handle_endtag(self, tag: str) -> None:
        self.tags += 1
        if tag in _SKIP_TAGS:
            self._skip = max(0, self._skip - 1)
            return
        if tag in _BLOCK_TAGS:
            self._flush()
            if tag == "blockquote":
                self._blockquote = max(0, self._blockquote - 1)
            elif tag == "pre":
                self._pre = max(0, self._pre - 1)

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._pre:
            first, *rest = data.split("\n")
            self._write(first)
            for piece in rest:
                self._flush(force=True)
                self._write(piece)
        else:
            self._write(_COLLAPSE.sub(" ", data))

    def parse_marked_section(self, i: int, report: int = 1) -> int:
        # The stdlib raises AssertionError on "<![anything-unexpected"; treat it as a bogus comment.
        try:
            return super().parse_marked_section(i, report)
        except AssertionError:
            end = self.rawdata.find(">", i + 3)
            return -1 if end < 0 else end + 1

    def result(self) -> str:
        self._flush()
        out: list[str] = []
        for depth, text in self.lines:
            line = text.replace("\xa0", " ").translate(_INVISIBLE).strip()
            out.append(("> " * depth + line).rstrip())
        return _tidy("\n".join(out))


def _tidy(text: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _crude(markup: str) -> str:
    """Last resort when the parser gives up: strip tags and keep the words."""
    body = re.sub(r"(?is)<(style|script|head)\b.*?</\1\s*>", " ", markup)
    body = re.sub(r"(?i)<br\s*/?>|</?(p|div|tr|li|h\d|blockquote)\b[^>]*>", "\n", body)
    text = html.unescape(_TAG.sub("", body)).replace("\xa0", " ").translate(_INVISIBLE)
    lines = (" ".join(line.split()) for line in text.split("\n"))
    return _tidy("\n".join(lines))


def html_to_text(markup: str) -> str:
    """Render an HTML mail body as plain text with quoted parts marked by ``> ``.

    Never raises: a parser failure falls back to crude tag stripping, which loses quote marks but
    keeps the words.
    """
    converter = _Converter()
    try:
        for start in range(0, len(markup), _CHUNK):
            converter.feed(markup[start : start + _CHUNK])
            if converter.tags > MAX_TAGS:
                markup = markup[: start + _CHUNK]  # for the fallback below, too
                break
        converter.close()
        return converter.result()
    except Exception:
        try:
            return _crude(markup)
        except Exception:
            return ""
