"""Import: every file checked (schema, setup, full replay), bad files named with the reason, each game
stored whole or not at all, games already present skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pbem.archive.export import export_games
from pbem.archive.importer import import_archive
from pbem.archive.search import make_filters
from pbem.store import open_store
from pbem.store.base import GameRow, Store
from pbem.store.sqlite import SQLiteTx
from tests.archive.conftest import Cli, fill


@pytest.fixture
def archive(tmp_path: Path, store: Store, few_rows: list[GameRow]) -> Path:
    """An exported archive of the twelve games plus three broken files."""
    fill(store, few_rows)
    out = tmp_path / "archive"
    export_games(store, out, make_filters())
    good = json.loads((out / "ac-1.json").read_text())
    bad_schema = dict(good, id="ac-901", format="pbem-record/9")
    del bad_schema["moves"]
    (out / "bad-schema.json").write_text(json.dumps(bad_schema))
    illegal = json.loads(json.dumps(good))
    illegal["id"] = "ac-902"
    moves = [e for e in illegal["moves"] if "move" in e]
    moves[4]["move"] = moves[3]["move"].split(" claim ")[0]  # build again on the lot just built on
    (out / "illegal-move.json").write_text(json.dumps(illegal))
    text = (out / "st-1.json").read_text()
    (out / "truncated.json").write_text(text[: len(text) // 2])
    return out


def test_bad_files_are_named_with_the_reason_and_good_ones_stored(tmp_path: Path, archive: Path,
                                                                  few_rows: list[GameRow]) -> None:
    target = open_store(tmp_path / "target.sqlite3")
    try:
        report = import_archive(target, archive, jobs=1)
        assert report.summary_line() == "imported 12, skipped 0 already present, 3 bad"
        reasons = {bad.path.name: bad.reason for bad in report.bad}
        assert set(reasons) == {"bad-schema.json", "illegal-move.json", "truncated.json"}
        assert all(bad.path.parent == archive for bad in report.bad)
        assert "$.format" in reasons["bad-schema.json"]
        assert "$: 'moves' is a required property" in reasons["bad-schema.json"]
        assert reasons["illegal-move.json"].startswith("illegal move at ply 5 ")
        assert "occupied" in reasons["illegal-move.json"]
        assert reasons["truncated.json"].startswith("line ")
        assert "column" in reasons["truncated.json"]
        assert target.get_game("ac-901") is None and target.get_game("ac-902") is None
        assert sorted(r.id for r in target.list_games()) == sorted(r.id for r in few_rows)

        again = import_archive(target, archive, jobs=1)
        assert again.summary_line() == "imported 0, skipped 12 already present, 3 bad"
        assert len(target.list_games()) == 12
    finally:
        target.close()


def test_a_game_the_store_refuses_is_rolled_back_whole(tmp_path: Path, archive: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The game row is written before its seats; a failure in between must leave neither."""
    original = SQLiteTx._insert_seats

    def failing(self: SQLiteTx, game: GameRow, *rest: object) -> None:
        if game.id == "ac-2":
            raise OSError("disk on fire")
        original(self, game, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(SQLiteTx, "_insert_seats", failing)
    target = open_store(tmp_path / "target.sqlite3")
    try:
        report = import_archive(target, archive, jobs=1)
        refused = [b for b in report.bad if b.path.name == "ac-2.json"]
        assert refused and "disk on fire" in refused[0].reason
        assert target.get_game("ac-2") is None
        assert "ac-2" not in {r.id for r in target.list_games()}
        monkeypatch.setattr(SQLiteTx, "_insert_seats", original)
        retry = import_archive(target, archive, jobs=1)
        assert retry.imported == ["ac-2"]
        back = target.get_game("ac-2")
        assert back is not None and len(back.seats) == 2
    finally:
        target.close()


def test_records_that_cannot_become_games(tmp_path: Path, archive: Path) -> None:
    good = json.loads((archive / "ac-3.json").read_text())
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    no_id = dict(good)
    del no_id["id"]
    (lonely / "no-id.json").write_text(json.dumps(no_id))
    no_players = dict(good, id="ac-77")
    del no_players["players"]
    (lonely / "no-players.json").write_text(json.dumps(no_players))
    no_email = json.loads(json.dumps(good))
    no_email["id"] = "ac-78"
    no_email["players"]["white"] = {"name": "W"}
    (lonely / "no-email.json").write_text(json.dumps(no_email))
    (lonely / "latin1.json").write_bytes(b'{"game": "caf\xe9"}')
    (lonely / "index.json").write_text("not a record, and not read as one")
    target = open_store(tmp_path / "target.sqlite3")
    try:
        report = import_archive(target, lonely, jobs=1)
    finally:
        target.close()
    reasons = {b.path.name: b.reason for b in report.bad}
    assert reasons["no-id.json"].startswith("$.id:")
    assert reasons["no-players.json"].startswith("$.players:")
    assert reasons["no-email.json"].startswith("$.players.white.email:")
    assert "UTF-8" in reasons["latin1.json"]
    assert "index.json" not in reasons and not report.imported


def test_cli_import_exit_codes_and_report(tmp_path: Path, archive: Path) -> None:
    cli = Cli(tmp_path, tmp_path / "cli.sqlite3")
    code, out, err = cli("archive", "import", str(archive))
    assert code == 1
    assert out.strip().splitlines()[-1] == "imported 12, skipped 0 already present, 3 bad"
    for name in ("bad-schema.json", "illegal-move.json", "truncated.json"):
        assert f"bad: {archive / name}: " in err
    assert "Traceback" not in err
    code, out, _ = cli("archive", "import", str(archive))
    assert code == 1 and "imported 0, skipped 12 already present, 3 bad" in out
    for bad in ("bad-schema.json", "illegal-move.json", "truncated.json"):
        (archive / bad).unlink()
    code, out, err = cli("archive", "import", str(archive))
    assert (code, err) == (0, "") and "imported 0, skipped 12 already present, 0 bad" in out
    code, _, err = cli("archive", "import", str(tmp_path / "nowhere"))
    assert code == 2 and "no such directory" in err and "Traceback" not in err


def test_public_export_hides_the_pile_and_still_imports(tmp_path: Path, store: Store,
                                                         few_rows: list[GameRow]) -> None:
    fill(store, few_rows)
    out = tmp_path / "public"
    export_games(store, out, make_filters(game="space-truckin"), public=True)
    truckin = [r for r in few_rows if r.game == "space-truckin"]
    assert truckin
    for row in truckin:
        text = (out / f"{row.id}.json").read_text()
        assert '"pile"' not in text
        assert json.dumps(row.record["setup"]["pile"][:3])[1:-1] not in text
    target = open_store(tmp_path / "target.sqlite3")
    try:
        report = import_archive(target, out, jobs=1)
    finally:
        target.close()
    assert report.ok and len(report.imported) == len(truckin)


def test_cli_export(tmp_path: Path, store: Store, few_rows: list[GameRow]) -> None:
    fill(store, few_rows)
    cli = Cli(tmp_path, tmp_path / "source.sqlite3")
    out = tmp_path / "only-ac"
    code, stdout, err = cli("archive", "export", "--game", "alien-city", "-o", str(out))
    assert (code, err) == (0, "")
    wanted = sorted(f"{r.id}.json" for r in few_rows if r.game == "alien-city")
    assert sorted(p.name for p in out.glob("*.json") if p.name != "index.json") == wanted
    assert f"exported {len(wanted)} game(s) (alien-city)" in stdout
    index = json.loads((out / "index.json").read_text())
    assert index["format"] == "pbem-archive-index/1" and index["count"] == len(wanted)
    # a second export into the same directory adds to the index
    code, _, _ = cli("archive", "export", "--game", "space-truckin", "-o", str(out))
    assert code == 0
    assert json.loads((out / "index.json").read_text())["count"] == len(few_rows)
    code, _, err = cli("archive", "export", "--to", "yesterday", "-o", str(out))
    assert code == 2 and "not a date" in err
