"""Planned mails become outbox rows, inside the caller's transaction.

The one place that decides, per recipient, whether a mail goes out now, waits for the daily digest
or is not sent (their notification level), and that sets a game mail's subject (one per game),
its threading headers, its tokened Reply-To, the footer, the one-tap links and the attachment. The
processor, the scheduler and ``pbem admin`` all queue through it, so every mail of a game looks
alike and threads alike.

Threading is per recipient: each mail's In-Reply-To is the last mail of the game that this
recipient received (or the mail of theirs it answers), and References start at the first one, so
every client shows one unbroken thread made of mails the reader actually has.
"""

from __future__ import annotations

from datetime import datetime

from engine import State
from pbem.config import Config
from pbem.i18n import _, language, speaking_to
from pbem.outbox.compose import MailDraft, build_message, mailto_links, new_message_id
from pbem.processing import hooks
from pbem.processing.computer import is_computer
from pbem.processing.context import REPLY, MailContext, PlannedMail
from pbem.processing.gamemail import footer, game_names, record_attachment, thread_subject
from pbem.processing.preferences import Preferences
from pbem.reading.addresses import plus_address
from pbem.store.base import GameRow, Tx
from pbem.tokens import address_token, seat_token

REFERENCES_KEPT = 10  # of an answered mail's References; clients need the root and the recent ones
TOKENS_KEPT = 4096  # seat tokens remembered (a few hundred bytes each)


class Outgoing:
    def __init__(self, config: Config, secret: bytes):
        self.config = config
        self.secret = secret
        self.domain = config.address.rsplit("@", 1)[1]
        self._tokens: dict[tuple[str, str, int], str] = {}

    def token_for(self, game_id: str, seat: str, record: dict | None = None) -> str:
        """The seat's current token. Its generation is raised when a moderator replaces the player
        (``record["players"][seat]["token_generation"]``), which makes the old token worthless.
        Kept per seat and generation (the secret is this object's): an HMAC per mail was a twentieth
        of composing it."""
        generation = 0
        if record is not None:
            generation = int((record.get("players") or {}).get(seat, {}).get("token_generation", 0))
        key = (game_id, seat, generation)
        token = self._tokens.get(key)
        if token is None:
            if len(self._tokens) >= TOKENS_KEPT:
                self._tokens.clear()
            token = self._tokens[key] = seat_token(self.secret, game_id, seat, generation)
        return token

    def reply_address(self, row: GameRow | None, seat: str | None, to: str,
                      state: State | None = None) -> str:
        """Where the recipient's reply goes: the seat's tokened address, which authenticates a move,
        keyed with the move number when the seat is to move (see ``games.reply_key``); else the
        address token of the recipient, which proves only that they read that mailbox."""
        if row is None or seat is None:
            return plus_address(self.config.address, address_token(self.secret, to))
        tag = self.token_for(row.id, seat, row.record)
        if state is not None and not state.is_over and state.to_move == seat and row.status == "active":
            tag += f"-{state.ply + 1}"
        return plus_address(self.config.address, tag)

    # --- one mail ----------------------------------------------------------------------------------
    def deliver(self, tx: Tx, planned: PlannedMail, row: GameRow | None, state: State | None,
                now: datetime) -> str:
        """Queue, hold for the digest or drop the mail, as its recipient chose; returns which. A
        computer seat gets no mail at all (it reads the game from the store)."""
        if is_computer(planned.to):
            return "computer"
        prefs = Preferences.from_settings(tx.get_player(planned.to))
        decision = prefs.delivery(planned.kind, observer=planned.observer)
        if decision == "digest":
            tx.hold_for_digest(planned.to, planned.game_id, planned.headline, now)
        elif decision == "now":
            # the footer, the subject, the template: in the reader's language; the answer to a mail
            # from someone who chose none, in the one their mail's headers asked for
            default = language() if planned.answering is not None else self.config.language
            with speaking_to(tx, planned.to, default):
                mail = self.compose(tx, planned, row, state, now, prefs)
                raw = mail.to_bytes()
            tx.queue_outbound(message_id=mail.message_id, sender=self.config.address,
                              recipients=[planned.to], raw=raw, now=now)
        return decision

    def compose(self, tx: Tx, planned: PlannedMail, row: GameRow | None, state: State | None,
                now: datetime, prefs: Preferences | None = None) -> MailDraft:
        prefs = prefs or Preferences.from_settings(tx.get_player(planned.to))
        reply_to = self.reply_address(row, planned.seat, planned.to, state)
        ply = len([e for e in row.record["moves"] if "move" in e]) if row else None
        message_id = new_message_id(self.domain, row.id if row else "",
                                    f"p{ply}" if row else "", planned.seat or "")
        if row is not None:
            subject = planned.subject or thread_subject(row, game_names(tx, row))
        else:
            subject = planned.subject or "[pbem] " + _("Your commands")
        in_reply_to, references = self._thread(tx, planned, row, message_id)
        attachments = [record_attachment(row)] if row is not None and planned.attach_record else []
        lines = footer(row, state, planned.seat, self.config.address, observer=planned.observer,
                       attached=bool(attachments), moves_shown=any(s.legal for s in planned.sections))
        sections = planned.sections
        if row is not None and hooks.GAME_MAIL:  # e.g. the reader's own notes on the game
            sections = [*sections, *(extra for hook in hooks.GAME_MAIL for extra in hook(tx, planned, row))]
        return build_message(
            from_addr=self.config.address, from_name=self.config.name, to=planned.to,
            subject=subject, message_id=message_id, date=now, headline=planned.headline,
            reply_to=reply_to,
            in_reply_to=in_reply_to, references=references,
            auto_submitted="auto-replied" if planned.kind == REPLY else planned.auto_submitted,
            sections=sections, footer=lines, attachments=attachments,
            mailto=mailto_links(reply_to, subject), html=prefs.html, taps=prefs.taps,
            extra_headers={"Content-Language": language(),
                           **({"X-Pbem-Game": row.id, "X-Pbem-Ply": str(ply)} if row else {})})

    def _thread(self, tx: Tx, planned: PlannedMail, row: GameRow | None, message_id: str
                ) -> tuple[str | None, list[str]]:
        """In-Reply-To and References for this recipient; remembers this mail as their latest."""
        answering = None if planned.own_thread else planned.answering
        root = last = None
        if row is not None:
            root, last = tx.mail_thread(row.id, planned.to) or (None, None)
            tx.set_mail_thread(row.id, planned.to, root or message_id, message_id)
        if answering is not None and answering.message_id:
            references = [*answering.references[-REFERENCES_KEPT:], answering.message_id]
            if root and root not in references:
                references.insert(0, root)
            return answering.message_id, references
        return last, [ref for ref in dict.fromkeys([root, last]) if ref]

    # --- a processed mail's plans ------------------------------------------------------------------
    def queue_planned(self, ctx: MailContext) -> None:
        """Every mail the context planned, each as its recipient chose."""
        for planned in ctx.planned:
            row, state = ctx.touched.get(planned.game_id or "", (None, None))
            self.deliver(ctx.tx, planned, row, state, ctx.now)
