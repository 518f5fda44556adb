"""Players as the tests drive them: people with a mail client who read the attached record, think
(a random legal move) and press Reply."""

from __future__ import annotations

import email
import email.policy
import json
import random
from email.message import EmailMessage

from pbem.cli.mailbox import reply_to
from pbem.record import replay_record


def parse(raw: bytes) -> EmailMessage:
    return email.message_from_bytes(raw, policy=email.policy.default)  # type: ignore[return-value]


def attached_record(message: EmailMessage) -> dict | None:
    for part in message.iter_attachments():
        if part.get_content_type() == "application/json":
            content = part.get_content()
            return json.loads(content if isinstance(content, str) else content.decode())
    return None


class Player:
    def __init__(self, address: str, seed: int = 0):
        self.address = address
        self.rng = random.Random(seed)
        self.inbox: list[EmailMessage] = []

    def receive(self, message: EmailMessage) -> None:
        self.inbox.append(message)

    def choose_move(self, message: EmailMessage) -> str:
        record = attached_record(message)
        assert record is not None, f"no record attached to {message['Subject']}"
        state = replay_record(record)
        return state.move_text(state.random_move(self.rng))

    def respond(self, message: EmailMessage) -> EmailMessage | None:
        """The reply a person would send to this mail, or None."""
        subject = str(message["Subject"])
        if "Invitation to" in subject:
            return reply_to(message, self.address, "accept")
        if "Your move" in subject:
            return reply_to(message, self.address, self.choose_move(message))
        return None
