"""What one mail may cost, checked in a single cheap pass over the raw bytes before the full parse.

The stdlib's parser is fine for mail people write, but its time grows with the product of nesting
depth and line count (every line is tested against the boundary of every open multipart), with the
number of parts, and with the number of header fields (each lookup scans them all): 3,000 nested
multiparts in 216 KB took 13 s, 15,000 header fields several seconds, and meanwhile no other
player's move was processed. So before anything is parsed, this module walks the MIME skeleton the
way the parser will (header blocks, boundary lines, ``message/rfc822`` bodies) using only regular
expressions that run in C, and stops at the first limit exceeded. Only the header blocks and the
boundary lines are looked at, never the bodies line by line.

The scan is deliberately a little pessimistic where it cannot know what the parser will make of
broken input (a boundary written in two ways, a header block that never ends): counting too much
only ever refuses a mail that is broken anyway; counting too little would let the cost through.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from pbem.i18n import N_, _, ngettext

__all__ = ["LimitExceeded", "Limits", "check_limits", "describe_size"]


class Limits(Protocol):
    """The settings checked (``pbem.config.LimitsConfig`` has them, with their defaults)."""

    max_mime_depth: int
    max_mime_parts: int
    max_header_fields: int
    max_header_bytes: int
    max_lines: int


@dataclass(frozen=True)
class LimitExceeded:
    """The first limit a mail exceeds: the setting's name, what the mail has, and the limit."""

    name: str
    value: int
    limit: int

    def sentence(self) -> str:
        """One line a person can act on: what was too much, and what the limit is."""
        if self.name == "max_message_bytes":
            return _("your mail has {size}; the limit is {limit}. Moves need no attachments: send the "
                     "move as plain text.").format(size=describe_size(self.value),
                                                   limit=describe_size(self.limit))
        what = _(_WHAT[self.name])
        more = _("at least {n}") if self.value > self.limit else "{n}"
        return _("your mail has {count} {what}; the limit is {limit}. Send the commands as plain text, "
                 "without attachments or forwarded mails.").format(
            count=more.format(n=self.value), what=what, limit=self.limit)


_WHAT = {
    "max_mime_depth": N_("levels of nested MIME parts"),
    "max_mime_parts": N_("MIME parts"),
    "max_header_fields": N_("header fields"),
    "max_header_bytes": N_("bytes of header fields"),
    "max_lines": N_("lines (a line inside nested parts counts once per level)"),
}


def describe_size(count: int) -> str:
    """``2000000`` -> ``"2 MB (2000000 bytes)"``: the number a mail client shows, and the exact one."""
    if count >= 1_000_000:
        return _("{size} MB ({count} bytes)").format(size=f"{count / 1_000_000:.3g}", count=count)
    if count >= 1000:
        return _("{size} KB ({count} bytes)").format(size=f"{count / 1000:.3g}", count=count)
    return ngettext("{count} byte", "{count} bytes", count).format(count=count)


# A header block is a run of lines the parser takes for header lines: "Name:", a continuation
# (leading white space) or a Unix "From " line; feedparser's own rule (headerRE). It ends at an
# empty line (consumed) or at the first other line (which starts the body).
_HEADER_LINE = rb"(?:From |[\x21-\x39\x3b-\x7e]*:|[ \t])[^\r\n]*(?:\r\n|\n|\r|\Z)"
_HEADER_BLOCK = re.compile(rb"(?:" + _HEADER_LINE + rb")*")
_BLANK_LINE = re.compile(rb"\r\n|\n|\r")
_FIELD_START = re.compile(rb"(?:\A|(?<=[\r\n]))[^ \t\r\n]")
_CONTENT_TYPE = re.compile(
    rb"(?:\A|(?<=[\r\n]))content-type[ \t]*:([^\r\n]*(?:(?:\r\n|\n|\r)[ \t][^\r\n]*)*)", re.IGNORECASE)
_TYPE = re.compile(rb"\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*/\s*([!#$%&'*+.^_`|~0-9A-Za-z-]+)")
_BOUNDARY = re.compile(rb"""(?:^|;)\s*boundary\*?(?:\*?0\*?)?\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s;]+))""",
                       re.IGNORECASE)
_FOLD = re.compile(rb"(?:\r\n|\n|\r)[ \t]")


@dataclass
class _Scan:
    limits: Limits
    fields: int = 0
    header_bytes: int = 0
    parts: int = 1
    #: Lines as the parser's work counts them: it tests each line against the boundary of every
    #: multipart the line is in, so a line inside n multiparts costs n tests. max_lines bounds this
    #: too; a real mail (an attachment inside one multipart, text inside two) stays far below.
    lines: int = 0
    exceeded: LimitExceeded | None = None

    def fail(self, name: str, value: int, limit: int) -> None:
        if self.exceeded is None:
            self.exceeded = LimitExceeded(name, value, limit)


def _header_block(raw: bytes, pos: int, scan: _Scan) -> tuple[int, bytes]:
    """(where the body starts, the Content-Type value) of the header block at ``pos``."""
    end = _HEADER_BLOCK.match(raw, pos).end()
    block = raw[pos:end]
    body = end
    blank = _BLANK_LINE.match(raw, end)
    if blank is not None:
        body = blank.end()
    scan.header_bytes += len(block)
    if scan.header_bytes > scan.limits.max_header_bytes:
        scan.fail("max_header_bytes", scan.header_bytes, scan.limits.max_header_bytes)
        return body, b""
    scan.fields += len(_FIELD_START.findall(block))
    if scan.fields > scan.limits.max_header_fields:
        scan.fail("max_header_fields", scan.fields, scan.limits.max_header_fields)
        return body, b""
    found = _CONTENT_TYPE.search(block)
    return body, _FOLD.sub(b" ", found.group(1)) if found else b""


def _header_block_fields(body: bytes, scan: _Scan) -> None:
    """A message/delivery-status body: blocks of header fields, each parsed like a header."""
    scan.header_bytes += len(body)
    scan.fields += len(_FIELD_START.findall(body))
    if scan.header_bytes > scan.limits.max_header_bytes:
        scan.fail("max_header_bytes", scan.header_bytes, scan.limits.max_header_bytes)
    elif scan.fields > scan.limits.max_header_fields:
        scan.fail("max_header_fields", scan.fields, scan.limits.max_header_fields)


def _kind(content_type: bytes) -> tuple[str, bytes | None]:
    """("multipart", boundary) | ("message", None) | ("leaf", None), as the parser will see it."""
    match = _TYPE.match(content_type)
    if match is None:
        return "leaf", None
    maintype, subtype = match.group(1).lower(), match.group(2).lower()
    if maintype == b"multipart":
        found = _BOUNDARY.search(content_type, match.end())
        if found is None:
            return "leaf", None  # the parser reads a multipart without boundary as text
        value = found.group(1) if found.group(1) is not None else found.group(2)
        value = re.sub(rb"\\(.)", rb"\1", value).rstrip()
        if value.lower().startswith((b"utf-8''", b"us-ascii''")):
            value = value.split(b"'", 2)[2]
        return ("multipart", value) if value else ("leaf", None)
    if maintype == b"message":
        # delivery-status bodies are parsed as blocks of header fields; other message/* as a
        # message of its own
        return ("status", None) if subtype == b"delivery-status" else ("message", None)
    return "leaf", None


def _delimiters(stack: list[tuple[bytes, int]]) -> re.Pattern[bytes]:
    """Boundary lines of every open multipart: the parser ends a part at any of them."""
    names = b"|".join(re.escape(b) for b in sorted({b for b, _ in stack}, key=len, reverse=True))
    # Starting with the literal "--" lets the regex engine skip ahead with a fast substring search
    # (a lookbehind for the line start would be tried at every byte); the line start is checked
    # by the caller.
    return re.compile(rb"--(" + names + rb")(--)?[ \t]*(?:\r\n|\n|\r|\Z)")


def _next_delimiter(raw: bytes, pos: int, pattern: re.Pattern[bytes]) -> re.Match[bytes] | None:
    while (found := pattern.search(raw, pos)) is not None:
        start = found.start()
        if start == 0 or raw[start - 1] in b"\r\n":
            return found
        pos = start + 1
    return None


def check_limits(raw: bytes, limits: Limits, max_bytes: int | None = None) -> LimitExceeded | None:
    """The first limit ``raw`` exceeds, or None. Never raises; costs a few milliseconds at most."""
    if max_bytes is not None and len(raw) > max_bytes:
        return LimitExceeded("max_message_bytes", len(raw), max_bytes)
    lines = raw.count(b"\n") or raw.count(b"\r")
    if lines > limits.max_lines:
        return LimitExceeded("max_lines", lines, limits.max_lines)
    scan = _Scan(limits, lines=lines)
    _walk(raw, scan)
    return scan.exceeded


def _walk(raw: bytes, scan: _Scan) -> None:
    """Iterative, so that no nesting can recurse; every step either ends or counts a part."""
    limits = scan.limits
    stack: list[tuple[bytes, int]] = []  # open multiparts, innermost last: (boundary, depth)
    pos, depth = 0, 0  # the entity (header block and body) to read next; containers above it
    while scan.exceeded is None:
        body, content_type = _header_block(raw, pos, scan)
        if scan.exceeded is not None:
            return
        kind, boundary = _kind(content_type)
        if kind != "leaf":
            depth += 1
            if depth > limits.max_mime_depth:
                scan.fail("max_mime_depth", depth, limits.max_mime_depth)
                return
        if kind == "message":
            scan.parts += 1
            if scan.parts > limits.max_mime_parts:
                scan.fail("max_mime_parts", scan.parts, limits.max_mime_parts)
                return
            pos = body
            continue
        if boundary is not None:
            stack.append((boundary, depth))
        # The next part starts after the next boundary line of an open multipart.
        pos = body
        while True:
            if not stack:
                return  # the rest is a leaf's body or an epilogue: nothing more to count
            found = _next_delimiter(raw, pos, _delimiters(stack))
            end = len(raw) if found is None else found.start()
            if kind == "status":
                _header_block_fields(raw[pos:end], scan)
                kind = "leaf"
            scan.lines += raw.count(b"\n", pos, end) * (len(stack) - 1)
            if scan.lines > limits.max_lines:
                scan.fail("max_lines", scan.lines, limits.max_lines)
            if found is None or scan.exceeded is not None:
                return  # unterminated multiparts: the parser reads to the end
            level = max(i for i, (b, _d) in enumerate(stack) if b == found.group(1))
            del stack[level + 1:]
            pos = found.end()
            if found.group(2):  # closing delimiter: that multipart ends, its epilogue follows
                stack.pop()
                continue
            scan.parts += 1
            if scan.parts > limits.max_mime_parts:
                scan.fail("max_mime_parts", scan.parts, limits.max_mime_parts)
                return
            depth = stack[-1][1]
            break
