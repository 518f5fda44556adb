"""The data files shipped with pbem (schemas, templates), and validation against the schemas.

The wheel carries ``schemas/`` and ``templates/`` as ``pbem/_data/...``; an editable install or a
checkout reads them from the repository root. One function decides, so nothing else guesses paths.
Validation errors name the JSON path, for records, turn files and the configuration alike.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

_PACKAGE_DIR = Path(__file__).resolve().parent


def data_dir(name: str) -> Path:
    """``schemas`` or ``templates``."""
    for candidate in (_PACKAGE_DIR / "_data" / name, _PACKAGE_DIR.parent / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"pbem data folder {name!r} is missing from the installation")


@cache
def load_schema(name: str) -> dict[str, Any]:
    """A JSON Schema by file stem, e.g. ``record`` -> schemas/record.schema.json."""
    return json.loads((data_dir("schemas") / f"{name}.schema.json").read_text(encoding="utf-8"))


class SchemaError(ValueError):
    """A document that does not match its schema; ``errors`` are "PATH: reason" strings."""

    def __init__(self, what: str, errors: list[str]):
        self.what = what
        self.errors = errors
        super().__init__(f"{what}: " + "; ".join(errors))


@cache
def validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(name))


def json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def schema_errors(instance: Any, schema_name: str) -> list[str]:
    """Every violation, shallowest first, as "PATH: message"."""
    errors = sorted(validator(schema_name).iter_errors(instance),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    return [f"{json_path(e)}: {e.message}" for e in errors]


def validate(instance: Any, schema_name: str, what: str | None = None) -> None:
    errors = schema_errors(instance, schema_name)
    if errors:
        raise SchemaError(what or schema_name, errors)
