"""The layout's promises, checked on every run: the import-linter contracts in pyproject.toml (the
engine imports no pbem, no pbem module names a game, storage and the doors stay below the processor,
the CLI on top, no import cycles), and no private name imported from another module."""

from __future__ import annotations

import ast
import io
import logging
from contextlib import redirect_stdout
from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent


def test_import_contracts_are_kept() -> None:
    # lint_imports configures logging with dictConfig, which disables every logger that exists
    # (pbem's, imported by earlier tests): later tests would capture no log records at all.
    loggers = [logging.getLogger(name) for name in list(logging.root.manager.loggerDict)]
    enabled = [logger for logger in loggers if not logger.disabled]
    output = io.StringIO()
    try:
        with redirect_stdout(output):
            code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True)
    finally:
        for logger in enabled:
            logger.disabled = False
    assert code == 0, output.getvalue()


def private_imports(folder: Path, root: Path = ROOT) -> list[str]:
    """``from x import _name`` anywhere below ``folder``, as "file:line: x._name". Plain ``_`` is
    gettext's translation function by convention (``from pbem.i18n import _``), not a private name."""
    found = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__") and alias.name != "_":
                        found.append(f"{path.relative_to(root)}:{node.lineno}: {node.module}.{alias.name}")
    return found


def test_no_private_names_are_imported_across_modules() -> None:
    found = [hit for folder in ("pbem", "engine", "tests", "bench") for hit in private_imports(ROOT / folder)]
    assert found == []


def test_the_private_import_check_finds_one(tmp_path: Path) -> None:
    """The scan above would see a violation (it cannot pass vacuously)."""
    (tmp_path / "a.py").write_text("from pbem.processing.handlers import _secret, public\n")
    assert private_imports(tmp_path, tmp_path) == ["a.py:1: pbem.processing.handlers._secret"]
