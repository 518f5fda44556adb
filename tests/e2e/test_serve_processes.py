"""``pbem serve`` runs the processor in a process of its own (or several, each with its share of
the games: ``[server] processors``): replies flow, SIGTERM stops them all, and a processor
that dies makes the server exit non-zero (for systemd to restart it)."""

from __future__ import annotations

import os
import signal
import smtplib
import subprocess
import sys
import time
from pathlib import Path

import pytest

from pbem.cli.mailbox import new_mail
from tests.e2e.conftest import raw
from tests.services.requirements import free_port, wait_for_port

REPO = Path(__file__).resolve().parents[2]


def children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.fixture
def serve(tmp_path: Path, smtp_sink, request):
    port = free_port()
    config = tmp_path / "pbem.toml"
    extra = getattr(request, "param", "")
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n{extra}[smtp]\nport = {port}\n'
                      f'[relay]\nhost = "{smtp_sink.host}"\nport = {smtp_sink.port}\nsecurity = "none"\n')
    process = subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "-c", str(config)],
                               env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for_port("127.0.0.1", port, timeout=30), process.stderr.read1().decode()
    yield process, port
    if process.poll() is None:
        process.kill()
        process.wait()


@pytest.mark.parametrize(("serve", "processors"), [("", 1), ("processors = 2\n", 2),
                                                   ("processors = 3\n", 3)], indirect=["serve"])
def test_replies_flow_and_sigterm_stops_every_process(serve, smtp_sink, processors: int) -> None:
    process, port = serve
    workers = children(process.pid)
    assert len(workers) == processors, "processor processes"
    players = [(f"ann{n}@example.org", f"bo{n}@example.org") for n in range(6)]
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        for ann, bo in players:  # games of every share
            smtp.sendmail(ann, ["pbem@localhost"], raw(new_mail(ann, "pbem@localhost",
                                                                f"new alien-city with {bo}")))
    received = smtp_sink.wait_for(2 * len(players), timeout=30)
    time.sleep(0.5)  # anything sent twice would arrive now
    assert sorted(m.rcpt_tos[0] for m in smtp_sink.messages) == sorted(a for pair in players for a in pair)
    assert len(received) == 2 * len(players)
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    time.sleep(0.2)
    for worker in workers:
        assert not Path(f"/proc/{worker}").exists() or \
            "Z" in Path(f"/proc/{worker}/stat").read_text().split()[2], "processor left running"


def test_a_dead_processor_stops_the_server_with_exit_1(serve) -> None:
    process, _port = serve
    worker = children(process.pid)[-1]
    os.kill(worker, signal.SIGKILL)
    assert process.wait(30) == 1
    assert b"processor process died" in process.stderr.read()
