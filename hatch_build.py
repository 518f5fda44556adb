"""Compiles the gettext catalogs (``*.po`` -> ``*.mo``) whenever the package is built, so a wheel
and an editable install (``make install``) carry them although git holds only the ``.po`` sources.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # imported by `make catalogs`, which needs compile_catalogs only
    BuildHookInterface = object  # type: ignore[assignment,misc]

DOMAINS = {"pbem": "pbem/locale", "engine": "engine/locale"}


def compile_catalogs(root: Path) -> list[Path]:
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po

    written = []
    for domain, folder in DOMAINS.items():
        for po_path in sorted((root / folder).glob(f"*/LC_MESSAGES/{domain}.po")):
            with po_path.open("rb") as po:
                catalog = read_po(po, locale=po_path.parts[-3], domain=domain)
            mo_path = po_path.with_suffix(".mo")
            with mo_path.open("wb") as mo:
                write_mo(mo, catalog, use_fuzzy=False)
            written.append(mo_path)
    return written


class CatalogsHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        compile_catalogs(Path(self.root))
