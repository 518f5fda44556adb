"""The README documents every column of every table, with its type and the migration that made it:
checked against the schema the migrations build, one version at a time."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

from pbem.store import migrations
from pbem.store.sqlite import split_statements

README = Path(__file__).resolve().parents[2] / "README.md"
ROW = re.compile(r"^\| `(\w+)\.(\w+)` \| (\w+) \| (\d+) \| .+ \|$", re.MULTILINE)


def columns_by_migration() -> dict[tuple[str, str], tuple[str, int]]:
    conn = sqlite3.connect(":memory:")
    made: dict[tuple[str, str], tuple[str, int]] = {}
    for migration in migrations.MIGRATIONS:
        assert migration.sqlite is not None
        for statement in split_statements(migration.sqlite):
            conn.execute(statement)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"
                                             " AND name NOT LIKE 'sqlite_%'")]
        for table in tables:
            for _cid, name, kind, *_rest in conn.execute(f"PRAGMA table_info({table})"):
                made.setdefault((table, name), (kind.lower(), migration.version))
    return made


def test_readme_documents_every_column_with_its_migration() -> None:
    section = README.read_text(encoding="utf-8").split("### Database schema", 1)[1].split("\n### ", 1)[0]
    documented = {(t, c): (kind, int(since)) for t, c, kind, since in ROW.findall(section)}
    assert documented == columns_by_migration()
