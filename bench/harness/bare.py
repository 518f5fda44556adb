"""The bare transport: what the same mail path costs with no game server in it.

An SMTP listener (aiosmtpd's stock session, as the issue that set the goal measured it) that relays
every message it accepts to the sink over one kept SMTP connection (as pbem's sender does). One mail
in, one mail out, nothing stored or read: the rate the benchmark's load generator, the sink and the
machine allow, against which a server's rate is put ("pbem reaches N % of the bare transport in the
same run"). ``lean=True`` runs pbem's own session instead (``bench/harness/lean.py``): DATA in one
buffer, a plain address without the header grammar; on 27 Nov 2026 that made the bare transport
1.4-1.5 times as fast (1,600 instead of 1,100 moves/s), a ceiling pbem's listener could reach with
nothing to store.
"""

from __future__ import annotations

import multiprocessing
import queue
import smtplib
import threading
from typing import Any


def _serve(port: int, relay: tuple[str, int], ready: Any, lean: bool) -> None:
    from aiosmtpd.controller import Controller

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
    controller = (LeanController if lean else Controller)(Handler(), hostname="127.0.0.1", port=port,
                                                          decode_data=False)
    controller.start()
    ready.set()
    threading.Event().wait()


class BareTransport:
    def __init__(self, port: int, relay: tuple[str, int], lean: bool = False) -> None:
        context = multiprocessing.get_context("spawn")
        ready = context.Event()
        self.process = context.Process(target=_serve, args=(port, relay, ready, lean), daemon=True)
        self.process.start()
        if not ready.wait(30):
            raise RuntimeError("the bare transport did not start")

    def stop(self) -> None:
        self.process.kill()
        self.process.join()
