"""Incoming mail as the server needs it: who wrote, what they typed, and whether to answer at all.

Players reply from any mail client. What they typed sits above (sometimes below) a quote of our
previous mail, and that quote contains the board and its list of legal moves, which must never be
read back as commands (``quotes``). The mail may also be something nobody typed — a bounce, a
vacation reply, list traffic, or our own mail coming back — and answering those starts mail loops,
so :attr:`IncomingMail.auto` says why a mail must be left unanswered (``automatic``).

The reader never raises: mail comes from strangers, and one unreadable message must not stop the
queue. Standard library only; the ``email`` package with ``policy.default`` (in a subclass that
survives headers the stdlib's own parser chokes on) does MIME, transfer encodings and RFC 2047
headers, and this package only adds what it lacks (format=flowed, charset fallbacks, inline PGP,
quote stripping: ``body``, ``headers``, ``turnfile``).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, field
from email.message import EmailMessage, Message
from email.parser import BytesParser
from email.policy import EmailPolicy
from functools import lru_cache
from typing import Any

from pbem.headerblock import plain_header_fields
from pbem.reading.addresses import split_plus
from pbem.reading.automatic import DSN_SUBJECT, automatic_kind, bounce_recipients, failure_reasons
from pbem.reading.body import body_text
from pbem.reading.headers import (
    LOGGED_HEADERS,
    LONG_HEADER,
    SUBJECT_PLY,
    address_pairs,
    clean_str,
    clean_subject,
    decode_raw_header,
    first_raw,
    header_text,
    message_ids,
    raw_values,
)
from pbem.reading.quotes import split_reply
from pbem.reading.turnfile import BODY_TOKEN, find_json_turn

__all__ = ["IncomingMail", "read_headers", "read_mail"]


@dataclass
class IncomingMail:
    """One received mail, reduced to what routing and command parsing need.

    Every field has a default so that other parts of the server can build instances in tests.
    """

    message_id: str | None = None
    from_addr: str = ""
    from_name: str = ""
    to_addrs: list[str] = field(default_factory=list)
    subject: str = ""
    clean_subject: str = ""
    subject_tag: str | None = None
    subject_ply: int | None = None
    in_reply_to: str | None = None
    references: list[str] = field(default_factory=list)
    text: str = ""
    command_text: str = ""
    command_lines: list[str] = field(default_factory=list)
    json_turn: Any | None = None
    json_error: str | None = None
    auto: str | None = None
    bounce_for: list[str] = field(default_factory=list)
    #: What the delivery report says about each of ``bounce_for``, where it says something:
    #: "550 5.1.1 <bob@example.org>: User unknown".
    bounce_reasons: dict[str, str] = field(default_factory=dict)
    plus_tokens: list[str] = field(default_factory=list)
    body_token: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    #: The player's reply without the quoted mail but *with* any signature: ``command_text`` is
    #: this cut at the signature. Kept for logs and for comparing with other quote strippers.
    reply_text: str = ""
    #: Where ``json_turn`` came from: an attachment's file name (or content type), or
    #: "the mail body". Lets the caller tell a turn file from one of its own attachments that a
    #: client re-attached to the reply (iOS Mail offers to).
    json_source: str | None = None
    #: Whether ``command_lines`` starts with the subject (a new mail whose subject may be a command).
    subject_is_command: bool = False
    #: The SMTP envelope sender the door saw ("" for the null sender ``<>``), None when unknown.
    envelope_from: str | None = None
    #: The subject reads like a delivery report ("Undeliverable: ..."). Not enough on its own to
    #: call the mail a bounce (a player may write about one); the processor decides.
    dsn_subject: bool = False


# --- entry point ---------------------------------------------------------------------------------

_READ_ERROR = "X-Pbem-Read-Error"


class _TolerantPolicy(EmailPolicy):
    """``policy.default``, except that a header the stdlib's parser chokes on is read simplified,
    and that a header is parsed once per mail however often it is looked at.

    Some hostile headers make ``email._header_value_parser`` raise (e.g. IndexError on a
    Content-Type whose parameters end abruptly), and the feed parser itself fetches Content-Type,
    so without this a single bad header would make the whole message unreadable. Retrying with
    the parameters dropped, then empty, keeps the header's type (``is_attachment`` and friends
    need it) while losing only what could not be parsed anyway.

    The reader asks each part for its Content-Type half a dozen times (body, attachments, turn
    files, bounces), and each ask would parse the header again (~75 us); with a hundred parts
    that alone was 60 ms. Parsed headers are immutable, so a small cache keyed by the raw text
    returns the same object; it is emptied for every mail, since parse trees kept across mails
    only make the garbage collector's full passes longer.
    """

    def header_fetch_parse(self, name: str, value: str) -> Any:
        return _fetch_parse(self, name, value)


#: MIME headers longer than this are rebuilt from their well-formed parts before parsing: real ones
#: are far shorter, and the stdlib's parser takes time that grows with the square of the junk in
#: them (4,000 characters of "> > >" in a Content-Transfer-Encoding: 117 ms; 40,000: 21 s).
_LONG_MIME_HEADER = 256
_MIME_HEADERS = ("content-type", "content-disposition", "content-transfer-encoding")
_MAIN_VALUE = re.compile(r"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}(?:/[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100})?)")
_PARAMETER = re.compile(r";\s*([!#$%&'*+.^_`|~0-9A-Za-z-]{1,80})\s*=\s*"
                        r"(\"(?:[^\"\\\r\n]|\\.){0,500}\"|[!#$%&'*+.^_`|~0-9A-Za-z%-]{1,500})")


def _well_formed_part(name: str, value: str) -> str:
    text = " ".join(value.split())
    main = _MAIN_VALUE.match(text)
    if main is None:
        return ""
    if name == "content-transfer-encoding":
        return main.group(1)
    params = [f"; {p.group(1)}={p.group(2)}" for p in _PARAMETER.finditer(text, main.end())]
    return main.group(1) + "".join(params[:12])


_TOKEN = r"[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*"
#: MIME headers as nearly every mail writes them ("text/plain; charset=utf-8", "7bit"): kept as
#: plain text, which every stdlib method that reads them (content type, parameters, boundary,
#: charset, decoding) parses itself, as compat32 does. The structured parser took a tenth of the
#: time a reply took to read for these two headers alone. Content-Disposition is not among them:
#: ``is_attachment`` reads an attribute of its parsed form. tests/mail/test_parse_shortcut.py
#: holds the reading equal either way.
SIMPLE_MIME_HEADERS = {
    "content-type": re.compile(
        rf"{_TOKEN}/{_TOKEN}(?:;[ \t]*[a-z0-9-]+=(?:{_TOKEN}|\"[A-Za-z0-9 !#$&^_.+=/:,@?()-]*\"))*"),
    "content-transfer-encoding": re.compile(r"(?i:7bit|8bit|binary|quoted-printable|base64)"),
}
_PARAMETER_NAME = re.compile(r";[ \t]*([a-z0-9-]+)=")


@lru_cache(maxsize=1024)
def _fetch_parse(policy: _TolerantPolicy, name: str, value: str) -> Any:
    simple = SIMPLE_MIME_HEADERS.get(name.lower())
    if simple is not None and simple.fullmatch(value):
        names = _PARAMETER_NAME.findall(value)  # lower case: the structured parser lowers them
        if len(set(names)) == len(names):  # ... and keeps one of a repeated name
            return value
    if len(value) > _LONG_MIME_HEADER and name.lower() in _MIME_HEADERS:
        value = _well_formed_part(name.lower(), value)
    elif len(value) > LONG_HEADER:
        value = value[:LONG_HEADER]
    try:
        return EmailPolicy.header_fetch_parse(policy, name, value)
    except Exception:
        pass
    text = "".join(str(value).splitlines())
    for simpler in (text.split(";")[0], ""):
        try:
            return policy.header_factory(name, simpler)
        except Exception:
            continue
    return ""


class _ReadMessage(EmailMessage):
    """A message as the parser builds it for the reader, which answers what its Content-Type and
    Content-Disposition say once per question rather than once per ask.

    The reader asks a one-part mail for its content type five times and for a parameter of it
    (charset, format, report-type, file name) five more, and every ask parses the header's
    parameters again: a fifth of the time a reply took to read. An answer is kept with the
    header fields and default type it was worked out from, and given again only while they are
    the same, so a message changed after parsing is answered afresh.
    """

    def _answer(self, question: tuple[object, ...], work: Any) -> Any:
        fields = (self.get_default_type(), *self.raw_items())
        answers = self.__dict__.setdefault("_pbem_answers", {})
        known = answers.get(question)
        if known is not None and known[0] == fields:
            return known[1]
        answer = work()
        answers[question] = (fields, answer)
        return answer

    def get_content_type(self) -> str:
        return self._answer(("type",), super().get_content_type)  # type: ignore[no-any-return]

    def get_param(self, param: str, failobj: Any = None, header: str = "content-type",
                  unquote: bool = True) -> Any:
        # The stdlib's get_param: the first parameter of that name in get_params, else failobj.
        params = self._answer(("params", header.lower(), unquote),
                              lambda: self.get_params(None, header, unquote))
        if params is None:  # no such header
            return failobj
        wanted = param.lower()
        return next((value for name, value in params if name.lower() == wanted), failobj)


_POLICY = _TolerantPolicy(message_factory=_ReadMessage)


def read_mail(raw: bytes, *, own_addresses: Collection[str] = (),
              envelope_from: str | None = None) -> IncomingMail:
    """Parse one raw RFC 5322 message.

    ``own_addresses`` are the server's addresses; a mail from any of them (plus tags ignored) is
    marked ``auto="own-mail"``. ``envelope_from`` is the envelope sender the door kept ("" for
    ``<>``: a bounce). Never raises: if some unforeseen input still trips the parser, the result is
    an empty mail whose ``headers`` carry ``X-Pbem-Read-Error``.

    Call it only for mail within the limits of :mod:`pbem.reading.limits`; for other mail,
    :func:`read_headers` gives what an answer needs at a bounded cost.
    """
    _fetch_parse.cache_clear()  # the cache is per mail: kept parse trees would only feed the GC
    try:
        return _read(raw, own_addresses, envelope_from)
    except Exception as exc:  # the safety net; every step below is meant to cope on its own
        return IncomingMail(headers={_READ_ERROR: f"{type(exc).__name__}: {exc}"[:500]},
                            envelope_from=envelope_from)


#: What ``read_headers`` looks at, at most: the fields that say who wrote and whether to answer
#: sit at the top of any real mail.
_HEADERS_ONLY_BYTES = 64_000
_HEADERS_ONLY_LINES = 1000


def read_headers(raw: bytes, *, own_addresses: Collection[str] = (),
                 envelope_from: str | None = None) -> IncomingMail:
    """Only the top of the header block: sender, recipients (tokens), subject, ids and whether
    the mail is automatic. For mail over a limit, whose body is never read. Never raises."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    head = bytes(raw[:_HEADERS_ONLY_BYTES])
    for separator in (b"\r\n\r\n", b"\n\n"):
        end = head.find(separator)
        if end >= 0:
            head = head[:end]
    head = b"\n".join(head.splitlines()[:_HEADERS_ONLY_LINES]) + b"\n\n"
    _fetch_parse.cache_clear()
    try:
        msg = BytesParser(policy=_POLICY).parsebytes(head, headersonly=True)
        mail = IncomingMail(envelope_from=envelope_from)
        _read_header_fields(msg, mail)
        mail.auto = automatic_kind(msg, mail.subject, mail.from_addr, own_addresses, envelope_from)
        return mail
    except Exception as exc:
        return IncomingMail(headers={_READ_ERROR: f"{type(exc).__name__}: {exc}"[:500]},
                            envelope_from=envelope_from)


def _read_header_fields(msg: Any, mail: IncomingMail) -> bool:
    """Fill in what the header fields say; True when the subject is one of ours."""
    mail.message_id = next(iter(message_ids(first_raw(msg, "Message-ID"))), None)
    mail.in_reply_to = next(iter(message_ids(first_raw(msg, "In-Reply-To"))), None)
    mail.references = message_ids(" ".join(raw_values(msg, "References")))

    senders = address_pairs(msg, ("From",))
    from_spec = senders[0][1] if senders else ""
    if "@" in from_spec:
        mail.from_addr = from_spec.lower()
    mail.from_name = senders[0][0] if senders else ""

    specs: dict[str, str] = {}  # lower-cased → as written, first occurrence wins
    for _name, spec in address_pairs(msg, ("To", "Cc", "Delivered-To", "X-Original-To")):
        if "@" in spec:
            specs.setdefault(spec.lower(), spec)
    mail.to_addrs = list(specs)
    for spec in specs.values():
        _base, tag = split_plus(spec)
        if tag and tag not in mail.plus_tokens:
            mail.plus_tokens.append(tag)

    mail.subject = header_text(msg, "Subject") or ""
    mail.clean_subject, mail.subject_tag, ours = clean_subject(mail.subject)
    ply = SUBJECT_PLY.search(mail.subject)
    mail.subject_ply = int(ply.group(1)) if ply else None
    mail.dsn_subject = bool(DSN_SUBJECT.search(mail.subject))

    for name in LOGGED_HEADERS:
        raw = raw_values(msg, name)
        if raw:
            mail.headers[name] = clean_str(decode_raw_header(raw[0][:2000]))[:500]
    return ours


_HEAD_END = re.compile(rb"\r?\n\r?\n")


def parse_message(raw: bytes) -> Message:
    """The stdlib's parse of ``raw``, made cheaper for the common mail of one part.

    The feed parser walks the body line by line, in Python, only to join the lines again when the
    body is one part: a fifth of the time a reply took to read. So the header block is parsed on
    its own, and when none of it was taken for a body (a line that is no header starts the body
    early) and it names no container type (multipart, message), the body is set as the parser
    itself would set it: the bytes after the blank line, decoded as ASCII with surrogate escapes.
    A plain header block (``pbem.headerblock``) is not even given to the parser: its fields are
    set as the parser sets them. Anything else gets the whole parse
    (tests/mail/test_parse_shortcut.py holds both equal).
    """
    raw = bytes(raw)
    end = _HEAD_END.search(raw)
    if end is not None:
        fields = plain_header_fields(raw[:end.end()])
        if fields is None:
            msg = BytesParser(policy=_POLICY).parsebytes(raw[:end.end()], headersonly=True)
        else:
            msg = _ReadMessage(policy=_POLICY)
            for name, value in fields:
                msg.set_raw(name, value)
            msg.set_payload("")
        if not msg.get_payload() and msg.get_content_maintype() not in ("multipart", "message"):
            msg.set_payload(raw[end.end():].decode("ascii", "surrogateescape"))
            return msg
    return BytesParser(policy=_POLICY).parsebytes(raw)


def _read(raw: bytes, own_addresses: Collection[str], envelope_from: str | None) -> IncomingMail:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    msg = parse_message(raw)
    mail = IncomingMail(envelope_from=envelope_from)
    ours = _read_header_fields(msg, mail)
    subject_is_command = bool(mail.clean_subject) and not ours and mail.subject_ply is None

    mail.text = body_text(msg)
    mail.reply_text, mail.command_text = split_reply(mail.text)
    lines = [line.strip() for line in mail.command_text.split("\n")]
    mail.subject_is_command = subject_is_command
    mail.command_lines = ([mail.clean_subject] if subject_is_command else []) + [
        line for line in lines if line
    ]
    for line in lines:
        token = BODY_TOKEN.match(line)
        if token:
            mail.body_token = token.group(1)
            break

    mail.json_turn, mail.json_error, mail.json_source = find_json_turn(
        msg, mail.text, mail.command_text
    )

    mail.auto = automatic_kind(msg, mail.subject, mail.from_addr, own_addresses, envelope_from)
    if mail.auto == "bounce" or (mail.auto is None and mail.dsn_subject):
        mail.bounce_for = bounce_recipients(msg, mail.text, own_addresses)
        mail.bounce_reasons = failure_reasons(msg) if mail.bounce_for else {}
    return mail

