"""``pbem admin prune`` in a subprocess against the database of a server that has played: what it
says it would do (``--dry-run``, nothing changed), what it says it did, that it finds nothing more the
second time, that a player's old mail sent again is still recognised, that every game replays the
same, ``pbem admin status``'s line about it, ``--vacuum`` on SQLite; and on PostgreSQL, what it says
about the space and that ``--vacuum`` is refused there."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.cli.mailbox import reply_to
from pbem.record import replay_json, replay_record
from pbem.store import open_store
from tests.server.harness import Server, start_game, to
from tests.server.players import Player
from tests.services.postgres import Postgres

ALICE, BOB, CAROL = "alice@example.org", "bob@example.org", "carol@example.org"
SIZE = r"[\d.]+ (?:bytes|kB|MB|GB)"
LINE = re.compile(r"^(would prune|pruned) the raw mail of (\d+) received and (\d+) sent messages older "
                  rf"than (\d{{4}}-\d\d-\d\d \d\d:\d\d) UTC \(({SIZE})\); "
                  r"(nothing changed \(--dry-run\)|kept their rows)$", re.MULTILINE)


def size(text: str) -> float:
    number, unit = text.split()
    return float(number) * {"bytes": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[unit]


def pbem(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pbem.cli", "admin", *args, "-c", str(config)],
                          capture_output=True, text=True, timeout=120)


def counts(path: Path) -> dict[str, tuple[int, int, int]]:
    """Per table: rows, rows pruned, bytes of raw mail."""
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT COUNT(*), COUNT(pruned_at), COALESCE(SUM(LENGTH(raw)), 0)"
                                f" FROM {t}").fetchone() for t in ("inbound", "outbound")}
    finally:
        conn.close()


@pytest.fixture
def played(tmp_path: Path) -> tuple[Server, Path, list[EmailMessage]]:
    """A game played ten days ago (with the mails Alice sent), and Carol's question an hour ago."""
    server = Server(tmp_path)
    server.clock.set(datetime.now(UTC) - timedelta(days=10))
    players = {ALICE: Player(ALICE, 1), BOB: Player(BOB, 2)}
    alice_mail, bob_mail = start_game(server, ALICE, BOB)
    sent_by_alice: list[EmailMessage] = []
    latest = {ALICE: alice_mail, BOB: bob_mail}
    for turn in range(4):
        who = (ALICE, BOB)[turn % 2]
        answer = players[who].respond(latest[who])
        assert answer is not None, f"{who} had nothing to answer"
        if who == ALICE:
            sent_by_alice.append(answer)
        out = server.submit(answer)
        latest.update((rcpt, message) for rcpt, message in out)
    server.clock.set(datetime.now(UTC) - timedelta(hours=1))
    assert to(server.submit(server.mail(CAROL, "help")), CAROL)
    config = tmp_path / "pbem.toml"
    config.write_text('[server]\ndata_dir = "data"\ndatabase = "pbem.sqlite3"\n')
    yield server, config, sent_by_alice
    server.close()


def test_prune_says_what_it_would_do_does_it_once_and_keeps_what_matters(
        played: tuple[Server, Path, list[EmailMessage]], tmp_path: Path) -> None:
    server, config, sent_by_alice = played
    database = tmp_path / "pbem.sqlite3"
    game = server.game("ac-1")
    board_before = replay_json(replay_record(game.record))
    stored = counts(database)

    dry = pbem(config, "prune", "--older-than", "5d", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    [would] = LINE.findall(dry.stdout)
    assert dry.stdout.splitlines()[0].startswith(f"Configuration: {config.resolve()}")
    assert would[0] == "would prune" and would[5] == "nothing changed (--dry-run)"
    assert counts(database) == stored  # nothing changed

    done = pbem(config, "prune", "--older-than", "5d")
    assert done.returncode == 0, done.stderr
    [did] = LINE.findall(done.stdout)
    assert did[0] == "pruned" and did[5] == "kept their rows"
    assert did[1:5] == would[1:5]  # it did what the dry run said
    received, sent = int(did[1]), int(did[2])
    # every mail of the game ten days ago; Carol's help and its answer an hour ago are kept whole
    assert received == stored["inbound"][0] - 1 and sent == stored["outbound"][0] - 1
    after = counts(database)
    assert after["inbound"][:2] == (stored["inbound"][0], received)  # rows kept, raw dropped
    assert after["outbound"][:2] == (stored["outbound"][0], sent)
    assert 0 < after["inbound"][2] < stored["inbound"][2]
    assert "SQLite reuses the freed pages" in done.stdout and "--vacuum" in done.stdout

    again = pbem(config, "prune", "--older-than", "5d")
    assert again.returncode == 0 and LINE.findall(again.stdout) == []
    assert "nothing to prune: no finished message older than" in again.stdout
    assert counts(database) == after

    # Alice's client sends her first move again: recognised, not applied twice, not answered
    replies = server.submit(sent_by_alice[0])
    assert replies == [] and counts(database) == after
    game = server.game("ac-1")
    assert replay_json(replay_record(game.record)) == board_before
    # and the game goes on from its record as before
    status = pbem(config, "status")
    assert status.returncode == 0, status.stderr
    assert re.search(rf"Raw mail of finished messages: last pruned \S+ \S+ UTC, finished before "
                     rf"{re.escape(did[3])} UTC \({received} received, {sent} sent, ", status.stdout)


def test_vacuum_shrinks_the_file_and_bad_ages_are_refused(
        played: tuple[Server, Path, list[EmailMessage]], tmp_path: Path) -> None:
    _server, config, _sent = played
    result = pbem(config, "prune", "--older-than", "5d", "--vacuum")
    assert result.returncode == 0, result.stderr
    found = re.search(rf"^vacuumed (\S+): ({SIZE}) -> ({SIZE})$", result.stdout, re.MULTILINE)
    assert found and Path(found[1]) == (tmp_path / "pbem.sqlite3").resolve(), result.stdout
    assert size(found[3]) < size(found[2])  # the file with its write-ahead log
    status = pbem(config, "status")
    assert "Raw mail of finished messages: last pruned" in status.stdout
    for age in ("5x", "=-5d", "0d"):
        bad = pbem(config, "prune", f"--older-than{age if age.startswith('=') else '=' + age}")
        assert bad.returncode == 2
        assert bad.stderr.startswith(f"pbem admin prune: --older-than {age.lstrip('=')!r} is not an age: "
                                     "write it like 90d, 12w, 36h or 1d12h")


def test_on_postgresql_it_says_where_the_space_goes_and_leaves_vacuum_to_the_administrator(
        postgres: Postgres, tmp_path: Path) -> None:
    dsn = postgres.create_database("prune_cli")
    old = datetime.now(UTC) - timedelta(days=100)
    with open_store(dsn) as store:
        stored = store.accept_inbound(b"From: ann@example.org\r\nMessage-ID: <a@x>\r\n\r\nhelp\r\n",
                                      "smtp", old)
        with store.transaction() as tx:
            tx.mark_inbound(stored.inbound_id, "done", "help", now=old)
            tx.queue_outbound(message_id="<r@pbem>", sender="pbem@example.org",
                              recipients=["ann@example.org"], raw=b"Subject: help\r\n\r\n" + b"h" * 3000,
                              now=old)
        [row] = store.due_outbound(old)
        store.mark_sent(row.id, old)
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "data"\ndatabase = "{dsn}"\n')
    refused = pbem(config, "prune", "--vacuum")
    assert refused.returncode == 2 and refused.stderr.startswith(
        "pbem admin prune: --vacuum is for a SQLite file; PostgreSQL reuses the freed space")
    assert "VACUUM FULL inbound, outbound" in refused.stderr
    done = pbem(config, "prune")  # the default age: 90 days
    assert done.returncode == 0, done.stderr
    [did] = LINE.findall(done.stdout)
    assert did[:3] == ("pruned", "1", "1") and did[4].endswith("kB")
    assert "PostgreSQL reuses the freed space" in done.stdout
    with open_store(dsn) as store:
        again = store.accept_inbound(b"From: ann@example.org\r\nMessage-ID: <a@x>\r\n\r\nhelp!\r\n",
                                     "smtp", datetime.now(UTC))
        assert (again.new, again.status) == (False, "done")
        assert store.get_inbound(stored.inbound_id).raw == b""  # type: ignore[union-attr]


def test_reply_to_a_pruned_board_still_plays(played: tuple[Server, Path, list[EmailMessage]]) -> None:
    """The threading and tokens of a board mail do not need its stored copy: a player answering
    the last board after the prune plays on."""
    server, config, _sent = played
    assert pbem(config, "prune", "--older-than", "5d").returncode == 0
    server.clock.set(datetime.now(UTC))
    row = server.game("ac-1")
    to_move = next(s.email for s in row.seats if s.seat == row.to_move)
    out = server.submit(server.mail(to_move, "board ac-1"))
    board = to(out, to_move)[0]
    move = Player(to_move, 5).choose_move(board)
    out = server.submit(reply_to(board, to_move, move))
    assert len(server.game("ac-1").record["moves"]) == len(row.record["moves"]) + 1, out
