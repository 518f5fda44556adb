"""``pbem admin`` in a subprocess against the store file a server uses."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pbem.community.moderation import moderator_token
from pbem.record import replay_json, replay_record
from tests.moderation.helpers import ALICE, BOB, CAROL, MALLORY, MOD, SECRET, ModServer, Table, start
from tests.server.harness import headline, text_of, to

CONFIG = f"""\
[server]
data_dir = "data"
database = "pbem.sqlite3"

[moderators]
addresses = ["{MOD}"]
"""


@pytest.fixture
def server(tmp_path: Path):
    srv = ModServer(tmp_path)
    (tmp_path / "data").mkdir(exist_ok=True)
    (tmp_path / "data" / "secret.key").write_text(SECRET.hex() + "\n")
    (tmp_path / "pbem.toml").write_text(CONFIG)
    yield srv
    srv.close()


def admin(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pbem.cli", "admin", *args, "-c",
                           str(tmp_path / "pbem.toml")], capture_output=True, text=True, timeout=120)


def test_token_list_show(server: ModServer, tmp_path: Path) -> None:
    result = admin(tmp_path, "token", MOD)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"token {moderator_token(SECRET, MOD)}"
    assert admin(tmp_path, "token", MALLORY).returncode == 1
    start(server)
    listing = admin(tmp_path, "list", "active")
    assert listing.returncode == 0 and "ac-1" in listing.stdout and ALICE in listing.stdout
    bad = admin(tmp_path, "list", "sideways")
    assert bad.returncode == 1 and "list filters" in bad.stderr
    shown = admin(tmp_path, "show", "ac-1")
    assert "status active" in shown.stdout and "Legal builds" in shown.stdout
    missing = admin(tmp_path, "show", "ac-9")
    assert missing.returncode == 1 and "there is no game ac-9" in missing.stderr


def test_rollback_block_and_end_from_the_command_line(server: ModServer, tmp_path: Path) -> None:
    table = Table(server)
    table.take(start(server))
    server.submit(server.mail(CAROL, "observe ac-1"))
    played = table.play(3)
    result = admin(tmp_path, "rollback", "ac-1", "2", "--why", "server bug", "--by", "operator")
    assert result.returncode == 0, result.stderr
    assert "Rolled back ac-1 to move 1" in result.stdout and "mail(s) queued" in result.stdout
    out = table.take(server.take_outbox())
    bob = headline(to(out, BOB)[0])
    assert bob.startswith("Your move (move 2). A moderator has taken back the last 2 moves")
    assert "server bug" in text_of(to(out, ALICE)[0]) and to(out, CAROL)
    row = server.game("ac-1")
    assert [m["move"] for m in row.record["moves"]] == played[:1]
    action = row.record["actions"][0]
    assert (action["action"], action["by"], action["why"], action["ply"]) == ("rollback", "operator",
                                                                             "server bug", 3)
    more = table.play(3)  # the running server goes on from the rolled-back record
    row = server.game("ac-1")
    assert [m["move"] for m in row.record["moves"]] == played[:1] + more
    path = tmp_path / "ac-1.json"
    path.write_text(json.dumps(row.record))
    lines = subprocess.run([sys.executable, "-m", "pbem.cli", "replay", str(path), "--json"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    assert json.loads(lines[-1]) == replay_json(replay_record(row.record))
    assert [json.loads(x)["ply"] for x in lines if '"actions"' in x] == [1]

    blocked = admin(tmp_path, "block", BOB, "--why", "spam")
    assert blocked.returncode == 0 and "They play in ac-1" in blocked.stdout
    assert server.submit(server.mail(BOB, "games")) == []
    again = admin(tmp_path, "block", MOD)
    assert again.returncode == 1 and "cannot be blocked" in again.stderr

    ended = admin(tmp_path, "end", "ac-1", "draw", "--why", "both agreed")
    assert ended.returncode == 0, ended.stderr
    out = server.take_outbox()
    assert {rcpt for rcpt, m in out if headline(m).startswith("Game over")} == {ALICE, BOB, CAROL}
    row = server.game("ac-1")
    assert row.status == "over" and row.record["result"]["winners"] == ["black", "white"]
    assert [a["action"] for a in row.record["actions"]] == ["rollback", "block", "end"]
    assert admin(tmp_path, "unblock", BOB).returncode == 0
    assert admin(tmp_path, "unblock", BOB).returncode == 1
