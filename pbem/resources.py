"""Finds the data files (schemas, templates) both in a checkout and in an installed wheel.

The wheel carries ``schemas/`` and ``templates/`` as ``pbem/_data/...``; an editable install or a
checkout reads them from the repository root. One function decides, so nothing else guesses paths.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

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
