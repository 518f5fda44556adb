"""A fuzz run against a real ``pbem serve``, shared by ``tests/e2e/test_fuzz_mail.py`` (which
asserts) and ``bench/fuzz_mail.py`` (which measures).

Seeds: the mail-client corpus, the reading tests' fixtures, the bounce and auto-reply fixtures,
and players' replies (plain and HTML) to real board mails; every seed's sender is given a game
first, so that the server's answers to them are ordinary replies to players. Those seeds are
mutated by ``tests.e2e.mutations``, and the mails built to cost the most the limits allow come
too. Half the mails go through the SMTP listener, half through ``pbem deliver`` (in-process, the
same function the command runs, plus a few through the real command).
"""

from __future__ import annotations

import email.message
import email.parser
import email.policy
import email.utils
import io
import json
import os
import re
import signal
import smtplib
import sqlite3
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pbem.cli.mailbox import reply_to
from pbem.config import load_config
from pbem.doors.deliver import deliver
from pbem.processing.processor import Processor
from pbem.reading.incoming import read_mail
from pbem.store import open_store
from tests.e2e.mutations import hostile, mutated
from tests.mail import test_reading, test_reading_fuzz
from tests.server.players import Player, parse
from tests.services.requirements import free_port, wait_for_port
from tests.transport.automatic_fixtures import FIXTURES, render

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "mail-corpus" / "replies"
SERVER = "pbem@localhost"
HOSTILE_SENDER = "fuzz@example.org"  # the sender of mutations.hostile(): a player too
_READ = re.compile(r" read_ms=([0-9.]+) ms=([0-9.]+)$")


def from_address(raw: bytes) -> str | None:
    head = raw.partition(b"\n\n")[0].partition(b"\r\n\r\n")[0]
    for line in head.decode("utf-8", "replace").splitlines():
        if line.lower().startswith("from:"):
            return email.utils.parseaddr(line[5:])[1].lower() or None
    return None


def envelope_sender(raw: bytes) -> str:
    """The mail's own sender as MAIL FROM when it is a plain address, else the null sender."""
    address = from_address(raw) or ""
    plain = re.fullmatch(r"[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(\.[A-Za-z0-9-]{1,63}){1,4}", address)
    return address if plain else "<>"


def headers(raw: bytes) -> email.message.Message:
    """A mail's header block, split into fields as a receiving MTA would."""
    return email.parser.BytesHeaderParser(policy=email.policy.compat32).parsebytes(raw)


def vm_hwm(pid: int) -> float:
    """Peak resident memory of a process, MB (VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except (OSError, ValueError):
                continue
    return found


class _Borrowed:
    """One store lent to each in-process ``deliver`` call, which closes what it is given: opening
    a store per mail would only measure SQLite's start-up."""

    def __init__(self, store) -> None:
        self.store = store

    def __getattr__(self, name: str):
        return getattr(self.store, name)

    def close(self) -> None:
        pass


@dataclass
class FuzzResult:
    mails: int
    by_smtp: int
    by_deliver: int
    seconds: float
    statuses: dict[str, int]
    replies: list[tuple[list[str], bytes]]  # (recipients, raw) of every outbound mail
    answered: dict[str, tuple[str, bytes]]  # inbound Message-ID -> (outcome, start of the raw)
    refused: list[str]  # SMTP refusals ("552" for over the size limit)
    deliver_codes: list[int]
    reads_ms: list[float]  # reading CPU per processed message, from the server's log
    peak_mb: dict[str, float]  # VmHWM of the listener and the processor process
    log: str
    seats: set[str] = field(default_factory=set)


class FuzzRun:
    def __init__(self, folder: Path, count: int, seed: int = 14) -> None:
        self.folder = folder
        self.count = count
        self.seed = seed
        self.port = free_port()
        self.data = folder / "data"
        self.config_file = folder / "pbem.toml"
        self.config_file.write_text(f'[server]\ndata_dir = "{self.data}"\n[smtp]\nport = {self.port}\n'
                                    "[limits]\nsender_messages_per_minute = 0\n")
        self.config = load_config(self.config_file)
        self.config.data_dir.mkdir(parents=True, exist_ok=True)

    # --- seeds ------------------------------------------------------------------------------------

    def seeds(self) -> tuple[list[bytes], set[str]]:
        """The seeds, and the addresses that hold seats: every seed's sender gets a game."""
        corpus = [p.read_bytes() for p in sorted(CORPUS.glob("*.eml"))]
        fixtures = [test_reading.SIGNED, test_reading.DSN, test_reading_fuzz.SEED]
        automatic = [render(t, SERVER, n) for n, t in enumerate(FIXTURES.values())]
        people = [raw for raw in corpus + fixtures if read_mail(raw).auto is None]
        senders = sorted({a for a in map(from_address, people) if a and "@" in a} | {HOSTILE_SENDER})
        store = open_store(self.config.database_url)
        processor = Processor(self.config, store)  # the secret of data_dir/secret.key: the server's
        taken: set[int] = set()

        def new_mail_to(address: str) -> email.message.EmailMessage:
            rows = [r for r in store.due_outbound(datetime(2100, 1, 1, tzinfo=UTC)) if r.id not in taken]
            taken.update(r.id for r in rows)
            return [parse(r.raw) for r in rows if r.recipients == [address]][-1]

        def submit(raw: bytes) -> None:
            store.accept_inbound(raw, "cli", processor.clock.now())
            processor.process_pending()

        replies: list[bytes] = []
        pairs = list(zip(senders[0::2], [*senders[1::2], "partner@example.org"], strict=False))
        for alice, bob in pairs:
            submit((f"From: {alice}\r\nTo: {SERVER}\r\nSubject: setup\r\nMessage-ID: <setup.{alice}>"
                    f"\r\n\r\nnew alien-city with {bob} as black\r\n").encode())
            submit(reply_to(new_mail_to(bob), bob, "accept").as_bytes())
            board = new_mail_to(alice)
            move = Player(alice, 1).choose_move(board)
            replies.append(reply_to(board, alice, move).as_bytes())
            html = reply_to(board, alice, move)
            html.add_alternative(f"<div>{move}</div><div class=gmail_quote>quoted board</div>",
                                 subtype="html")
            replies.append(html.as_bytes())
        store.close()
        return corpus + fixtures + automatic + replies, {a for pair in pairs for a in pair}

    # --- the run ----------------------------------------------------------------------------------

    def run(self, heavy: list[bytes] | None = None, timeout: float = 600) -> FuzzResult:
        seeds, seats = self.seeds()
        mails = list(mutated(seeds, self.count, heavy=hostile() if heavy is None else heavy,
                             seed=self.seed))
        log_path = self.folder / "serve.log"
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        started = time.monotonic()
        refused: list[str] = []
        with log_path.open("wb") as log:
            command = [sys.executable, "-m", "pbem.cli", "serve", "-c", str(self.config_file)]
            server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
            try:
                if not wait_for_port("127.0.0.1", self.port, timeout=30):
                    raise RuntimeError(log_path.read_text())
                by_smtp = mails[0::2]
                threads = [threading.Thread(target=self._smtp, args=(by_smtp[i::3], refused))
                           for i in range(3)]
                for thread in threads:
                    thread.start()
                lent = _Borrowed(open_store(self.config.database_url))
                codes = [deliver(self.config, raw, lambda: lent, stderr=io.StringIO())
                         for raw in mails[1::2][20:]]
                lent.store.close()
                for raw in mails[1::2][:20]:  # and a few through the real command, as a pipe runs it
                    codes.append(subprocess.run(
                        [sys.executable, "-m", "pbem.cli", "deliver", "-c", str(self.config_file)],
                        input=raw, capture_output=True, timeout=60, env=env).returncode)
                for thread in threads:
                    thread.join()
                db = self.data / "pbem.sqlite3"
                deadline = time.monotonic() + timeout
                while time.monotonic() < deadline and self._busy(db):
                    time.sleep(0.2)
                seconds = time.monotonic() - started
                peak = {"listener": vm_hwm(server.pid),
                        "processor": max((vm_hwm(pid) for pid in children(server.pid)), default=0.0)}
            finally:
                server.send_signal(signal.SIGTERM)
                server.wait(30)
        text = log_path.read_text(errors="replace")
        with sqlite3.connect(db) as conn:
            statuses = dict(conn.execute("SELECT status, COUNT(*) FROM inbound GROUP BY status").fetchall())
            replies = [(json.loads(r[0]), bytes(r[1]))
                       for r in conn.execute("SELECT recipients, raw FROM outbound")]
            answered = {r[0]: (r[1], bytes(r[2])[:400])
                        for r in conn.execute("SELECT message_id, outcome, raw FROM inbound")}
        reads = [float(m.group(1)) for line in text.splitlines() if (m := _READ.search(line))]
        return FuzzResult(mails=len(mails), by_smtp=len(by_smtp), by_deliver=len(codes), seconds=seconds,
                          statuses=statuses, replies=replies, answered=answered, refused=refused,
                          deliver_codes=codes, reads_ms=reads, peak_mb=peak, log=text, seats=seats)

    def _smtp(self, mails: list[bytes], refused: list[str]) -> None:
        """Every mail in one session (a new one after the server ended one); refusals counted."""
        smtp: smtplib.SMTP | None = None
        try:
            for data in mails:
                try:
                    if smtp is None:
                        smtp = smtplib.SMTP("127.0.0.1", self.port, timeout=120)
                    smtp.sendmail(envelope_sender(data), [SERVER], data)
                except smtplib.SMTPResponseException as exc:  # 552: over the size limit
                    code = exc.smtp_code
                    refused.append("552" if code == 552 else f"{code} {exc.smtp_error[:80]!r}")
                except (smtplib.SMTPServerDisconnected, OSError) as exc:
                    refused.append(type(exc).__name__)
                    smtp = None
        finally:
            if smtp is not None:
                smtp.quit()

    @staticmethod
    def _busy(db: Path) -> bool:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            pending = conn.execute("SELECT COUNT(*) FROM inbound WHERE status = 'pending'").fetchone()[0]
            unsent = conn.execute("SELECT COUNT(*) FROM outbound WHERE sent_at IS NULL"
                                  " AND given_up_at IS NULL").fetchone()[0]
        return bool(pending or unsent)
