"""Tokens typed in the body, and JSON turn files (as the body or an attachment)."""

from __future__ import annotations

import json
import re
from email.message import Message
from typing import Any

from pbem.reading.body import content_param, decode_bytes, part_bytes, walk_parts
from pbem.reading.headers import clean_str

BODY_TOKEN = re.compile(r"(?i)^token\s*[:=]?\s*([A-Za-z0-9][A-Za-z0-9_-]{2,127})$")


#: A body is taken for a turn file only when it starts like a JSON object or array does, so that
#: text such as "[EXTERNAL] …" or "[C4] claim" is not reported as broken JSON.
_LOOKS_LIKE_JSON = re.compile(r'(?:\{\s*["}]|\[\s*(?:[\[\]{"\d-]|true|false|null))')


#: A turn file holds a few commands; validating a huge document against the schema would take
#: seconds, so larger ones are refused before they are even decoded.
MAX_TURN_FILE_CHARS = 100_000


def _without_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def _parse_json(text: str, name: str) -> tuple[Any, str | None]:
    if len(text) > MAX_TURN_FILE_CHARS:
        return None, (f"line 1 column 1: the turn file has {len(text)} characters; at most "
                      f"{MAX_TURN_FILE_CHARS} are read (in {name})")
    try:
        value = json.loads(text)
        if "\\u" in text:  # an escaped lone surrogate would break every reply that quotes it
            value = _without_surrogates(value)
        return value, None
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
    filename = clean_str(str(filename))
    is_json = (
        ctype in ("application/json", "text/json")
        or ctype.endswith("+json")
        or filename.lower().endswith(".json")
    )
    return is_json, filename or ctype


def _json_text(part: Message) -> str:
    data = part_bytes(part)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = decode_bytes(data, content_param(part, "charset") or None)
    return text.lstrip("\ufeff")


#: JSON parts tried at most: a turn file is one attachment; a mail with dozens of broken ones is not
#: worth decoding each of them.
MAX_JSON_PARTS = 5


def find_json_turn(
    msg: Message, text: str, command_text: str
) -> tuple[Any, str | None, str | None]:
    """(turn, error, source): a turn file attached as JSON, else the body when it is JSON."""
    error: str | None = None
    tried = 0
    for part in walk_parts(msg):
        if tried >= MAX_JSON_PARTS:
            break
        try:
            if part.get_content_maintype() in ("multipart", "message"):
                continue
        except Exception:
            continue
        is_json, name = _is_json_part(part)
        if not is_json:
            continue
        tried += 1
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


