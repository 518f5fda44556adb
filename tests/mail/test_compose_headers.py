"""The header fast path of ``pbem.outbox.compose`` writes exactly what the stdlib would."""

from __future__ import annotations

import email.policy
import random
from email.message import Message

from pbem.outbox.compose import to_bytes

STDLIB = email.policy.compat32.clone(linesep="\r\n")


def test_headers_are_written_as_the_stdlib_folds_them() -> None:
    rng = random.Random(7)
    alphabet = "ab c\t=?_:;<>@.\"()'-xyz  é"
    for _ in range(300):
        message = Message()
        for name in ("Subject", "To", "X-Pbem-Game", "Message-ID", "References"):
            message[name] = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 120)))
        message.set_payload("body\r\n")
        assert to_bytes(message) == message.as_bytes(policy=STDLIB)
