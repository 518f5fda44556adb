"""A kill -9 while a round is being paired creates each game exactly once: the server dies after
the round's games were created and before the transaction committed (``PBEM_FAILPOINT=
tournament-paired``); after a restart the mail (or the scheduler's start date) is handled again,
and every game and every round mail exists once. Both ways a round is paired: a player's mail that
ends the round's last game, and the scheduler at the start date; on both stores (SQLite, and a
database of the session's PostgreSQL)."""

from __future__ import annotations

import email
import email.policy
import subprocess
import sys
from pathlib import Path

from pbem.cli.mailbox import reply_to
from tests.e2e.conftest import REPO
from tests.server.players import headline
from tests.store.conftest import Backend
from tests.tournaments.club import MODERATOR, Club

PLAYERS = [f"p{i}@example.org" for i in range(4)]


def process(config: Path, failpoint: str | None) -> int:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    if failpoint:
        env["PBEM_FAILPOINT"] = failpoint
    done = subprocess.run([sys.executable, "-m", "pbem.cli", "process", "-c", str(config)], env=env,
                          capture_output=True, timeout=120)
    return done.returncode


def round_mails(data: Path, label: str) -> dict[str, int]:
    """Round mails in the outbox Maildir, per recipient."""
    counts: dict[str, int] = {}
    for path in (data / "outbox").rglob("*"):
        if not path.is_file():
            continue
        message = email.message_from_bytes(path.read_bytes(), policy=email.policy.default)
        if f"{label} of t-1" in headline(message):  # type: ignore[arg-type]
            rcpt = str(message["To"])
            counts[rcpt] = counts.get(rcpt, 0) + 1
    return counts


def setup(tmp_path: Path, backend: Backend, start: str) -> tuple[Club, Path]:
    data = tmp_path / "data"
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{data}"\ndatabase = "{backend.target}"\n'
                      f'[smtp]\nenabled = false\n[moderators]\naddresses = ["{MODERATOR}"]\n')
    data.mkdir()
    club = Club(tmp_path, backend.target)
    club.moderate(f"tournament new alien-city swiss rounds 2 starts {start}")
    for player in PLAYERS:
        club.send(player, "help")
        club.enter(player, "t-1")
    return club, config


def test_kill_9_while_the_scheduler_pairs_the_first_round(tmp_path: Path, backend: Backend) -> None:
    club, config = setup(tmp_path, backend, "now")
    club.close()  # from here the real clock: the start date has passed
    assert process(config, "tournament-paired") == -9
    store = backend.open()
    try:
        row = store.tournament_views().get("t-1")
        assert row.status == "open" and row.doc["rounds"] == [] and store.list_games() == []
    finally:
        store.close()
    assert process(config, None) == 0
    assert process(config, None) == 0  # and again: nothing more happens
    store = backend.open()
    try:
        row = store.tournament_views().get("t-1")
        assert row.status == "running" and len(row.doc["rounds"]) == 1
        assert len(store.list_games()) == 2
    finally:
        store.close()
    assert round_mails(tmp_path / "data", "Round 1") == dict.fromkeys(PLAYERS, 1)


def test_kill_9_while_the_last_game_of_a_round_ends(tmp_path: Path, backend: Backend) -> None:
    club, config = setup(tmp_path, backend, "2026-12-10")
    club.tick(days=21)
    games = [g["id"] for g in club.store.tournament_views().get("t-1").doc["rounds"][0]["games"]]
    first, last = games
    row = club.store.get_game(first)
    mover = next(s.email for s in row.seats if s.seat == row.to_move)
    club.resign(mover, first, club.game_mail(mover, first))
    row = club.store.get_game(last)
    mover = next(s.email for s in row.seats if s.seat == row.to_move)
    out = club.reply(mover, club.game_mail(mover, last), f"resign {last}")
    answer = [m for r, m in out if r == mover][-1]
    code = headline(answer).split("confirm ")[-1]
    confirm = reply_to(answer, mover, f"resign {last} confirm {code}")
    club.store.accept_inbound(confirm.as_bytes(policy=email.policy.SMTP), "test", club.clock.now())
    club.close()
    assert process(config, "tournament-paired") == -9
    store = backend.open()
    try:
        assert len(store.list_games()) == 2 and store.get_game(last).status == "active"
        assert store.inbound_counts()["pending"] == 1
    finally:
        store.close()
    assert process(config, None) == 0
    assert process(config, None) == 0
    store = backend.open()
    try:
        row = store.tournament_views().get("t-1")
        assert len(row.doc["rounds"]) == 2 and len(store.list_games()) == 4
        assert store.get_game(last).status == "over"
    finally:
        store.close()
    assert round_mails(tmp_path / "data", "Round 2") == dict.fromkeys(PLAYERS, 1)
