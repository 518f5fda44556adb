"""Mail through the real ``Processor`` in the benchmark's own process, on a manual clock: games set
up and played without the doors, for the scripts that time one part (``bench/processor_cpu.py``,
``bench/scheduler_load.py``)."""

from __future__ import annotations

import email.policy
from datetime import timedelta
from typing import Any

from tests.server.players import parse


class InProcess:
    """Stores mail as the intake would, processes it, and hands back what the outbox queued."""

    def __init__(self, store: Any, processor: Any, clock: Any) -> None:
        self.store, self.processor, self.clock = store, processor, clock

    def store_mail(self, messages: list[Any]) -> None:
        for message in messages:
            self.store.accept_inbound(message.as_bytes(policy=email.policy.SMTP), "bench", self.clock.now())

    def outbox(self) -> list[Any]:
        """Every queued reply, marked sent."""
        rows: list[Any] = []
        while batch := self.store.due_outbound(self.clock.now() + timedelta(days=3650), 1000):
            self.store.mark_sent_many([r.id for r in batch], self.clock.now())
            rows += batch
        return rows

    def submit(self, messages: list[Any]) -> list[tuple[str, Any]]:
        """Store and process these mails; the replies, as (recipient, parsed mail)."""
        self.store_mail(messages)
        while self.processor.process_pending(1000):
            pass
        return [(r.recipients[0], parse(r.raw)) for r in self.outbox()]
