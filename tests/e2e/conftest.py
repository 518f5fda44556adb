"""Shared pieces of the end-to-end tests: an in-process daemon on real services."""

from __future__ import annotations

import email.policy
from collections.abc import Callable, Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from pbem.config import Config, config_from_dict
from pbem.daemon.runner import Daemon
from pbem.processing.processor import Processor
from pbem.store import open_store


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


