"""Three ``pbem serve`` workers on one PostgreSQL database play 50 games by mail (over 500 moves), through
their SMTP listeners and the shared IMAP mailbox, while one worker after another is killed with
SIGKILL and restarted: no move is lost or applied twice, every reply arrives (a mail the relay took
just before a kill, and so is sent again, keeps its Message-ID), every record replays, and the IMAP
and scheduler roles move to a survivor within 30 s. And two moves for the same turn, arriving at two
workers at the same instant: one applies, the other is answered as stale."""

from __future__ import annotations

import email.policy
import subprocess
import sys
import threading
import time
from collections import Counter
from email.message import EmailMessage
from email.utils import parseaddr

import pytest

from pbem.cli.mailbox import new_mail, reply_to
from pbem.record import replay_record
from tests.server.players import Player, headline, parse
from tests.services.smtp_sink import SmtpSink
from tests.workers.conftest import Cluster

SERVER = "pbem@localhost"
GAMES = 50
MOVES = 500
TAKEOVER_SECONDS = 30


def raw(message: EmailMessage) -> bytes:
    return message.as_bytes(policy=email.policy.SMTP)


class Table:
    """The players of all games, answering what reaches them through the sink."""

    def __init__(self, cluster: Cluster, sink: SmtpSink) -> None:
        self.cluster = cluster
        self.sink = sink
        self.players: dict[str, Player] = {}
        self.read = 0  # sink messages handled so far
        self.sent = 0  # mails the players sent (each stored once)
        self.moves_applied: set[str] = set()  # Message-IDs of "X played ..." notices seen
        self.answering = True

    def player(self, address: str) -> Player:
        if address not in self.players:
            self.players[address] = Player(address, len(self.players) + 1)
        return self.players[address]

    def post(self, message: EmailMessage) -> None:
        """Most mail through a random worker's SMTP listener; every fifth into the IMAP mailbox."""
        self.sent += 1
        if self.sent % 5 == 0:
            self.cluster.append(raw(message))
        else:
            self.cluster.send(raw(message), parseaddr(message["From"])[1], SERVER)

    def handle_new(self) -> int:
        messages = self.sink.messages[self.read:]
        self.read += len(messages)
        for item in messages:
            message = item.message
            first = headline(message)
            if " played " in first:
                self.moves_applied.add(message["Message-ID"])
            if self.answering:
                answer = self.player(item.rcpt_tos[0]).respond(message)
                if answer is not None:
                    self.post(answer)
        return len(messages)


def wait_quiet(cluster: Cluster, table: Table, seconds: float = 120) -> None:
    """Until every stored mail is processed and every reply sent and read."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        table.handle_new()
        figures = cluster.store.queue_figures()
        if figures["inbound_pending"] == 0 and figures["outbound_pending"] == 0 and \
                not cluster.dovecot.list_messages(cluster.user.user) and table.handle_new() == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"not quiet after {seconds} s: {cluster.store.queue_figures()}")


@pytest.mark.slow
@pytest.mark.services
def test_three_workers_killed_and_restarted_lose_and_double_nothing(cluster_of, smtp_sink: SmtpSink
                                                                    ) -> None:
    cluster: Cluster = cluster_of(3)
    for i in range(3):
        cluster.start(i)
    table = Table(cluster, smtp_sink)
    for k in range(GAMES):
        a, b = f"p{2 * k}@example.org", f"p{2 * k + 1}@example.org"
        table.post(new_mail(a, SERVER, f"new alien-city with {b}"))

    kills: list[tuple[int, list[str]]] = []  # (worker, roles it held)
    takeovers: list[float] = []
    checks = [100, 200, 300, 400]
    deadline = time.monotonic() + 300
    # (Until every kill has happened too: the moves seen can jump past a check while the players
    # are answered during a takeover.)
    while len(table.moves_applied) < MOVES or checks:
        assert time.monotonic() < deadline, f"only {len(table.moves_applied)} moves in 300 s"
        if not table.handle_new():
            time.sleep(0.02)
        if checks and len(table.moves_applied) >= checks[0]:
            checks.pop(0)
            # The first kill hits the IMAP watcher, the second the scheduler, then the others.
            victim = _victim(cluster, kills)
            held = [role for role in ("imap", "scheduler")
                    if any(w.startswith(f"{_host()}:{cluster.procs[victim].pid}:")
                           for w in cluster.holders(role, 5))]
            cluster.kill(victim)
            killed_at = time.monotonic()
            kills.append((victim, held))
            for role in held:
                while not [w for w in cluster.holders(role, 3)
                           if not w.startswith(f"{_host()}:{cluster.procs[victim].pid}:")]:
                    assert time.monotonic() - killed_at < TAKEOVER_SECONDS, f"{role} role not taken"
                    table.handle_new()
                    time.sleep(0.1)
                takeovers.append(time.monotonic() - killed_at)
            cluster.start(victim)
    table.answering = False
    wait_quiet(cluster, table)
    cluster.stop()

    assert len(kills) == 4 and {"imap", "scheduler"} <= {r for _, held in kills for r in held}
    assert max(takeovers) < TAKEOVER_SECONDS
    store = cluster.store
    # Every mail stored once and processed once; none left, none failed.
    statuses = Counter(m.status for m in store.iter_inbound())
    assert statuses["pending"] == 0 and statuses["failed"] == 0, statuses
    assert sum(statuses.values()) == table.sent
    # Every game's record replays; its moves are exactly the moves reported applied.
    applied: Counter[str] = Counter()
    for m in store.iter_inbound():
        if m.outcome and m.outcome.startswith("applied "):
            applied[_game_of(store, m.id)] += 1
    games = store.list_games()
    assert len(games) == GAMES
    total = 0
    for game in games:
        state = replay_record(game.record)
        assert state.ply == len(game.record["moves"]) == applied[game.id], game.id
        total += state.ply
    assert total == len(table.moves_applied) >= MOVES
    # Every reply went out; one sent again only when its worker died between the relay's "250" and
    # the mark (at most one per kill), and then with the same Message-ID and bytes.
    assert store.outbound_counts()["pending"] == 0
    sent = Counter(parse(m.data)["Message-ID"] for m in smtp_sink.messages)
    queued = {o.message_id for o in _all_outbound(store)}
    assert set(sent) == queued
    again = [mid for mid, n in sent.items() if n > 1]
    assert len(again) <= len(kills), again
    for mid in again:
        assert len({m.data for m in smtp_sink.messages if parse(m.data)["Message-ID"] == mid}) == 1
    errors = [line for i in range(3) for line in cluster.log(i, whole=True).splitlines()
              if " ERROR " in line or "Traceback" in line]
    assert errors == []
    print(f"\n[workers] {total} moves in {len(games)} games, {table.sent} mails in, {len(queued)} out; "
          f"{len(kills)} kills, roles taken over after {', '.join(f'{t:.1f}' for t in takeovers)} s; "
          f"{len(again)} mail(s) sent again")


@pytest.mark.slow
@pytest.mark.services
def test_a_worker_killed_holding_a_claim_is_taken_over_by_the_others(cluster_of, smtp_sink: SmtpSink
                                                                     ) -> None:
    """One of three workers dies (SIGKILL, its processor and listener at once) inside a message's
    transaction, and stays dead: the two others carry on, process the message it held and the
    games that were homed at it, and nothing is lost or applied twice."""
    cluster: Cluster = cluster_of(3)
    cluster.start(0)
    cluster.start(1)
    cluster.start(2, PBEM_FAILPOINT="claimed:60")  # dies on its 60th claim, holding it
    table = Table(cluster, smtp_sink)
    games = 20
    for k in range(games):
        a, b = f"k{2 * k}@example.org", f"k{2 * k + 1}@example.org"
        table.post(new_mail(a, SERVER, f"new alien-city with {b}"))
    deadline = time.monotonic() + 300
    after_kill = 0
    while cluster.procs[2].poll() is None or after_kill < 100:
        assert time.monotonic() < deadline, f"{len(table.moves_applied)} moves, worker 2 alive: " \
                                            f"{cluster.procs[2].poll() is None}, {after_kill} since"
        before = len(table.moves_applied)
        if not table.handle_new():
            time.sleep(0.02)
        if cluster.procs[2].poll() is not None:
            after_kill += len(table.moves_applied) - before
    assert cluster.procs[2].returncode == -9  # killed, not stopped, and not started again
    table.answering = False
    wait_quiet(cluster, table)
    cluster.stop()

    store = cluster.store
    statuses = Counter(m.status for m in store.iter_inbound())
    assert statuses["pending"] == 0 and statuses["failed"] == 0, statuses
    assert sum(statuses.values()) == table.sent  # every mail stored once, and processed
    # Worker 2 finished 59 messages and died holding its 60th; every message was finished by one
    # worker (its log line is written after the commit), so that one by another.
    by_worker = [{line.split("message id=")[1].split()[0] for line in cluster.log(i, whole=True).splitlines()
                  if "message id=" in line and " outcome=" in line} for i in range(3)]
    assert len(by_worker[2]) == 59
    assert sum(len(ids) for ids in by_worker) == len(set().union(*by_worker)) == table.sent
    applied: Counter[str] = Counter()
    for m in store.iter_inbound():
        if m.outcome and m.outcome.startswith("applied "):
            applied[_game_of(store, m.id)] += 1
    for game in store.list_games():
        state = replay_record(game.record)
        assert state.ply == len(game.record["moves"]) == applied[game.id], game.id
    assert sum(applied.values()) == len(table.moves_applied)  # each move applied and told once
    assert store.outbound_counts()["pending"] == 0
    sent = Counter(parse(m.data)["Message-ID"] for m in smtp_sink.messages)
    assert set(sent) == {o.message_id for o in _all_outbound(store)}
    assert sum(n - 1 for n in sent.values()) <= 1  # the relay's copy of one just before the kill
    errors = [line for i in range(2) for line in cluster.log(i, whole=True).splitlines()
              if " ERROR " in line or "Traceback" in line]
    assert errors == []


@pytest.mark.slow
@pytest.mark.services
def test_two_moves_for_one_turn_at_two_workers_at_once(cluster_of, smtp_sink: SmtpSink) -> None:
    cluster: Cluster = cluster_of(2)
    cluster.start(0)
    cluster.start(1)
    table = Table(cluster, smtp_sink)
    table.answering = False  # the players act by hand here
    ann, bob = "ann@example.org", "bob@example.org"
    cluster.send(raw(new_mail(ann, SERVER, f"new alien-city with {bob}")), ann, SERVER)
    your_move = None
    deadline = time.monotonic() + 60
    while your_move is None:
        assert time.monotonic() < deadline, "the game did not start"
        for item in smtp_sink.messages[table.read:]:
            table.read += 1
            message, first = item.message, headline(item.message)
            if "invites you" in first:
                cluster.send(raw(reply_to(message, item.rcpt_tos[0], "accept")), item.rcpt_tos[0], SERVER)
            elif "Your move" in first:
                your_move, mover = message, item.rcpt_tos[0]
        time.sleep(0.05)
    [game] = cluster.store.list_games()
    state = replay_record(game.record)
    texts = table.player(mover).rng.sample([state.move_text(m) for m in state.legal_moves()], 2)
    answers = [raw(reply_to(your_move, mover, text)) for text in texts]
    barrier = threading.Barrier(2)

    def deliver(i: int) -> None:
        barrier.wait()
        cluster.send(answers[i], mover, SERVER, worker=i)

    threads = [threading.Thread(target=deliver, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    wait_quiet(cluster, table, 60)
    [game] = cluster.store.list_games()
    assert len(game.record["moves"]) == 1
    outcomes = sorted(m.outcome or "" for m in cluster.store.iter_inbound() if m.raw in answers)
    assert len(outcomes) == 2 and outcomes[0].startswith("applied ") and outcomes[1] == "move refused"
    to_mover = [parse(m.data) for m in smtp_sink.messages if m.rcpt_tos == [mover]]
    stale = [m for m in to_mover if headline(m).startswith("Not applied:")]
    assert len(stale) == 1 and "was meant for move 1, the game is at move 2" in headline(stale[0])

    # What an operator sees, from any machine that reaches the database.
    report = subprocess.run([sys.executable, "-m", "pbem.cli", "status", "-c", str(cluster.configs[0])],
                            capture_output=True, text=True, timeout=60)
    assert report.returncode == 0, report.stderr
    setup, *lines = report.stdout.splitlines()
    assert setup.startswith(f"Configuration: {cluster.configs[0]}; database: postgresql://")
    pids = {cluster.procs[0].pid, cluster.procs[1].pid}
    # first what the worker of this configuration says of itself, through its socket
    assert lines.pop(0) == f"this server (pid {cluster.procs[0].pid}): no faults"
    assert lines[0] == "workers: 2 alive"
    assert {int(line.split(" pid ")[1].split(":")[0]) for line in lines[1:3]} == pids
    for role in ("imap", "scheduler"):
        [holder] = [line for line in lines if line.startswith(f"{role} role: ")]
        assert int(holder.rsplit(" pid ", 1)[1]) in pids
    assert "inbound: 0 pending" in lines and "outbox: 0 waiting" in lines and "games: 1 active" in lines


def _host() -> str:
    import socket

    return socket.gethostname()


def _victim(cluster: Cluster, kills: list[tuple[int, list[str]]]) -> int:
    for role in ("imap", "scheduler")[len(kills):]:
        for i in cluster.alive():
            if any(w.startswith(f"{_host()}:{cluster.procs[i].pid}:") for w in cluster.holders(role, 5)):
                return i
    return len(kills) % 3


def _game_of(store, inbound_id: int) -> str:  # type: ignore[no-untyped-def]
    return store._db().value("SELECT game_id FROM inbound WHERE id = ?", (inbound_id,))


def _all_outbound(store):  # type: ignore[no-untyped-def]
    from pbem.store.sql import OUTBOUND_COLS, outbound_of

    return [outbound_of(r) for r in store._db().all(f"SELECT {OUTBOUND_COLS} FROM outbound")]
