"""The SMTP session the benchmarks' own servers run: pbem's listener session (DATA read into one
buffer, a plain ``<local@domain>`` read without the header grammar), not aiosmtpd's stock one.

The relay sink and the bare transport stand for programs outside pbem (Postfix, say) on the same two
cores. aiosmtpd's stock session keeps each DATA line as an object of its own and parses every
address with the ``email`` header grammar: 0.6 ms of the benchmark's CPU for each 9.5 kB board mail
the sink took, CPU the server under test then lacked, and more for pbem's long replies than for the
bare transport's short mails. With pbem's session the instruments cost what pbem's own listener
costs for the same bytes, on both sides of the comparison.
"""

from __future__ import annotations

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP

from pbem.doors.smtp_listener import SmtpSession


class LeanController(Controller):
    """aiosmtpd's ``Controller`` serving pbem's ``SmtpSession``."""

    def factory(self) -> SMTP:
        return SmtpSession(self.handler, too_big="552 5.3.4 Message too big", **self.SMTP_kwargs)
