"""``pbem selfplay --levels`` and ``pbem analyse`` as a user runs them (the ``pbem`` command in a
subprocess), with tiny iteration budgets: strength is the bench's business."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from engine import get_game
from engine.base import replay

PBEM = [sys.executable, "-m", "pbem.cli"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*PBEM, *args], capture_output=True, text=True, timeout=300)


def table_row(output: str, label: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(label))
    return line[len(label):].split()


def test_a_match_between_levels_prints_mirrored_results_and_writes_records(tmp_path: Path) -> None:
    result = run("selfplay", "alien-city", "--levels", "3,1", "--games", "4", "--iterations", "8",
                 "--seed", "5", "-o", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "4 games of Alien City, levels 3,1 (at most 8 iterations), seed 5" in result.stdout
    games, won, drawn, lost = map(int, table_row(result.stdout, "level 3")[:4])
    assert games == 4 and won + drawn + lost == 4
    assert list(map(int, table_row(result.stdout, "level 1")[:4])) == [4, lost, drawn, won]
    assert all(len(line) <= 78 for line in result.stdout.splitlines())
    records = sorted(tmp_path.glob("*.json"))
    assert len(records) == 4
    game = get_game("alien-city")
    seats_of_level_3 = []
    for path in records:
        record = json.loads(path.read_text())
        end = replay(game, record["options"], record["setup"], record["moves"])
        assert end.is_over
        players = record["players"]
        assert {p["engine"] for p in players.values()} == {"pbem-ai"}
        seats_of_level_3 += [seat for seat, p in players.items() if p["level"] == 3]
    assert sorted(seats_of_level_3) == ["black", "black", "white", "white"]  # sides alternate


def test_a_quick_match_is_one_command_with_a_time_budget() -> None:
    """FINDINGS: a quick match and a serious one are both one command (``--budget`` seconds a move)."""
    result = run("selfplay", "alien-city", "--levels", "3,1", "--games", "2", "--budget", "0.01",
                 "--seed", "3")
    assert result.returncode == 0, result.stderr
    assert "levels 3,1" in result.stdout and "0.01 s a move" in result.stdout
    assert sum(map(int, table_row(result.stdout, "level 3")[1:4])) == 2


def test_the_same_seed_gives_the_same_match(tmp_path: Path) -> None:
    outputs = [run("selfplay", "space-truckin", "--levels", "2,1,1", "--games", "2", "--seed", "9",
                   "-o", str(tmp_path / str(k))) for k in range(2)]
    assert all(r.returncode == 0 for r in outputs), outputs[0].stderr
    first, second = (sorted((tmp_path / str(k)).glob("*.json")) for k in range(2))
    assert [p.read_text() for p in first] == [p.read_text() for p in second]
    assert "level 1 #2" in outputs[0].stdout


def test_analyse_judges_every_move_of_a_record(tmp_path: Path) -> None:
    made = run("selfplay", "alien-city", "--levels", "2,1", "--games", "1", "--seed", "3",
               "-o", str(tmp_path))
    assert made.returncode == 0, made.stderr
    record = next(tmp_path.glob("*.json"))
    plies = sum(1 for e in json.loads(record.read_text())["moves"] if "move" in e)
    result = run("analyse", str(record), "--iterations", "12")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stdout.splitlines() if line[:3].strip().isdigit()]
    assert [int(r.split()[0]) for r in rows] == list(range(1, plies + 1))
    assert "Biggest swings:" in result.stdout or "No move cost" in result.stdout
    assert all(len(line) <= 78 for line in result.stdout.splitlines())


def test_analyse_works_on_a_space_truckin_record_without_its_pile(tmp_path: Path) -> None:
    made = run("selfplay", "space-truckin", "--levels", "1,1", "--games", "1", "--seed", "4",
               "-o", str(tmp_path))
    assert made.returncode == 0, made.stderr
    path = next(tmp_path.glob("*.json"))
    record = json.loads(path.read_text())
    record["moves"] = record["moves"][:30]
    del record["setup"]["pile"]  # what a player's copy holds
    path.write_text(json.dumps(record))
    result = run("analyse", str(path), "--iterations", "3")
    assert result.returncode == 0, result.stderr
    assert "judged by the computer at level 3" in result.stdout


def test_bad_levels_are_refused_with_what_would_do() -> None:
    result = run("selfplay", "alien-city", "--levels", "5,1")
    assert result.returncode == 2 and "no computer level 5: levels are 1, 2, 3, 4" in result.stderr
    result = run("selfplay", "alien-city", "--levels", "3")
    assert result.returncode == 2 and "2 to 2 players" in result.stderr
