"""Incoming mail as the server needs it: who wrote, what they typed, and whether to answer at all.

Players reply from any mail client. What they typed sits above (sometimes below) a quote of our
previous mail, and that quote contains the board and its list of legal moves, which must never be
read back as commands. Everything here is therefore about finding the boundary between the
player's own words and what their client added: ``>`` quotes, localized "On … wrote:" lines,
Outlook's header-only quotes, forwarded-message banners and signatures.

The mail may also be something nobody typed — a bounce, a vacation reply, list traffic, or our
own mail coming back — and answering those starts mail loops, so :attr:`IncomingMail.auto` says
why a mail must be left unanswered.

The parser never raises: mail comes from strangers, and one unreadable message must not stop the
queue. Standard library only; the ``email`` package with ``policy.default`` (in a subclass that
survives headers the stdlib's own parser chokes on) does MIME, transfer encodings and RFC 2047
headers, and this module only adds what it lacks (format=flowed, charset fallbacks, inline PGP,
quote stripping).
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from email.header import decode_header, make_header
from email.message import Message
from email.parser import BytesParser
from email.policy import EmailPolicy
from email.utils import getaddresses, parseaddr
from typing import Any

from pbem.mail.addresses import normalize, same_mailbox, split_plus
from pbem.mail.html_text import html_to_text

__all__ = ["IncomingMail", "read_mail", "split_reply", "unflow"]


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


# --- entry point ---------------------------------------------------------------------------------

_READ_ERROR = "X-Pbem-Read-Error"


class _TolerantPolicy(EmailPolicy):
    """``policy.default``, except that a header the stdlib's parser chokes on is read simplified.

    Some hostile headers make ``email._header_value_parser`` raise (e.g. IndexError on a
    Content-Type whose parameters end abruptly), and the feed parser itself fetches Content-Type,
    so without this a single bad header would make the whole message unreadable. Retrying with
    the parameters dropped, then empty, keeps the header's type (``is_attachment`` and friends
    need it) while losing only what could not be parsed anyway.
    """

    def header_fetch_parse(self, name: str, value: str) -> Any:
        try:
            return super().header_fetch_parse(name, value)
        except Exception:
            pass
        text = "".join(str(value).splitlines())
        for simpler in (text.split(";")[0], ""):
            try:
                return self.header_factory(name, simpler)
            except Exception:
                continue
        return ""


_POLICY = _TolerantPolicy()


def read_mail(raw: bytes, *, own_addresses: Collection[str] = ()) -> IncomingMail:
    """Parse one raw RFC 5322 message.

    ``own_addresses`` are the server's addresses; a mail from any of them (plus tags ignored) is
    marked ``auto="own-mail"``. Never raises: if some unforeseen input still trips the parser, the
    result is an empty mail whose ``headers`` carry ``X-Pbem-Read-Error``.
    """
    try:
        return _read(raw, own_addresses)
    except Exception as exc:  # the safety net; every step below is meant to cope on its own
        return IncomingMail(headers={_READ_ERROR: f"{type(exc).__name__}: {exc}"[:500]})


def _read(raw: bytes, own_addresses: Collection[str]) -> IncomingMail:
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogateescape")
    msg = BytesParser(policy=_POLICY).parsebytes(bytes(raw))
    mail = IncomingMail()

    mail.message_id = next(iter(_msgids(_first_raw(msg, "Message-ID"))), None)
    mail.in_reply_to = next(iter(_msgids(_first_raw(msg, "In-Reply-To"))), None)
    mail.references = _msgids(" ".join(_raw_values(msg, "References")))

    senders = _addresses(msg, ("From",))
    from_spec = senders[0][1] if senders else ""
    if "@" in from_spec:
        mail.from_addr = from_spec.lower()
    mail.from_name = senders[0][0] if senders else ""

    specs: dict[str, str] = {}  # lower-cased → as written, first occurrence wins
    for _name, spec in _addresses(msg, ("To", "Cc", "Delivered-To", "X-Original-To")):
        if "@" in spec:
            specs.setdefault(spec.lower(), spec)
    mail.to_addrs = list(specs)
    for spec in specs.values():
        _base, tag = split_plus(spec)
        if tag and tag not in mail.plus_tokens:
            mail.plus_tokens.append(tag)

    mail.subject = _header(msg, "Subject") or ""
    mail.clean_subject, mail.subject_tag, ours = _clean_subject(mail.subject)
    ply = _PLY.search(mail.subject)
    mail.subject_ply = int(ply.group(1)) if ply else None
    subject_is_command = bool(mail.clean_subject) and not ours and mail.subject_ply is None

    mail.text = _body_text(msg)
    mail.reply_text, mail.command_text = split_reply(mail.text)
    lines = [line.strip() for line in mail.command_text.split("\n")]
    mail.command_lines = ([mail.clean_subject] if subject_is_command else []) + [
        line for line in lines if line
    ]
    for line in lines:
        token = _BODY_TOKEN.match(line)
        if token:
            mail.body_token = token.group(1)
            break

    mail.json_turn, mail.json_error, mail.json_source = _json_turn(
        msg, mail.text, mail.command_text
    )

    mail.auto = _auto(msg, mail.subject, from_spec, own_addresses)
    if mail.auto == "bounce":
        mail.bounce_for = _bounce_recipients(msg)

    for name in _LOGGED_HEADERS:
        raw = _raw_values(msg, name)
        if raw:
            mail.headers[name] = _clean_str(_decode_raw_header(raw[0][:2000]))[:500]
    return mail


# --- headers -------------------------------------------------------------------------------------

_LOGGED_HEADERS = (
    "Message-ID", "Date", "From", "To", "Cc", "Subject", "In-Reply-To", "Return-Path",
    "Delivered-To", "X-Original-To", "Auto-Submitted", "Precedence", "List-Id", "X-Mailer",
    "User-Agent", "Content-Type",
)


def _clean_str(value: str) -> str:
    """Make header text safe to log and compare.

    Raw 8-bit header bytes reach us as surrogate escapes; most are UTF-8 sent without RFC 2047,
    so reinterpret them as that and replace what still does not decode.
    """
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        try:
            data = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that does not stand for a byte
            data = value.encode("utf-8", "replace")
        value = data.decode("utf-8", "replace")
    for ch in "\r\n\x00":
        value = value.replace(ch, " ")
    return value.strip()


def _raw_values(msg: Message, name: str) -> list[str]:
    wanted = name.lower()
    try:
        return [str(v) for k, v in msg.raw_items() if str(k).lower() == wanted]
    except Exception:
        return []


def _first_raw(msg: Message, name: str) -> str:
    values = _raw_values(msg, name)
    return values[0] if values else ""


def _decode_raw_header(raw: str) -> str:
    try:
        return str(make_header(decode_header(raw)))
    except Exception:
        return raw


def _header(msg: Message, name: str) -> str | None:
    """The first ``name`` header, RFC 2047-decoded, or None when absent."""
    try:
        value = msg.get(name)
        if value is None:
            return None
        return _clean_str(str(value))
    except Exception:
        raw = _raw_values(msg, name)
        return _clean_str(_decode_raw_header(raw[0])) if raw else None


_LONG_HEADER = 4000  # beyond this, the stdlib's structured parser takes seconds per header


def _addresses(msg: Message, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(display name, addr-spec) pairs from address headers, tolerant of garbage."""
    pairs: list[tuple[str, str]] = []
    for name in names:
        raw = _raw_values(msg, name)
        if not raw:
            continue
        try:
            if sum(len(v) for v in raw) > _LONG_HEADER:
                raise ValueError("too long for the structured parser")
            for header in msg.get_all(name) or []:
                found = getattr(header, "addresses", None)
                if found is None:
                    pairs.extend(getaddresses([str(header)]))
                else:
                    pairs.extend((a.display_name, a.addr_spec) for a in found)
        except Exception:
            try:
                pairs.extend(getaddresses([_decode_raw_header(v) for v in raw]))
            except Exception:
                continue
    out = []
    for display, spec in pairs:
        spec = _clean_str(spec or "")
        if spec and not any(ch.isspace() for ch in spec):
            out.append((_clean_str(display or ""), spec))
    return out


_MSGID = re.compile(r"<([^<>\s]+)>")


def _msgids(value: str) -> list[str]:
    """Message ids as ``<…>``, from a header that may carry comments or lack the brackets."""
    value = _clean_str(value or "")
    found = [f"<{m}>" for m in _MSGID.findall(value)]
    if found:
        return found
    return [f"<{tok.strip('<>')}>" for tok in value.split() if "@" in tok.strip("<>")]


# --- subject -------------------------------------------------------------------------------------

#: Reply/forward prefixes of many locales: Re, Fwd, Fw, AW/WG (de), SV (nordic), VS (fi),
#: Antw (nl), Odp (pl), R/Rif (it), TR (fr), Ref, RES/ENC (pt), RV (es), YNT (tr), and a few
#: non-Latin ones. Counters such as "Re[2]:" or "Re^2:" are allowed.
_PREFIX = re.compile(
    r"(?i)\s*(?:re|fwd?|aw|wg|sv|vs|vb|antw|odp|rif|ref|res|enc|rv|ynt|tr|r|πρθ|отв|ответ|"
    r"回复|答复|转发|回覆|轉寄|답장|전달)\s*(?:\[\d+\]|\(\d+\)|\^\d+)?\s*[:：]\s*"
)
_LEADING_BRACKET = re.compile(r"\s*\[[^\[\]]{0,80}\]\s*")  # used with .match()
_PBEM_TAG = re.compile(r"(?i)\[\s*pbem(?:\s+([^\[\]\s]+))?\s*\]")
_PLY = re.compile(r"(?i)\(\s*ply\s*:?\s*(\d{1,9})\s*\)")


def _clean_subject(subject: str) -> tuple[str, str | None, bool]:
    """(clean subject, pbem tag, whether the subject is one of ours)."""
    text = " ".join(subject.split())
    tag_match = _PBEM_TAG.search(text)
    tag = tag_match.group(1) if tag_match else None
    pos = 0
    while m := (_PREFIX.match(text, pos) or _LEADING_BRACKET.match(text, pos)):
        if m.end() == pos:
            break
        pos = m.end()
    text = text[pos:]
    text = " ".join(_PBEM_TAG.sub(" ", text).split())
    return text, tag, tag_match is not None


# --- body ----------------------------------------------------------------------------------------

_MAX_DEPTH = 30  # MIME nesting beyond this is an attack, not a mail


def _walk(msg: Message) -> Iterator[Message]:
    """Leaves and multiparts, depth-first, without entering attached messages (message/*).

    Iterative and depth-limited, unlike ``Message.walk``, so hostile nesting cannot recurse.
    """
    stack: list[tuple[Message, int]] = [(msg, 0)]
    while stack:
        part, depth = stack.pop()
        yield part
        try:
            if depth < _MAX_DEPTH and part.get_content_maintype() == "multipart":
                children = part.get_payload()
                if isinstance(children, list):
                    children = [c for c in children if isinstance(c, Message)]
                    stack.extend((c, depth + 1) for c in reversed(children))
        except Exception:
            continue


_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")


def _guess_8bit(data: bytes) -> str:
    """Undeclared or mislabelled 8-bit text: UTF-8 if it is that, else Windows' Latin-1."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if _UTF8_MULTIBYTE.search(data):  # mostly UTF-8 with a few broken bytes
        return data.decode("utf-8", "replace")
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _decode_bytes(data: bytes, charset: str | None) -> str:
    """Text in the declared charset, or the best guess when the label is wrong or unknown."""
    label = (charset or "").strip().strip("\"'").lower()
    if label:
        try:
            return data.decode(label)
        except UnicodeDecodeError:
            try:
                if codecs.lookup(label).name not in ("ascii", "utf-8"):
                    return data.decode(label, "replace")
            except Exception:
                pass
        except Exception:  # unknown label (LookupError) or a codec that is not a text codec
            pass
    return _guess_8bit(data)


def _part_bytes(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except Exception:
        data = None
    if isinstance(data, bytes):
        return data
    try:
        payload = part.get_payload()
    except Exception:
        return b""
    return payload.encode("utf-8", "surrogateescape") if isinstance(payload, str) else b""


def _part_text(part: Message) -> str:
    try:
        charset = part.get_content_charset()
    except Exception:
        charset = None
    text = _decode_bytes(_part_bytes(part), charset)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[1:] if text.startswith("\ufeff") else text


def _param(part: Message, name: str) -> str:
    try:
        value = part.get_param(name)
    except Exception:
        return ""
    return value.strip().lower() if isinstance(value, str) else ""


def unflow(text: str, delsp: bool = False) -> str:
    """Undo RFC 3676 format=flowed: join soft-broken lines (those ending in a space).

    Quote depth is kept (rendered as ``> `` per level) because quote stripping relies on it, and
    lines of different depth are never joined.
    """
    out: list[str] = []
    buf: str | None = None
    buf_depth = 0

    def emit(content: str, depth: int) -> None:
        out.append(("> " * depth + content) if depth else content)

    for line in text.split("\n"):
        depth = len(line) - len(line.lstrip(">"))
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]  # space-stuffing
        if buf is not None and depth != buf_depth:
            emit(buf, buf_depth)
            buf = None
        if content == "-- ":  # the signature separator is never flowed
            if buf is not None:
                emit(buf, buf_depth)
                buf = None
            emit(content, depth)
            continue
        soft = content.endswith(" ")
        if soft and delsp:
            content = content[:-1]
        buf = content if buf is None else buf + content
        buf_depth = depth
        if not soft:
            emit(buf, depth)
            buf = None
    if buf is not None:
        emit(buf, buf_depth)
    return "\n".join(out)


_PGP_BEGIN = "-----BEGIN PGP SIGNED MESSAGE-----"
_PGP_SIGNATURE = "-----BEGIN PGP SIGNATURE-----"
_PGP_END = "-----END PGP SIGNATURE-----"


def _strip_inline_pgp(text: str) -> str:
    """Unwrap a cleartext-signed body, whose armour lines would otherwise look like a banner.

    Nothing is verified here; the armour is only removed so the signed text reads as typed.
    """
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip() == _PGP_BEGIN), None)
    if start is None:
        return text
    body_start = start + 1
    while body_start < len(lines) and lines[body_start].strip():  # "Hash: SHA256" and the like
        body_start += 1
    sig = next(
        (i for i in range(body_start, len(lines)) if lines[i].strip() == _PGP_SIGNATURE), None
    )
    body_end = len(lines) if sig is None else sig
    after: list[str] = []
    if sig is not None:
        end = next((i for i in range(sig, len(lines)) if lines[i].strip() == _PGP_END), None)
        after = [] if end is None else lines[end + 1 :]
    signed = lines[body_start + 1 : body_end]
    body = [line[2:] if line.startswith("- ") else line for line in signed]  # dash-escaping
    return "\n".join(lines[:start] + body + after)


def _body_text(msg: Message) -> str:
    """The mail's text: text/plain when it says anything, else its HTML rendered as text."""
    plain = html = None
    try:
        plain = msg.get_body(preferencelist=("plain",))  # type: ignore[attr-defined]
    except Exception:
        plain = None
    try:
        html = msg.get_body(preferencelist=("html",))  # type: ignore[attr-defined]
    except Exception:
        html = None
    if plain is None and html is None:
        try:
            if msg.get_content_maintype() == "text" and not msg.is_multipart():
                plain = msg  # e.g. a lone text part marked as attachment
        except Exception:
            plain = None
    if plain is not None:
        text = _part_text(plain)
        if _param(plain, "format") == "flowed":
            text = unflow(text, delsp=_param(plain, "delsp") == "yes")
        text = _strip_inline_pgp(text)
        if text.strip() or html is None:
            return text
    if html is not None:
        return html_to_text(_part_text(html))
    return ""


# --- quotes and signatures -----------------------------------------------------------------------

_WROTE = re.compile(
    r"(?i)(?:(?<!\w)(?:wrote|writes|a [ée]crit|schrieb|geschrieben|escribi[óo]|ha scritto|"
    r"scrisse|schreef|geschreven|pisze|napisa[łl](?:\(a\)|a)?|napsal(?:\(a\)|a)?|"
    r"написал(?:\(а\)|а)?|пишет|escreveu|skrev|kirjoitti|yazd[ıi]|írta|a scris|έγραψε)(?!\w)"
    r"|写道|寫道|のメッセージ|님이 작성)[^\n]{0,120}?[:：]\s*$"
)
#: How wrapped attributions begin: the word for "On" in many languages, a weekday (Finnish
#: starts with it), or a date. A wrapped attribution must also contain a time or an address.
_ATTRIBUTION_START = re.compile(
    r"(?i)^(?:(?:on|le|am|el|il|op|w dniu|dne|den|em|no dia|às|på|kello|dana|dňa|στις|в|在"
    r"|ma|ti|ke|to|pe|la|su)(?!\w)|\d)"
)
_TIME_OR_ADDRESS = re.compile(r"\d{1,2}[:.]\d{2}|@")
#: Date-first attributions without a verb (older Gmail, CJK locales): "2012/4/2 Bob <b@x>:".
_DATE_ATTRIBUTION = re.compile(
    r"^\d{1,4}\s*[/.\-年]\s*\d{1,2}\s*[/.\-月]\s*\d{1,4}.{0,200}@[^\s>]+>?\s*[:：]?\s*$"
)
_BANNER_WORD = re.compile(
    r"(?i)original|forward|message|nachricht|weitergeleitet|origine|transf[ée]r|mensaje|reenviad"
    r"|messaggio|inoltrat|bericht|doorgestuurd|wiadomo|zpr[áa]va|сообщение|пересыла|melding"
    r"|meddelande|viesti|mensagem|encaminhad|videresend|vidarebefordra"
)
_FORWARD_INTRO = re.compile(
    r"(?i)^(?:begin forwarded message|anfang der weitergeleiteten nachricht|début du message "
    r"réexpédié|inicio del mensaje reenviado|inizio messaggio inoltrato|begin doorgestuurd "
    r"bericht)\s*:?\s*$"
)
_LABELS: dict[str, str] = {
    "from": "from|von|de|da|van|od|från|fra|от|lähettäjä|feladó|kimden|差出人|发件人|寄件者|보낸 사람",
    "date": "sent|date|gesendet|datum|envoyé|envoyé le|inviato|data|verzonden|verstuurd|wysłano"
    "|wysłane|odesláno|enviado|enviado el|enviada em|enviado em|fecha|skickat|sendt|отправлено"
    "|дата|lähetetty|päivämäärä|elküldve|gönderildi|tarih|送信日時|发送时间|日期|보낸 날짜",
    "to": "to|an|à|a|aan|do|komu|para|till|til|кому|vastaanottaja|címzett|kime|宛先|收件人|받는 사람",
    "cc": "cc|kopie|kopia|копия|kopio|másolat|bilgi",
    "subject": "subject|betreff|objet|oggetto|onderwerp|temat|předmět|asunto|assunto|ämne|emne"
    "|тема|aihe|tárgy|konu|件名|主题|主旨|제목",
}
_LABEL_RES = {
    kind: re.compile(rf"(?i)^\*?\s*(?:{alts})\s*\*?\s*[:：]") for kind, alts in _LABELS.items()
}
_SIGNATURE = re.compile(
    r"(?i)^(?:--|_{5,}|sent from my\b.*|sent from (?:yahoo mail|outlook|mail for windows|aol)\b.*"
    r"|sent with\b.*|get outlook for\b.*|envoyé de mon\b.*|envoyé depuis\b.*"
    r"|von meinem\b.*\bgesendet.*|gesendet von meinem\b.*|enviado desde mi\b.*"
    r"|enviado do meu\b.*|inviato da\b.*|verzonden (?:vanaf|met) mijn\b.*|wysłane z\b.*"
    r"|skickat från\b.*|sendt fra\b.*|отправлено с\b.*)$"
)
_MAX_HEADER_LEN = 500


def _is_quoted(line: str) -> bool:
    return line.lstrip().startswith(">")


def _is_attribution(s: str) -> bool:
    return len(s) <= _MAX_HEADER_LEN and bool(_WROTE.search(s) or _DATE_ATTRIBUTION.match(s))


def _label_kind(line: str) -> str | None:
    s = line.strip()
    for kind, pattern in _LABEL_RES.items():
        if pattern.match(s):
            return kind
    return None


def _header_block_at(lines: list[str], i: int) -> bool:
    """Outlook's header-only quote: "From: … / Sent: … / To: … / Subject: …", any language."""
    first = _label_kind(lines[i])
    if first is None:
        return False
    kinds = {first}
    for line in lines[i + 1 : i + 8]:
        if not line.strip():
            break
        kind = _label_kind(line)
        if kind:
            kinds.add(kind)
    return "from" in kinds and len(kinds) >= 3


def _quote_header_at(lines: list[str], i: int) -> tuple[str, int] | None:
    """("attribution" | "header", number of lines) when a quote introduction starts at line i.

    An attribution ("On … wrote:") normally precedes ``>`` lines; a header (banner, Outlook block,
    forwarded-message intro) means everything after it is the quoted mail, ``>`` or not.
    """
    line = lines[i]
    s = line.strip()
    if not s or len(s) > _MAX_HEADER_LEN or _is_quoted(line):
        return None
    if (s.startswith("--") and len(s) <= 90 and _BANNER_WORD.search(s)) or _FORWARD_INTRO.match(s):
        return ("header", 1)
    if _is_attribution(s):
        return ("attribution", 1)
    if _ATTRIBUTION_START.match(s):  # Gmail and Apple wrap long attributions over 2-3 lines
        joined = s
        for extra in (1, 2):
            if i + extra >= len(lines):
                break
            nxt = lines[i + extra]
            if not nxt.strip() or _is_quoted(nxt):
                break
            joined += " " + nxt.strip()
            if _is_attribution(joined) and _TIME_OR_ADDRESS.search(joined):
                return ("attribution", extra + 1)
    if _header_block_at(lines, i):
        return ("header", 1)
    return None


def _first_quote(lines: list[str]) -> tuple[int, str, int] | None:
    for i, line in enumerate(lines):
        if _is_quoted(line):
            return (i, "quoted", 1)
        found = _quote_header_at(lines, i)
        if found:
            return (i, *found)
    return None


def _bottom_posted(lines: list[str], start: int) -> list[str]:
    """The unquoted lines of a reply written below (or between) ``>`` quotes.

    Only ``>`` quotes can be skipped; a header-style quote means the rest is the quoted mail.
    """
    collected: list[str] = []
    i = start
    while i < len(lines):
        line = lines[i]
        if _is_quoted(line):
            i += 1
            continue
        found = _quote_header_at(lines, i)
        if found:
            kind, span = found
            after = i + span
            while after < len(lines) and not lines[after].strip():
                after += 1
            if kind == "attribution" and after < len(lines) and _is_quoted(lines[after]):
                i += span
                continue
            break
        collected.append(line)
        i += 1
    return collected


def split_reply(text: str) -> tuple[str, str]:
    """(reply text, command text) of a mail body.

    The reply is what the player wrote above the first quote (``>`` line, attribution, banner,
    Outlook header block) — or, when nothing is above it, their unquoted lines below ``>`` quotes
    (bottom-posting). The command text is the reply cut at the first signature line.
    """
    lines = text.split("\n")
    first = _first_quote(lines)
    if first is None:
        reply = lines
    else:
        reply = lines[: first[0]]
        if not any(line.strip() for line in reply):
            reply = _bottom_posted(lines, first[0])
    command: list[str] = []
    for line in reply:
        if len(line) < 100 and _SIGNATURE.match(line.strip()):
            break
        command.append(line)
    return "\n".join(reply).strip(), "\n".join(command).strip()


# --- tokens and JSON turn files ------------------------------------------------------------------

_BODY_TOKEN = re.compile(r"(?i)^token\s*[:=]?\s*([A-Za-z0-9][A-Za-z0-9_-]{2,127})$")


#: A body is taken for a turn file only when it starts like a JSON object or array does, so that
#: text such as "[EXTERNAL] …" or "[C4] claim" is not reported as broken JSON.
_LOOKS_LIKE_JSON = re.compile(r'(?:\{\s*["}]|\[\s*(?:[\[\]{"\d-]|true|false|null))')


def _parse_json(text: str, name: str) -> tuple[Any, str | None]:
    try:
        return json.loads(text), None
    except json.JSONDecodeError as exc:
        return None, f"line {exc.lineno} column {exc.colno}: {exc.msg} (in {name})"
    except RecursionError:
        return None, f"line 1 column 1: nested too deeply (in {name})"
    except (ValueError, TypeError) as exc:
        return None, f"line 1 column 1: {exc} (in {name})"


def _is_json_part(part: Message) -> tuple[bool, str]:
    try:
        ctype = part.get_content_type()
        filename = part.get_filename() or ""
    except Exception:
        return False, ""
    filename = _clean_str(str(filename))
    is_json = (
        ctype in ("application/json", "text/json")
        or ctype.endswith("+json")
        or filename.lower().endswith(".json")
    )
    return is_json, filename or ctype


def _json_text(part: Message) -> str:
    data = _part_bytes(part)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = _decode_bytes(data, _param(part, "charset") or None)
    return text.lstrip("\ufeff")


def _json_turn(
    msg: Message, text: str, command_text: str
) -> tuple[Any, str | None, str | None]:
    """(turn, error, source): a turn file attached as JSON, else the body when it is JSON."""
    error: str | None = None
    for part in _walk(msg):
        try:
            if part.get_content_maintype() in ("multipart", "message"):
                continue
        except Exception:
            continue
        is_json, name = _is_json_part(part)
        if not is_json:
            continue
        value, err = _parse_json(_json_text(part), name)
        if err is None:
            return value, None, name
        error = error or err
    body = text.strip()
    source = "the mail body"
    if _LOOKS_LIKE_JSON.match(body):
        value, err = _parse_json(text.rstrip(), source)
        if err is None:
            return value, None, source
        command = command_text.strip()
        if command != body and _LOOKS_LIKE_JSON.match(command):
            # A signature or a quote below the JSON is not part of it. Keep the line numbers of
            # the body: the command text starts where the body's text does.
            lead = text[: len(text) - len(text.lstrip())].count("\n")
            value, err2 = _parse_json("\n" * lead + command, source)
            if err2 is None:
                return value, None, source
            err = err2
        return None, err, None
    return None, error, None


# --- automatic mail ------------------------------------------------------------------------------

_VACATION = re.compile(
    r"(?i)^(?:out of (?:the )?office|auto:|automatic reply|auto[- ]?reply|autoreply"
    r"|abwesenheitsnotiz|automatische antwort|r[ée]ponse automatique|vacation"
    r"|risposta automatica|respuesta autom[áa]tica|automatisch antwoord|autosvar)"
)


def _auto(msg: Message, subject: str, from_spec: str, own: Collection[str]) -> str | None:
    """Why this mail must not be answered, or None when a person wrote it."""
    try:
        ctype = msg.get_content_type()
        report_type = _param(msg, "report-type")
    except Exception:
        ctype, report_type = "", ""
    parts = []
    for part in _walk(msg):
        try:
            parts.append(part.get_content_type())
        except Exception:
            continue

    return_path = _first_raw(msg, "Return-Path").strip()
    local = from_spec.rpartition("@")[0] if "@" in from_spec else from_spec
    if not from_spec:
        local = parseaddr(_first_raw(msg, "From"))[1].rpartition("@")[0]
    if (
        return_path.replace(" ", "") == "<>"
        or local.lower() in ("mailer-daemon", "postmaster")
        or (ctype == "multipart/report" and report_type == "delivery-status")
        or any(t in parts for t in _DSN_TYPES)
    ):
        return "bounce"

    if any(same_mailbox(from_spec, addr) for addr in own) or _raw_values(msg, "X-Pbem-Server"):
        return "own-mail"

    auto_submitted = (_header(msg, "Auto-Submitted") or "").split(";")[0].strip().lower()
    lead = _LEADING_BRACKET.match(subject)
    bare_subject = subject[lead.end() :] if lead else subject
    if (
        (auto_submitted and auto_submitted != "no")
        or _raw_values(msg, "X-Autoreply")
        or _raw_values(msg, "X-Autorespond")
        or _VACATION.match(subject.strip())
        or _VACATION.match(bare_subject)
        or ctype == "multipart/report"  # read receipts, abuse and TLS reports
        or "message/disposition-notification" in parts
    ):
        return "auto-reply"

    precedence = (_header(msg, "Precedence") or "").strip().lower()
    if precedence in ("bulk", "junk"):
        return "bulk"
    if precedence == "list" or _raw_values(msg, "List-Id") or _raw_values(msg, "List-Unsubscribe"):
        return "list"
    if precedence == "auto_reply":
        return "auto-reply"
    return None


def _dsn_text(part: Message) -> str:
    payload = part.get_payload()
    if isinstance(payload, list):  # the parser splits delivery-status into header blocks
        blocks = []
        for block in payload:
            if isinstance(block, Message):
                blocks.append("\n".join(f"{k}: {v}" for k, v in block.raw_items()))
        return "\n\n".join(blocks)
    return _decode_bytes(_part_bytes(part), None)


_XTEXT = re.compile(r"\+([0-9A-F]{2})")


def _xtext_decode(value: str) -> str:
    def repl(m: re.Match[str]) -> str:
        ch = chr(int(m.group(1), 16))
        return ch if "!" <= ch <= "~" else m.group(0)

    return _XTEXT.sub(repl, value)


def _failed_in_dsn(text: str) -> list[str]:
    found: list[str] = []
    for block in re.split(r"\n\s*\n", text.replace("\r\n", "\n")):
        fields: dict[str, str] = {}
        for line in re.sub(r"\n[ \t]+", " ", block).split("\n"):
            name, colon, value = line.partition(":")
            if colon:
                fields.setdefault(name.strip().lower(), value.strip())
        if not ({"final-recipient", "original-recipient"} & fields.keys()):
            continue
        action = fields.get("action", "").lower()
        if action and not action.startswith("failed"):
            continue  # delayed, delivered, relayed, expanded: not a failure
        for key in ("original-recipient", "final-recipient"):
            value = fields.get(key, "")
            addr = value.partition(";")[2] if ";" in value else value
            if key == "original-recipient":
                addr = _xtext_decode(addr)
            addr = normalize(addr)
            if "@" in addr and addr not in found:
                found.append(addr)
    return found


_DSN_TYPES = ("message/delivery-status", "message/global-delivery-status")


def _bounce_recipients(msg: Message) -> list[str]:
    found: list[str] = []
    for part in _walk(msg):
        try:
            if part.get_content_type() in _DSN_TYPES:
                found.extend(a for a in _failed_in_dsn(_dsn_text(part)) if a not in found)
        except Exception:
            continue
    for value in _raw_values(msg, "X-Failed-Recipients"):  # Exim
        for _name, spec in getaddresses([value]):
            addr = normalize(spec)
            if "@" in addr and addr not in found:
                found.append(addr)
    return found
