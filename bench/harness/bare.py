"""The bare transport: what the same mail path costs with no game server in it.

An SMTP listener (aiosmtpd running pbem's own session, as pbem's listener does:
``bench/harness/lean.py``) that relays every message it accepts to the sink over one kept SMTP
connection (as pbem's sender does). One mail in, one mail out, nothing stored or read: the rate
the benchmark's load generator, the sink and the machine allow, against which a server's rate is put
("pbem reaches N % of the bare transport in the same run").
"""

from __future__ import annotations

import multiprocessing
import queue
import smtplib
import threading
from typing import Any


def _serve(port: int, relay: tuple[str, int], ready: Any) -> None:
    from bench.harness.lean import LeanController

    outbox: queue.Queue[tuple[str, list[str], bytes]] = queue.Queue()

    class Handler:
        async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
            outbox.put((envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content))
            return "250 OK"

    def relay_loop() -> None:
        smtp = smtplib.SMTP(*relay, timeout=60)
        while True:
            sender, rcpts, data = outbox.get()
            smtp.sendmail(sender, rcpts, data)

    threading.Thread(target=relay_loop, daemon=True).start()
    controller = LeanController(Handler(), hostname="127.0.0.1", port=port, decode_data=False)
    controller.start()
    ready.set()
    threading.Event().wait()


class BareTransport:
    def __init__(self, port: int, relay: tuple[str, int]) -> None:
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        self.process = context.Process(target=_serve, args=(port, relay, ready), daemon=True)
        self.process.start()
        if not ready.wait(30):
            raise RuntimeError("the bare transport did not start")

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
