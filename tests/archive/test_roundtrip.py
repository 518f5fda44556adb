"""Export then import 1000 random finished games: the second store holds the same games."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.archive.export import export_games
from pbem.archive.importer import import_archive
from pbem.archive.sample import random_rows
from pbem.archive.search import make_filters
from pbem.store import open_store
from pbem.store.base import Store
from tests.archive.conftest import fill


@pytest.mark.slow
def test_round_trip_of_1000_games(tmp_path: Path, store: Store) -> None:
    rows = random_rows(1000, seed=11)
    fill(store, rows)
    out = tmp_path / "archive"
    report = export_games(store, out, make_filters())
    assert report.written == 1000
    files = sorted(p.name for p in out.glob("*.json"))
    assert len(files) == 1001 and "index.json" in files
    index = json.loads((out / "index.json").read_text())
    assert index["count"] == 1000
    assert {e["id"] for e in index["games"]} == {r.id for r in rows}
    assert all((out / e["file"]).is_file() for e in index["games"])
    entry = next(e for e in index["games"] if e["id"] == rows[0].id)
    assert entry["players"] == {s.seat: s.email for s in rows[0].seats}
    assert entry["result"] == rows[0].record["result"] and entry["status"] == "over"
    assert entry["finished"] and entry["created"]

    target = open_store(tmp_path / "target.sqlite3")
    try:
        imported = import_archive(target, out)  # several processes on a multi-core machine
        assert imported.summary_line() == "imported 1000, skipped 0 already present, 0 bad"
        for row in rows:
            back = target.get_game(row.id)
            assert back is not None
            assert back.record == row.record
            assert back.status == "over" and back.game == row.game
            assert [(s.seat, s.email, s.name) for s in back.seats] == \
                [(s.seat, s.email, s.name) for s in row.seats]
            assert back.finished_at == row.finished_at and back.created_at == row.created_at
            assert all(s.token_hash == "" for s in back.seats)  # imported games get no tokens
        again = import_archive(target, out, jobs=1)
        assert again.summary_line() == "imported 0, skipped 1000 already present, 0 bad"
    finally:
        target.close()
