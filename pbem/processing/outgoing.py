"""Planned mails become outbox rows, inside the caller's transaction.

The one place that sets a game mail's tokened Reply-To, its threading headers, the footer and the
record attachment, so that a reply to a player, a scheduler reminder and a moderator's notice look
alike and thread alike. The processor, the scheduler and ``pbem admin`` all queue through it.
"""

from __future__ import annotations

from datetime import datetime
from email.message import Message

from pbem.config import Config
from pbem.outbox.compose import build_message, new_message_id, to_bytes
from pbem.processing.context import MailContext, PlannedMail
from pbem.processing.gamemail import record_attachment, reply_footer
from pbem.reading.addresses import plus_address
from pbem.reading.incoming import IncomingMail
from pbem.store.base import GameRow, Tx
from pbem.tokens import seat_token


class Outgoing:
    def __init__(self, config: Config, secret: bytes):
        self.config = config
        self.secret = secret
        self.domain = config.address.rsplit("@", 1)[1]

    def token_for(self, game_id: str, seat: str, record: dict | None = None) -> str:
        """The seat's current token. Its generation is raised when a moderator replaces the player
        (``record["players"][seat]["token_generation"]``), which makes the old token worthless."""
        generation = 0
        if record is not None:
            generation = int((record.get("players") or {}).get(seat, {}).get("token_generation", 0))
        return seat_token(self.secret, game_id, seat, generation)

    def compose(self, planned: PlannedMail, row: GameRow | None, now: datetime,
                answering: IncomingMail | None = None) -> Message:
        reply_to = None
        if row is not None and planned.seat:
            reply_to = plus_address(self.config.address,
                                    self.token_for(row.id, planned.seat, row.record))
        ply = len([e for e in row.record["moves"] if "move" in e]) if row else None
        message_id = new_message_id(self.domain, row.id if row else "",
                                    f"p{ply}" if row else "", planned.seat or "")
        references: list[str] = []
        if row is not None:
            if not row.thread_id:
                row.thread_id = message_id
            else:
                references.append(row.thread_id)
        if answering is not None:
            references += [*answering.references, answering.message_id or ""]
        attachments = [record_attachment(row)] if row is not None and planned.attach_record else []
        footer = reply_footer(row.id if row else None, self.config.address,
                              row.status if row else None)
        return build_message(
            from_addr=self.config.address, from_name=self.config.name, to=planned.to,
            subject=planned.subject, message_id=message_id, date=now, reply_to=reply_to,
            in_reply_to=planned.in_reply_to, references=references,
            auto_submitted=planned.auto_submitted, intro=planned.intro, sections=planned.sections,
            footer=footer, attachments=attachments,
            extra_headers={"X-Pbem-Game": row.id, "X-Pbem-Ply": str(ply)} if row else None)

    def queue(self, tx: Tx, planned: PlannedMail, row: GameRow | None, now: datetime,
              answering: IncomingMail | None = None) -> None:
        message = self.compose(planned, row, now, answering)
        tx.queue_outbound(message_id=message["Message-ID"], sender=self.config.address,
                          recipients=[planned.to], raw=to_bytes(message), now=now)

    def queue_planned(self, ctx: MailContext) -> None:
        """Every mail the context planned, then the thread ids the first mails of new threads set."""
        for planned in ctx.planned:
            row = ctx.touched[planned.game_id][0] if planned.game_id in ctx.touched else None
            self.queue(ctx.tx, planned, row, ctx.now)
        for row, _state in ctx.touched.values():
            if row.thread_id and row.record.get("thread_id") != row.thread_id:
                row.record["thread_id"] = row.thread_id
                ctx.tx.save_game(row)
