"""Header fields as the reader needs them: decoded, made safe to log and compare, tolerant of
garbage; and the subject with reply prefixes and our own ``[pbem …]`` tag taken apart."""

from __future__ import annotations

import re
import weakref
from email.header import decode_header, make_header
from email.message import Message

from pbem.plainaddress import getaddresses

LOGGED_HEADERS = (
    "Message-ID", "Date", "From", "To", "Cc", "Subject", "In-Reply-To", "Return-Path",
    "Delivered-To", "X-Original-To", "Auto-Submitted", "Precedence", "List-Id", "X-Mailer",
    "User-Agent", "Content-Type", "Content-Language", "Accept-Language",
)


#: Control characters and everything ``str.splitlines`` takes for a line end (\v, \f, \x1c-\x1e,
#: \x85, \u2028, \u2029): a decoded encoded-word may carry any of them, and text copied from a
#: header into a reply's header must never start a new header line there.
_CONTROLS = re.compile("[\x00-\x1f\x7f\x85\u2028\u2029]")


def clean_str(value: str) -> str:
    """Make header text safe to log, to compare and to copy into a reply's header.

    Raw 8-bit header bytes reach us as surrogate escapes; most are UTF-8 sent without RFC 2047,
    so reinterpret them as that and replace what still does not decode.
    """
    if not value.isascii() and any("\ud800" <= ch <= "\udfff" for ch in value):
        try:
            data = value.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that does not stand for a byte
            data = value.encode("utf-8", "replace")
        value = data.decode("utf-8", "replace")
    return _CONTROLS.sub(" ", value).strip()


_RETURN_PATH = re.compile(rb"(?im)^Return-Path:[ \t]*<?([^<>\r\n]*?)>?[ \t]*\r?$")


def return_path_of(raw: bytes) -> str | None:
    """The envelope sender the delivering server wrote as ``Return-Path`` ("" for ``<>``), or
    None. Only the top of the header block is looked at; the first Return-Path is the one the
    last server added."""
    head = raw[:65_536]
    end = re.search(rb"\r?\n\r?\n", head)
    found = _RETURN_PATH.search(head, 0, end.start() if end else len(head))
    if found is None:
        return None
    return found.group(1).decode("utf-8", "replace").strip()


#: Each message's header fields by lower-case name, built on the first lookup: the reader looks up
#: some twenty names per mail, and a scan of all fields for each was a tenth of its time.
_BY_NAME: weakref.WeakKeyDictionary[Message, dict[str, list[str]]] = weakref.WeakKeyDictionary()


def raw_values(msg: Message, name: str) -> list[str]:
    index = _BY_NAME.get(msg)
    if index is None:
        index = {}
        try:
            for key, value in msg.raw_items():
                index.setdefault(str(key).lower(), []).append(str(value))
        except Exception:
            index = {}
        _BY_NAME[msg] = index
    return list(index.get(name.lower(), ()))


def first_raw(msg: Message, name: str) -> str:
    values = raw_values(msg, name)
    return values[0] if values else ""


def decode_raw_header(raw: str) -> str:
    if "=?" not in raw:  # no encoded word: the decoding would give it back as it is
        return raw
    try:
        return str(make_header(decode_header(raw)))
    except Exception:
        return raw


#: Beyond this many characters a header is read only this far: no real Subject is that long, and
#: the stdlib's parsers take time that grows faster than the length (10,000 encoded words: 0.7 s).
LONG_HEADER = 4000


#: Unstructured headers (free text) that the parser gives back unchanged when they are printable
#: ASCII without encoded words and unfolded (a test holds that), so they need no parse at all.
_UNSTRUCTURED = frozenset({"subject", "auto-submitted", "precedence"})
_PLAIN_TEXT = re.compile(r"[\t\x20-\x7e]*")


def header_text(msg: Message, name: str) -> str | None:
    """The first ``name`` header, RFC 2047-decoded, or None when absent."""
    raw = raw_values(msg, name)
    if raw and len(raw[0]) > LONG_HEADER:
        return clean_str(decode_raw_header(raw[0][:LONG_HEADER]))
    if raw and name.lower() in _UNSTRUCTURED and "=?" not in raw[0] and _PLAIN_TEXT.fullmatch(raw[0]):
        return clean_str(raw[0])
    try:
        value = msg.get(name)
        if value is None:
            return None
        return clean_str(str(value))
    except Exception:
        raw = raw_values(msg, name)
        return clean_str(decode_raw_header(raw[0])) if raw else None


#: Address headers longer than this are not given to the structured parser (4,000 characters of
#: addresses or junk take it ~50 ms; a mail has several such headers).
_LONG_ADDRESS_HEADER = 1000
# Bounded repeats: an unbounded local part would make a long run without "@" quadratic.
_ADDRESS = re.compile(r"[^\s<>,;:\"()\[\]@]{1,64}@[^\s<>,;:\"()\[\]@]{1,255}")


_ATEXT = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_DOT_ATOM = rf"{_ATEXT}(?:\.{_ATEXT})*"
_PLAIN_ADDRESS = re.compile(rf"[ \t]*(?:({_ATEXT}(?: {_ATEXT})*)[ \t]*<({_DOT_ATOM}@{_DOT_ATOM})>"
                            rf"|<({_DOT_ATOM}@{_DOT_ATOM})>|({_DOT_ATOM}@{_DOT_ATOM}))[ \t]*")


def plain_address(value: str) -> tuple[str, str] | None:
    """(display name, addr-spec) of a header holding one plain address ("ann@example.org", "Ann
    Smith <ann@example.org>": atoms only, no quotes, comments, encoded words or folding), else
    None. The structured parser reads these to the same pair (a test holds them equal) at a
    hundred times the cost; From and To of nearly every mail look like this."""
    if "=?" in value:
        return None
    found = _PLAIN_ADDRESS.fullmatch(value)
    if found is None:
        return None
    return (found.group(1) or "", found.group(2) or found.group(3) or found.group(4))


def address_pairs(msg: Message, names: tuple[str, ...]) -> list[tuple[str, str]]:
    """(display name, addr-spec) pairs from address headers, tolerant of garbage."""
    pairs: list[tuple[str, str]] = []
    for name in names:
        raw = raw_values(msg, name)
        if not raw:
            continue
        plain = plain_address(raw[0]) if len(raw) == 1 else None
        if plain is not None:
            pairs.append(plain)
            continue
        if sum(len(v) for v in raw) > _LONG_ADDRESS_HEADER:
            # Thousands of addresses: the structured parser would take seconds and getaddresses
            # tens of milliseconds; only the addresses themselves matter (our own among them).
            pairs.extend(("", a) for a in _ADDRESS.findall(decode_raw_header(" ".join(raw))))
            continue
        try:
            for header in msg.get_all(name) or []:
                found = getattr(header, "addresses", None)
                if found is None:
                    pairs.extend(getaddresses([str(header)]))
                else:
                    pairs.extend((a.display_name, a.addr_spec) for a in found)
        except Exception:
            try:
                pairs.extend(getaddresses([decode_raw_header(v) for v in raw]))
            except Exception:
                continue
    out = []
    for display, spec in pairs:
        # An address with control characters or bytes that are no text is no address: cleaning
        # it would make another one ("\x1dob@x" is not "ob@x").
        spec = spec or ""
        if _CONTROLS.search(spec) or any("\ud800" <= ch <= "\udfff" for ch in spec):
            continue
        spec = clean_str(spec)
        if spec and not any(ch.isspace() or ch == "\ufffd" for ch in spec):
            out.append((clean_str(display or ""), spec))
    return out


_MSGID = re.compile(r"<([^<>\s]+)>")


def message_ids(value: str) -> list[str]:
    """Message ids as ``<…>``, from a header that may carry comments or lack the brackets."""
    value = clean_str(value or "")
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
LEADING_BRACKET = re.compile(r"\s*\[[^\[\]]{0,80}\]\s*")  # used with .match()
_PBEM_TAG = re.compile(r"(?i)\[\s*pbem(?:\s+([^\[\]\s]+))?\s*\]")
SUBJECT_PLY = re.compile(r"(?i)\(\s*ply\s*:?\s*(\d{1,9})\s*\)")


def clean_subject(subject: str) -> tuple[str, str | None, bool]:
    """(clean subject, pbem tag, whether the subject is one of ours)."""
    text = " ".join(subject.split())
    tag_match = _PBEM_TAG.search(text)
    tag = tag_match.group(1) if tag_match else None
    pos = 0
    while m := (_PREFIX.match(text, pos) or LEADING_BRACKET.match(text, pos)):
        if m.end() == pos:
            break
        pos = m.end()
    text = text[pos:]
    text = " ".join(_PBEM_TAG.sub(" ", text).split())
    return text, tag, tag_match is not None


