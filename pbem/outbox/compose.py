"""Builds outgoing mails from the templates: a text/plain part, a text/html alternative, attachments.

The text part is what players read and quote back; the HTML part shows the board as a coloured table
because mail clients do not reliably keep monospace, and offers each action (a legal move, accept,
a confirmation) as a ``mailto:`` link, so a player on a phone taps and presses Send. The first line
of the body is the headline: what changed, which every inbox shows as the preview. Every header that
threading and loop prevention need is set here, in one place.
"""

from __future__ import annotations

import re
import secrets
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from email.charset import BASE64, QP, Charset
from email.generator import BytesGenerator
from email.header import Header
from email.message import Message
from email.mime.application import MIMEApplication
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from email.policy import Compat32
from email.utils import format_datetime, formataddr
from functools import cache
from io import BytesIO
from typing import Any, NamedTuple
from urllib.parse import quote

from jinja2 import (
    Environment,
    FileSystemLoader,
    StrictUndefined,
    Template,
    pass_environment,
    select_autoescape,
)
from jinja2.filters import do_wordwrap
from markupsafe import Markup

from pbem.i18n import install_jinja
from pbem.resources import data_dir

SERVER_HEADER = "X-Pbem-Server"


class Action(NamedTuple):
    """One tap in the HTML part: ``line`` is the command the link's mail carries. A (text, line)
    pair, like the engine's legal moves, which a group holds as they are (hundreds per mail to the
    seat to move: building an object for each cost a tenth of a millisecond per move)."""

    text: str
    line: str


@dataclass
class ActionGroup:
    label: str
    items: Sequence[tuple[str, str]]  # (text, line) pairs: Actions, or the engine's legal moves as they are
    moves: bool = False  # the legal moves: shown as links only to those who chose them


@dataclass
class Section:
    title: str | None = None
    lines: list[str] = field(default_factory=list)
    pre: str | None = None
    board_text: str | None = None
    board_html: str | None = None
    scores: str | None = None
    legal: str | None = None
    # Links of the HTML part; where a section has them they stand in for ``legal`` there.
    actions: list[ActionGroup] = field(default_factory=list)

    def __post_init__(self) -> None:
        # Its own list: the same lines go to several readers (a message to each opponent and the
        # sender's confirmation), and what is added to one reader's section (the quote of the
        # sender's command) must not appear in the others'.
        self.lines = list(self.lines)

    def links(self, taps: bool) -> list[ActionGroup]:
        """The groups the HTML part shows as links: the legal moves only to those who chose them
        (``taps``). Here, not in the template: Jinja's ``rejectattr`` tried each group as a mapping
        first, a third of rendering the part."""
        return self.actions if taps else [group for group in self.actions if not group.moves]


@dataclass
class Attachment:
    filename: str
    content: bytes
    maintype: str = "application"
    subtype: str = "json"


TEXT_WIDTH = 72  # the templates wrap text lines here; boards and tables stay within 78


def quoted(text: str, *, most: int | None = None) -> list[str]:
    """The player's own words as a mail quotes them back: every line starts with "> ", also where
    a long line is wrapped, and a word too long for a line is broken, so nothing passes the
    mail's width. With ``most``, a longer quote is cut to that many lines, the last ending with
    "…" (the player has the rest in their own mail)."""
    lines: list[str] = []
    for line in text.split("\n"):
        lines += textwrap.wrap(line, TEXT_WIDTH - 2, break_on_hyphens=False) or [""]
    if most is not None and len(lines) > most:
        lines = lines[:most]
        lines[-1] = lines[-1][:TEXT_WIDTH - 3].rstrip() + "…"
    return [f"> {line}".rstrip() for line in lines]


@pass_environment
def _wordwrap(environment: Environment, s: str, width: int = 79, break_long_words: bool = True,
              wrapstring: str | None = None, break_on_hyphens: bool = False) -> str:
    """Jinja's ``wordwrap``, which returns a printable line that fits as it is, and wraps one of
    words between single spaces, none longer than a line, itself, without ``textwrap`` (most
    lines of a mail fit, and the footer's list of commands takes two: wrapping each with
    ``textwrap`` cost a quarter of the text template). Lines break at spaces only: a mail is full
    of words a hyphen holds together (game ids ac-12, dates, addresses, 'THEIR-MOVE'), and a
    reader copies them from the text."""
    if s and s.isprintable() and not break_on_hyphens:
        if len(s) <= width and not s.endswith(" "):
            return s
        words = s.split(" ")
        if "" not in words and max(map(len, words)) <= width:
            newline = environment.newline_sequence if wrapstring is None else wrapstring
            return newline.join(_pack(words, width, width))
    return do_wordwrap(environment, s, width, break_long_words, wrapstring, break_on_hyphens)


def _pack(words: list[str], first: int, width: int) -> list[str]:
    """Words into lines greedily, as ``textwrap`` and compat32's header folding do: the first line
    holds up to ``first`` characters, the others up to ``width``; a longer word has a line alone."""
    lines, line, room = [], words[0], first
    for word in words[1:]:
        if len(line) + 1 + len(word) <= room:
            line += " " + word
        else:
            lines.append(line)
            line, room = word, width
    lines.append(line)
    return lines


@cache
def _environment() -> Environment:
    environment = Environment(
        loader=FileSystemLoader(str(data_dir("templates"))),
        autoescape=select_autoescape(enabled_extensions=("html", "html.j2"), default_for_string=False),
        undefined=StrictUndefined, keep_trailing_newline=True, trim_blocks=False,
        auto_reload=False,  # templates are installed files; no stat() per mail
    )
    environment.filters["wordwrap"] = _wordwrap
    install_jinja(environment)  # one environment for all languages: the words follow ``speaking``
    return environment


@cache
def _template(name: str) -> Template:
    """The template with its globals in a plain dict. Jinja chains a template's globals to the
    environment's (a ChainMap), and every render copied them out of it key by key: a third of
    rendering the two parts of a mail (37 -> 27 us). The environment's globals are all set when
    it is made (``_environment``), so the copy holds the same."""
    template = _environment().get_template(name)
    template.globals = dict(template.globals)
    return template


def render(template: str, **context: Any) -> str:
    return _template(template).render(**context)


def new_message_id(domain: str, *parts: str) -> str:
    """Our Message-IDs carry game and ply, so a reply's In-Reply-To tells which board it answers."""
    label = ".".join(p for p in parts if p)
    return f"<pbem.{label + '.' if label else ''}{secrets.token_hex(6)}@{domain}>"


class _Compat32(Compat32):
    """compat32 that writes a short one-line ASCII header as it is: the stdlib builds a ``Header``
    and folds every value, a tenth of the CPU per move, to return that very line (checked for
    hundreds of thousands of random values: the output is the same byte for byte)."""

    def _fold(self, name: str, value: Any, sanitize: bool) -> str:
        if self.max_line_length == 78 and _fits_one_line(name, value):
            return f"{name}: {value}{self.linesep}"
        return super()._fold(name, value, sanitize)


def _fits_one_line(name: str, value: Any) -> bool:
    """A header that compat32 writes as it is: printable ASCII within 78 columns (it breaks the line
    at a form feed or other line separators that ``str.splitlines`` knows, not only at CR and LF)."""
    return isinstance(value, str) and value.isascii() and value.isprintable() and len(name) + len(value) <= 76


_SMTP_POLICY = _Compat32(linesep="\r\n")
_QP_UTF8 = Charset("utf-8")
_QP_UTF8.body_encoding = QP  # readable in raw form and safe for 7-bit relays
_B64_UTF8 = Charset("utf-8")
_B64_UTF8.body_encoding = BASE64  # for HTML: encoded in C, where quoted-printable is pure Python


_FOLD_AT = 800


def _fold_html(html: str) -> str:
    """Long HTML lines broken between two tags (``><``), where a newline changes nothing a reader
    sees, so the part stays 7bit: base64 would add a third to the largest part of every mail."""
    out = []
    for line in html.split("\n"):
        while len(line) > _FOLD_AT:
            cut = line.find("><", _FOLD_AT // 2)
            if cut < 0 or cut > 980:
                break
            out.append(line[:cut + 1])
            line = line[cut + 1:]
        out.append(line)
    return "\n".join(out)


def _seven_bit(text: str) -> bool:
    """Plain ASCII with short lines: sent as it is (7bit), with no encoding overhead at all."""
    return text.isascii() and max(map(len, text.splitlines()), default=0) <= 900


def _text_part(text: str, subtype: str) -> MIMEText:
    """7bit when it is plain ASCII with short lines; otherwise quoted-printable for text and base64
    for HTML (SMTP refuses lines over 998 octets). The templates keep HTML lines short, so the
    common case, ASCII, costs no encoding overhead at all."""
    if _seven_bit(text):
        return MIMEText(text, subtype, "us-ascii", policy=_SMTP_POLICY)
    charset = _B64_UTF8 if subtype == "html" else _QP_UTF8
    return MIMEText(text, subtype, charset, policy=_SMTP_POLICY)  # type: ignore[arg-type]


def _boundary() -> str:
    """A boundary that cannot occur in any part, so the generator need not scan the bodies for a
    safe one: parts are 7bit text with lines of our own templates, quoted-printable (which writes
    "=" as "=3D") or base64 (no "=_"), and none of them can contain "=_pbem"."""
    return f"=_pbem_{secrets.token_hex(12)}"


# Line breaks of every kind (CR, LF, VT, FF, NEL, U+2028/9) and other control characters: a header
# value made from a player's words (a subject quoting a line they wrote) must stay one header.
_CONTROL = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]+")


def one_line(value: str) -> str:
    return " ".join(_CONTROL.sub(" ", value).split())


SUBJECT_MOST = 60  # characters of a headline that a subject of its own (outside a game) keeps
_CLAUSE_END = re.compile(r"(?:; |\. (?=[A-ZÀ-Ž]))")


def subject_phrase(headline: str, most: int = SUBJECT_MOST) -> str:
    """A headline as a subject, which ends where a phrase ends: the whole headline when it is
    short, else its longest leading clauses that fit (up to a "; " or the end of a sentence), else
    the words before its first ": " (the "Not done" of a refusal, whose reason the body gives in
    full), else its first words and "…"."""
    text = one_line(headline)
    if len(text) <= most:
        return text
    ends = [m.start() for m in _CLAUSE_END.finditer(text, 0, most + 1)]
    if ends:
        return text[:ends[-1]]
    head = text.split(": ", 1)[0]
    if len(head) < len(text) and len(head) <= most:
        return head
    return text[:most - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def _header(value: str) -> str | Header:
    """One line; ASCII stays as is, anything else is RFC 2047-encoded."""
    value = one_line(value)
    try:
        value.encode("ascii")
    except UnicodeEncodeError:
        return Header(value, "utf-8")
    return value


def build_message(*, from_addr: str, from_name: str, to: str, subject: str, message_id: str,
                  date: datetime, headline: str, reply_to: str | None = None,
                  in_reply_to: str | None = None, references: list[str] | None = None,
                  auto_submitted: str = "auto-generated", sections: list[Section] | None = None,
                  footer: list[str] | None = None, attachments: list[Attachment] | None = None,
                  mailto: Callable[[str], str] | None = None, html: bool = True, taps: bool = True,
                  extra_headers: dict[str, str] | None = None) -> MailDraft:
    """The mail, rendered and with its headers, ready to be written: ``message()`` gives it as a
    stdlib ``email.mime`` tree, ``to_bytes()`` its wire form.

    ``mailto`` turns an action's command line into the link its tap opens; ``html=False`` sends
    the text part alone, ``taps=False`` leaves out the legal moves' links (the players' choices)."""
    headline = one_line(headline)
    context = {"subject": subject, "headline": headline, "sections": sections or [],
               "footer": footer or [], "mailto": mailto, "taps": taps}
    text = render("mail.txt.j2", **context)
    html_text = None
    if html:
        # Symbols (★ ▲ box drawing) as character references keep the part ASCII, hence 7bit
        html_text = _fold_html(render("mail.html.j2", **context).encode("ascii", "xmlcharrefreplace")
                               .decode("ascii"))
    headers: list[tuple[str, str | Header]] = [("From", formataddr((from_name, from_addr))), ("To", to)]
    if reply_to:
        headers.append(("Reply-To", formataddr((from_name, reply_to))))
    headers += [("Subject", _header(subject)), ("Date", format_datetime(date)), ("Message-ID", message_id)]
    if in_reply_to:
        headers.append(("In-Reply-To", in_reply_to))
    refs = [r for r in (references or []) if r]
    if refs:
        headers.append(("References", " ".join(dict.fromkeys(refs))))
    headers += [("Auto-Submitted", auto_submitted), (SERVER_HEADER, _header(from_name))]
    headers += [(name, _header(value)) for name, value in (extra_headers or {}).items()]
    return MailDraft(message_id, text, html_text, headers, list(attachments or []))


@dataclass
class MailDraft:
    """A mail's parts and headers (in the order they are written), before they become a MIME tree
    or bytes: most mails need only their bytes, which ``to_bytes`` writes without the tree."""

    message_id: str
    text: str
    html: str | None  # the alternative part: ASCII (character references), long lines folded
    headers: list[tuple[str, str | Header]]
    attachments: list[Attachment]

    def message(self) -> Message:
        """The stdlib tree (compat32 policy): built this way it costs a fraction of the header
        parsing the modern EmailMessage API does on every assignment."""
        body: Message = _text_part(self.text, "plain")
        if self.html is not None:
            text, body = body, MIMEMultipart("alternative", boundary=_boundary(), policy=_SMTP_POLICY)
            body.attach(text)
            body.attach(_text_part(self.html, "html"))
        if self.attachments:
            message: Message = MIMEMultipart("mixed", boundary=_boundary(), policy=_SMTP_POLICY)
            message.attach(body)
            for attachment in self.attachments:
                part = MIMEApplication(attachment.content, attachment.subtype, policy=_SMTP_POLICY)
                part.add_header("Content-Disposition", "attachment", filename=attachment.filename)
                message.attach(part)
        else:
            message = body
        for name, value in self.headers:
            message[name] = value
        return message

    def to_bytes(self) -> bytes:
        """The wire form, what ``to_bytes(self.message())`` gives. The common shapes, a 7bit text
        part alone or with its 7bit HTML alternative and no attachment, are written directly: the
        MIME tree and the generator walking it were two thirds of the CPU of composing a mail
        (0.19 of 0.27 ms). tests/mail/test_compose_wire.py holds both ways equal byte for byte."""
        text = None if self.attachments else _seven_bit_body(self.text)
        html = None if self.html is None else _seven_bit_body(self.html)
        if text is None or (html is None and self.html is not None):
            return to_bytes(self.message())
        out = []
        if self.html is not None:
            boundary = _boundary()
            # What the generator folds the multipart's Content-Type to (the boundary's length is fixed)
            out.append(f'Content-Type: multipart/alternative;\r\n boundary="{boundary}"\r\n'
                       "MIME-Version: 1.0\r\n")
        else:
            out.append(_PLAIN_HEAD)
        out += [_fold(name, value) for name, value in self.headers]
        out.append("\r\n")
        if html is None:
            out.append(text)
        else:
            out += [f"--{boundary}\r\n", _PLAIN_HEAD, "\r\n", text, f"\r\n--{boundary}\r\n", _HTML_HEAD,
                    "\r\n", html, f"\r\n--{boundary}--\r\n"]
        return "".join(out).encode("ascii", "surrogateescape")


_PLAIN_HEAD = ('Content-Type: text/plain; charset="us-ascii"\r\nMIME-Version: 1.0\r\n'
               "Content-Transfer-Encoding: 7bit\r\n")  # a MIMEText's headers, 7bit
_HTML_HEAD = _PLAIN_HEAD.replace("text/plain", "text/html")


def _fold(name: str, value: str | Header) -> str:
    """A header line as the generator writes it (``policy.fold_binary``). Printable ASCII words
    (References, a long subject) are folded here as compat32 folds them, greedily at the spaces,
    unless a word ends with one of its preferred breaks, ";" or ",", or the first word passes the
    first line: its ``Header`` was a third of the time to write a mail's headers."""
    if _fits_one_line(name, value):
        return f"{name}: {value}\r\n"
    if isinstance(value, str) and value.isascii() and value.isprintable():
        words = value.split(" ")
        room = 76 - len(name)  # of the first line; the others start with a space
        if "" not in words and len(words[0]) <= room and not any(word[-1] in ";," for word in words):
            return f"{name}: " + "\r\n ".join(_pack(words, room, 77)) + "\r\n"
    return _SMTP_POLICY.fold_binary(name, value).decode("ascii", "surrogateescape")


def _seven_bit_body(text: str) -> str | None:
    """A part's body as the generator writes it (every line end as CR LF) when the part is 7bit
    (``_seven_bit``), else None."""
    if not text.isascii():
        return None
    if "\r" in text:
        return _LINE_END.sub("\r\n", text) if _seven_bit(text) else None
    lines = text.split("\n")  # lines no longer than splitlines() gives
    return "\r\n".join(lines) if max(map(len, lines)) <= 900 or _seven_bit(text) else None


class _Generator(BytesGenerator):
    """The stdlib's generator, writing a body's lines in one piece: it wrote each line and each
    line end on its own, a hundred writes a part and a tenth of the CPU a move. Every line end
    (CR LF, CR, LF) still becomes the policy's; tests/mail/test_compose_headers.py holds the
    output equal to ``Message.as_bytes`` byte for byte."""

    def _write_lines(self, lines: str) -> None:
        if lines:
            self.write(lines.replace("\n", self._NL) if "\r" not in lines
                       else _LINE_END.sub(self._NL, lines))


_LINE_END = re.compile(r"\r\n|\r|\n")  # the stdlib generator's NLCRE


def to_bytes(message: Message) -> bytes:
    """What ``message.as_bytes(policy=...)`` gives, in a third of the time."""
    out = BytesIO()
    _Generator(out, mangle_from_=False, policy=_SMTP_POLICY).flatten(message, unixfrom=False)
    return out.getvalue()


_MAILTO_SAFE = "!$'()*,;:@/"  # RFC 6068 lets these stand; spaces must be %20, never "+"


def mailto_links(address: str, subject: str) -> Callable[[str], str]:
    """``line -> mailto: URL`` (RFC 6068) that opens a reply to ``address`` with the subject and
    the command filled in; spaces are %20, never "+", which RFC 6068 reads as a plus sign. The
    address and subject are quoted once for all the links of a mail (a hundred legal moves), at
    the first link: most mails have none."""
    @cache
    def head() -> str:
        return f"mailto:{quote(address, safe='@+')}?subject={quote(subject, _MAILTO_SAFE)}&body="

    # Markup: nothing here needs HTML escaping (quote() left no quote, < or >), and "&body" is
    # no character reference, so the "&amp;" autoescaping would write is a waste of every link.
    return lambda line: Markup(head() + quote(line, _MAILTO_SAFE))
