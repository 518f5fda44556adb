"""``pbem serve`` runs the processor in a process of its own: replies flow, SIGTERM stops both
processes, and a processor that dies makes the server exit non-zero (for systemd to restart it)."""

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
def serve(tmp_path: Path, smtp_sink):
    port = free_port()
    config = tmp_path / "pbem.toml"
    config.write_text(f'[server]\ndata_dir = "{tmp_path / "data"}"\n[smtp]\nport = {port}\n'
                      f'[relay]\nhost = "{smtp_sink.host}"\nport = {smtp_sink.port}\nsecurity = "none"\n')
    process = subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "-c", str(config)],
                               env={**os.environ, "PYTHONPATH": str(REPO)},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert wait_for_port("127.0.0.1", port, timeout=30), process.stderr.read1().decode()
    yield process, port
    if process.poll() is None:
        process.kill()
        process.wait()


def test_replies_flow_and_sigterm_stops_both_processes(serve, smtp_sink) -> None:
    process, port = serve
    workers = children(process.pid)
    assert len(workers) == 1, "one processor process"
    message = new_mail("ann@example.org", "pbem@localhost", "new alien-city with bo@example.org")
    with smtplib.SMTP("127.0.0.1", port, timeout=30) as smtp:
        smtp.sendmail("ann@example.org", ["pbem@localhost"], raw(message))
    received = smtp_sink.wait_for(2, timeout=30)
    assert sorted(m.rcpt_tos[0] for m in received) == ["ann@example.org", "bo@example.org"]
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0
    time.sleep(0.2)
    assert not Path(f"/proc/{workers[0]}").exists() or \
        "Z" in Path(f"/proc/{workers[0]}/stat").read_text().split()[2], "processor left running"


def test_a_dead_processor_stops_the_server_with_exit_1(serve) -> None:
    process, _port = serve
    (worker,) = children(process.pid)
    os.kill(worker, signal.SIGKILL)
    assert process.wait(30) == 1
    assert b"processor process died" in process.stderr.read()
