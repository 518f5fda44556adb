"""Shared pieces of the end-to-end tests: an in-process daemon on real services."""

from __future__ import annotations

import contextlib
import email.policy
import smtplib
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.config import Config, config_from_dict
from pbem.daemon.runner import Daemon
from pbem.processing.processor import Processor
from pbem.store import open_store

REPO = Path(__file__).resolve().parents[2]


def serve(config_path: Path, failpoint: str | None, log: Path | None = None) -> subprocess.Popen:
    """``pbem serve`` in a process of its own, optionally with a failpoint (pbem/failpoints.py);
    its log goes to a pipe, or to the file ``log`` (a long run would fill the pipe)."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO)}
    if failpoint:
        env["PBEM_FAILPOINT"] = failpoint
    with open(log, "ab") if log is not None else contextlib.nullcontext(subprocess.PIPE) as err:
        return subprocess.Popen([sys.executable, "-m", "pbem.cli", "serve", "-c", str(config_path)],
                                env=env, stdout=subprocess.DEVNULL, stderr=err)


def serve_toml(tmp_path: Path, port: int, sink, extra: str = "") -> Path:
    """A pbem.toml for ``pbem serve`` in ``tmp_path``: the SMTP listener on ``port``, the relay
    ``sink``, and ``extra`` lines (``[server]`` settings come first, then the sections)."""
    path = tmp_path / "pbem.toml"
    server, _, sections = extra.partition("\n[")
    path.write_text(f"""
[server]
data_dir = "{tmp_path / 'data'}"
{server}
[smtp]
enabled = true
host = "127.0.0.1"
port = {port}
[relay]
host = "{sink.host}"
port = {sink.port}
security = "none"
""" + (f"[{sections}\n" if sections else ""))
    return path


def listening(port: int, process: subprocess.Popen) -> None:
    """Waits until ``pbem serve`` answers on its SMTP port (failing with its last words if it died)."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, process.stderr.read().decode()[-2000:]
        try:
            with smtplib.SMTP("127.0.0.1", port, timeout=5):
                return
        except OSError:
            time.sleep(0.1)
    raise AssertionError("pbem serve did not listen")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def relay(sink) -> dict:
    return {"host": sink.host, "port": sink.port, "security": "none"}


def raw(message: EmailMessage) -> bytes:
    return message.as_bytes(policy=email.policy.SMTP)


@pytest.fixture
def daemon_for(tmp_path: Path) -> Iterator[Callable[[dict], tuple[Config, Daemon]]]:
    started: list[tuple[Daemon, object]] = []

    def make(settings: dict) -> tuple[Config, Daemon]:
        settings.setdefault("server", {})["data_dir"] = str(tmp_path / "data")
        config = config_from_dict(settings)
        config.data_dir.mkdir(parents=True, exist_ok=True)
        store = open_store(config.database_url)
        daemon = Daemon(config, store, Processor(config, store), processor_poll_seconds=0.2)
        daemon.start()
        started.append((daemon, store))
        return config, daemon

    yield make
    for daemon, store in started:
        daemon.stop()
        store.close()


