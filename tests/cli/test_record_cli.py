"""The record tools as a user runs them: the installed ``pbem`` command in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.scores import table_totals

PBEM = [sys.executable, "-m", "pbem.cli"]


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PBEM, *args], capture_output=True, text=True, cwd=cwd, timeout=120)


@pytest.fixture
def record(tmp_path: Path) -> Path:
    path = tmp_path / "game.json"
    result = run("new", "alien-city", "--seed", "7", "-o", str(path))
    assert result.returncode == 0, result.stderr
    return path


def first_legal(path: Path) -> str:
    lines = run("replay", str(path), "--json").stdout.splitlines()
    return json.loads(lines[-1])["legal"][0]


def test_new_writes_a_valid_record_with_the_defaults(record: Path) -> None:
    data = json.loads(record.read_text())
    assert data["format"] == "pbem-record/1"
    assert data["game"] == "alien-city"
    assert len(data["setup"]["tiles"]) == 20
    assert data["moves"] == []
    assert data["options"]["edition"] == "2.2"


def test_new_with_options_records_them(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    result = run("new", "alien-city", "--edition", "1.2", "--symmetric", "--location-bonus",
                 "--handicap", "white:3:1", "--seed", "3", "-o", str(path))
    assert result.returncode == 0, result.stderr
    options = json.loads(path.read_text())["options"]
    assert options["edition"] == "1.2" and options["symmetric"] and options["location_bonus"]
    assert options["handicap"]["white"] == {"reach": 3, "extra_claims": 1}
    numbers = sorted(t["number"] for t in json.loads(path.read_text())["setup"]["tiles"])
    assert 3 not in numbers and numbers.count(0) == 4


def test_unknown_option_is_a_usage_error_with_a_suggestion(tmp_path: Path) -> None:
    result = run("new", "alien-city", "--symetric", "-o", str(tmp_path / "x.json"))
    assert result.returncode == 2
    assert "symmetric" in result.stderr and "Traceback" not in result.stderr


def test_move_appends_and_rewrites_atomically(record: Path) -> None:
    move = first_legal(record)
    result = run("move", str(record), move)
    assert result.returncode == 0, result.stdout + result.stderr
    data = json.loads(record.read_text())
    assert [m["move"] for m in data["moves"]] == [move]
    assert data["moves"][0]["seat"] == "black"
    assert not list(record.parent.glob(".game.json.*")), "temporary files left behind"


def test_illegal_move_changes_nothing_and_says_why(record: Path) -> None:
    before = record.read_bytes()
    move = first_legal(record)
    assert run("move", str(record), move).returncode == 0
    after_first = record.read_bytes()
    lot = move.split()[-1]
    result = run("move", str(record), f"dome red {lot}")  # the lot is now occupied
    assert result.returncode == 1
    assert "Not applied" in result.stdout
    assert record.read_bytes() == after_first != before
    garbage = run("move", str(record), "fly to the moon")
    assert garbage.returncode == 1 and "understand \"fly\"" in garbage.stdout


def test_show_and_score(record: Path) -> None:
    shown = run("show", str(record))
    assert shown.returncode == 0
    assert "tower" in shown.stdout.lower()
    assert max(len(line) for line in shown.stdout.splitlines()) <= 72
    scored = run("score", str(record))
    assert scored.returncode == 0 and table_totals(scored.stdout)["black"] == 0


def test_replay_json_contract(tmp_path: Path) -> None:
    out = tmp_path / "games"
    assert run("selfplay", "alien-city", "--games", "1", "--seed", "5", "--quiet",
               "-o", str(out)).returncode == 0
    path = next(out.glob("*.json"))
    data = json.loads(path.read_text())
    result = run("replay", str(path), "--json")
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [line["ply"] for line in lines] == list(range(len(data["moves"]) + 1))
    for line, move in zip(lines, data["moves"], strict=False):
        assert set(line) >= {"ply", "to_move", "over", "legal", "ending", "scores"}
        assert line["to_move"] == move["seat"] and not line["over"]
        built = " ".join(move["move"].split()[:3])
        assert built in line["legal"]
        assert set(line["ending"]) <= set(line["legal"])
    last = lines[-1]
    assert last["over"] is True and last["to_move"] is None and last["legal"] == []
    final = run("score", str(path)).stdout
    assert table_totals(final) == last["scores"], final
    one = run("replay", str(path), "--ply", "3", "--json")
    assert [json.loads(x)["ply"] for x in one.stdout.splitlines()] == [3]
    text = run("replay", str(path))
    assert text.stdout.count("=== ply") == len(lines)


def test_malformed_record_exits_2_naming_the_json_path(tmp_path: Path, record: Path) -> None:
    data = json.loads(record.read_text())
    data["setup"]["tiles"][4]["icon"] = "UP"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    result = run("replay", str(bad))
    assert result.returncode == 2
    assert "$.setup.tiles[4].icon" in result.stderr and "Traceback" not in result.stderr
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "pbem-record/1",\n "game": ')
    result = run("show", str(broken))
    assert result.returncode == 2 and "line 2" in result.stderr


def test_illegal_move_in_record_exits_1_naming_ply_move_and_rule(tmp_path: Path, record: Path) -> None:
    move = first_legal(record)
    data = json.loads(record.read_text())
    data["moves"] = [{"seat": "black", "move": move}, {"seat": "white", "move": move}]
    bad = tmp_path / "illegal.json"
    bad.write_text(json.dumps(data))
    result = run("replay", str(bad))
    assert result.returncode == 1
    assert "ply 2" in result.stderr and move in result.stderr
    assert "rule" in result.stderr and "Traceback" not in result.stderr


def test_selfplay_prints_the_boards_of_one_game() -> None:
    result = run("selfplay", "alien-city", "--seed", "11")
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("=== ply") > 20
    assert "Totals" in result.stdout or "total" in result.stdout.lower()


def test_space_truckin_records(tmp_path: Path) -> None:
    path = tmp_path / "st.json"
    assert run("new", "space-truckin", "--players", "3", "--seed", "4", "-o", str(path)).returncode == 0
    data = json.loads(path.read_text())
    assert [e["chance"]["tile"] for e in data["moves"]] and "pile" in data["setup"]
    first = json.loads(run("replay", str(path), "--json").stdout.splitlines()[0])
    assert set(first) >= {"ply", "to_move", "over", "tile", "quadrant", "scores", "legal"}
    assert first["to_move"] == data["setup"]["first"]
    placement = first["legal"][0]
    assert len(placement.split()) == 2
    moved = run("move", str(path), f"place {placement}")
    assert moved.returncode == 0, moved.stdout
    after = json.loads(path.read_text())
    assert any(e.get("move", "").startswith(f"place {placement}") for e in after["moves"])
    lines = [json.loads(x) for x in run("replay", str(path), "--json").stdout.splitlines()]
    assert [x["ply"] for x in lines] == [0, 1]
    assert run("selfplay", "space-truckin", "--players", "4", "--seed", "2", "--quiet").returncode == 0


def test_space_truckin_record_with_a_drop(tmp_path: Path) -> None:
    """A drop entry is not a ply: replay --json keeps one line per ply, the dropped seat never moves."""
    path = tmp_path / "st.json"
    assert run("new", "space-truckin", "--players", "3", "--seed", "4", "-o", str(path)).returncode == 0
    first = json.loads(run("replay", str(path), "--json").stdout.splitlines()[0])
    assert run("move", str(path), f"place {first['legal'][0]}").returncode == 0
    data = json.loads(path.read_text())
    late = json.loads(run("replay", str(path), "--json").stdout.splitlines()[-1])["to_move"]
    data["moves"].append({"drop": late, "at": "2026-11-28T10:00:00Z", "reason": "forfeit"})
    path.write_text(json.dumps(data))
    lines = [json.loads(x) for x in run("replay", str(path), "--json").stdout.splitlines()]
    assert [x["ply"] for x in lines] == [0, 1]
    assert lines[1]["to_move"] not in (late, None) and late in lines[1]["scores"]
    assert "DROPPED" in run("replay", str(path), "--ply", "1").stdout
    legal = lines[1]["legal"]
    moved = run("move", str(path), "pass" if "pass" in legal else f"place {legal[0]}")  # pass: black hole
    assert moved.returncode == 0, moved.stdout
    assert [json.loads(x)["ply"] for x in run("replay", str(path), "--json").stdout.splitlines()] == [0, 1, 2]
    data = json.loads(path.read_text())
    data["moves"][-1]["drop"] = late  # a move and a drop in one entry
    path.write_text(json.dumps(data))
    result = run("replay", str(path))
    assert result.returncode == 2 and "$.moves[" in result.stderr


def test_alien_city_cannot_replay_a_drop(tmp_path: Path, record: Path) -> None:
    data = json.loads(record.read_text())
    data["moves"] = [{"drop": "white", "at": "2026-11-28T10:00:00Z", "reason": "forfeit"}]
    bad = tmp_path / "dropped.json"
    bad.write_text(json.dumps(data))
    result = run("replay", str(bad))
    assert result.returncode == 1
    assert "drop white" in result.stderr and "Alien City cannot drop a player" in result.stderr
