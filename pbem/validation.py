"""JSON Schema validation whose errors name the JSON path, for records, commands and config."""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError

from pbem.resources import load_schema


class SchemaError(ValueError):
    """A document that does not match its schema; ``errors`` are "PATH: reason" strings."""

    def __init__(self, what: str, errors: list[str]):
        self.what = what
        self.errors = errors
        super().__init__(f"{what}: " + "; ".join(errors))


@cache
def _validator(name: str) -> Draft202012Validator:
    return Draft202012Validator(load_schema(name))


def json_path(error: ValidationError) -> str:
    path = "$"
    for part in error.absolute_path:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def schema_errors(instance: Any, schema_name: str) -> list[str]:
    """Every violation, shallowest first, as "PATH: message"."""
    errors = sorted(_validator(schema_name).iter_errors(instance),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.absolute_path))))
    return [f"{json_path(e)}: {e.message}" for e in errors]


def validate(instance: Any, schema_name: str, what: str | None = None) -> None:
    errors = schema_errors(instance, schema_name)
    if errors:
        raise SchemaError(what or schema_name, errors)
