"""How long ``pbem serve`` takes to resume after a fault of its surroundings ends, and what its log
says meanwhile (README "When things around pbem fail").

Each fault is made with the real program, as in tests/faults/, on a server with the default
settings: PostgreSQL stopped for a while (``--outage`` seconds), the disk of a SQLite database
filled (a 4 MB tmpfs), the disk of the outbox Maildir filled, Dovecot restarted under IMAP IDLE, the
relay answering 421. Measured from the moment the fault ends (the database started, the filler
file removed, Dovecot started, the relay taking mail): until a mail sent again every 0.1 s (as an
impatient MTA would) is accepted, and until its reply (or the reply that waited) is out. Needs
root (tmpfs), PostgreSQL and Dovecot (``make services``). Runs about two minutes.

    .venv/bin/python bench/faults.py [--runs 3] [--outage 5]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

if not __package__:  # run as a script: see bench/__init__.py
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.e2e.conftest import raw
from tests.faults import Served, fill, help_mail, replied_to, smtp_send, tmpfs
from tests.services.dovecot import Dovecot
from tests.services.postgres import Postgres
from tests.services.requirements import free_port
from tests.services.smtp_sink import SmtpSink

_counter = iter(range(10**6))


def until(predicate: Callable[[], object], timeout: float = 120.0, step: float = 0.02) -> float:
    """Seconds until ``predicate()`` holds."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout:
            raise RuntimeError("timed out")
        time.sleep(step)
    return time.monotonic() - started


def accepted_and_answered(port: int, sink: SmtpSink) -> tuple[float, float]:
    """Send a mail again every 0.1 s until it is taken; seconds until taken and until answered."""
    started = time.monotonic()
    message = help_mail(next(_counter))
    while smtp_send(port, message)[0] != 250:
        time.sleep(0.1)
    taken = time.monotonic() - started
    until(lambda: replied_to(sink.messages, message))
    return taken, time.monotonic() - started


def config_text(data: Path, port: int | None, sink: SmtpSink | None, extra: str = "") -> str:
    text = f'[server]\ndata_dir = "{data}"\n{extra}'
    text += f"[smtp]\nport = {port}\n" if port else "[smtp]\nenabled = false\n"
    if sink is not None:
        text += f'[relay]\nhost = "{sink.host}"\nport = {sink.port}\nsecurity = "none"\n'
    return text


@contextlib.contextmanager
def served(tmp: Path, text: str, port: int | None) -> Iterator[Served]:
    config = tmp / "pbem.toml"
    config.write_text(text)
    server = Served(config, tmp / f"serve-{time.monotonic_ns()}.log", port)
    try:
        yield server
    finally:
        server.stop()


def log_summary(server: Served) -> str:
    log = server.log()
    return (f"{len(server.fault_lines())} fault lines, {log.count(' ERROR ')} ERROR, "
            f"{log.count('Traceback')} tracebacks, {len(log.splitlines())} lines in all")


def postgres_outage(tmp: Path, outage: float) -> tuple[float, float, str]:
    with Postgres(durable=True) as database, SmtpSink() as sink:
        dsn = database.create_database("bench")
        port = free_port()
        with served(tmp, config_text(tmp / "data", port, sink, f'database = "{dsn}"\n'),
                    port) as server:
            accepted_and_answered(port, sink)
            database.stop()
            time.sleep(outage)
            database.start()
            taken, answered = accepted_and_answered(port, sink)
        return taken, answered, log_summary(server)


def sqlite_disk_full(tmp: Path) -> tuple[float, float, str]:
    with tmpfs() as disk, SmtpSink() as sink:
        port = free_port()
        with served(tmp, config_text(disk / "data", port, sink), port) as server:
            accepted_and_answered(port, sink)
            filler = fill(disk)
            until(lambda: smtp_send(port, help_mail(next(_counter)))[0] != 250, 30, 0.1)
            time.sleep(2)
            filler.unlink()
            taken, answered = accepted_and_answered(port, sink)
        return taken, answered, log_summary(server)


def outbox_disk_full(tmp: Path) -> tuple[float, float, str]:
    with tmpfs() as disk:
        port = free_port()
        extra = f'database = "{tmp / "outside.sqlite3"}"\n'
        outbox = disk / "data" / "outbox" / "new"

        def written() -> int:
            return len(list(outbox.iterdir())) if outbox.is_dir() else 0

        with served(tmp, config_text(disk / "data", port, None, extra), port) as server:
            smtp_send(port, help_mail(next(_counter)))
            until(lambda: written() == 1)
            filler = fill(disk)
            smtp_send(port, help_mail(next(_counter)))
            until(server.fault_lines)
            time.sleep(2)
            filler.unlink()
            waited = until(lambda: written() == 2)
        (tmp / "outside.sqlite3").unlink()
        return 0.0, waited, log_summary(server)


def dovecot_restart(tmp: Path) -> tuple[float, float, str]:
    with Dovecot() as dovecot, SmtpSink() as sink:
        dovecot.add_user("bench", "pw")
        imap = (f'[imap]\nhost = "{dovecot.host}"\nport = {dovecot.port}\nsecurity = "none"\n'
                'username = "bench"\npassword = "pw"\n')
        text = config_text(tmp / "data", None, sink) + imap
        with served(tmp, text, None) as server:
            first = help_mail(next(_counter))
            dovecot.deliver("bench", raw(first))
            until(lambda: replied_to(sink.messages, first))
            dovecot.stop()
            time.sleep(2)
            dovecot.start()
            started = time.monotonic()
            message = help_mail(next(_counter))
            dovecot.deliver("bench", raw(message))
            until(lambda: replied_to(sink.messages, message))
            answered = time.monotonic() - started
        return 0.0, answered, log_summary(server)


def relay_421(tmp: Path) -> tuple[float, float, str]:
    with SmtpSink() as sink:
        port = free_port()
        with served(tmp, config_text(tmp / "data", port, sink), port) as server:
            sink.reject_reply = "421 4.3.2 Service shutting down, closing transmission channel"
            sink.reject_all = True
            message = help_mail(next(_counter))
            smtp_send(port, message)
            until(server.fault_lines)
            time.sleep(2)
            sink.reject_all = False
            answered = until(lambda: replied_to(sink.messages, message))
        return 0.0, answered, log_summary(server)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--outage", type=float, default=5.0, help="seconds PostgreSQL is away")
    args = parser.parse_args()
    cases: list[tuple[str, Callable[[Path], tuple[float, float, str]]]] = [
        (f"PostgreSQL away {args.outage:g} s", lambda tmp: postgres_outage(tmp, args.outage)),
        ("SQLite's disk full, then freed", sqlite_disk_full),
        ("the outbox Maildir's disk full, then freed", outbox_disk_full),
        ("Dovecot restarted under IDLE", dovecot_restart),
        ("the relay answering 421 (probe_seconds 30)", relay_421),
    ]
    for name, case in cases:
        taken, answered, summary = [], [], ""
        for _ in range(args.runs if "relay" not in name else 1):
            with tempfile.TemporaryDirectory(prefix="pbem-bench-faults-") as tmp:
                t, a, summary = case(Path(tmp))
            taken.append(t)
            answered.append(a)
        took = (f"taken again after {statistics.median(taken):.2f} s (max {max(taken):.2f}), "
                if any(taken) else "")
        print(f"{name}: {took}answered after {statistics.median(answered):.2f} s "
              f"(max {max(answered):.2f}); last run's log: {summary}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
