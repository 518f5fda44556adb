"""A private Dovecot set up like Debian's, with the conf.d file of a deploy recipe as it is.

``Dovecot`` (dovecot.py) is a test server with users of its own; this one is the host an
administrator has: Debian's internal users (``dovecot``, ``dovenull``), the system's users in the
first passdb and userdb (PAM and passwd, as Debian's ``auth-system.conf.ext``), Debian's
``mail_location`` for them, IMAP and LMTP; then every ``conf.d/*.conf`` the recipe's commands put
into ``etc`` (the folder standing for /etc/dovecot). That file must bring its own user, mail
location and LMTP socket. Only paths change: ``/etc/dovecot/`` is ``etc``, and ``local_paths``
maps the rest (the private Postfix's queue directory for its LMTP socket).
"""

from __future__ import annotations

import grp
import os
import pwd
from collections.abc import Callable
from pathlib import Path

from .dovecot import Dovecot

_CONFIG = """\
# Written by tests/services/dovecot_lmtp.py: a private instance set up like Debian's.
instance_name = pbem-deploy-{port}
base_dir = {tmp}/run
state_dir = {tmp}/state
log_path = {tmp}/dovecot.log
protocols = imap lmtp
listen = {host}
ssl = no
auth_verbose = yes
default_internal_user = dovecot
default_internal_group = dovecot
default_login_user = dovenull
# The host's own users, as Debian's 10-mail.conf and auth-system.conf.ext have them.
mail_location = mbox:~/mail:INBOX=/var/mail/%u
passdb {{
  driver = pam
}}
userdb {{
  driver = passwd
}}
mailbox_idle_check_interval = 1 secs
service imap-login {{
  chroot =
  inet_listener imap {{
    address = {host}
    port = {port}
  }}
  inet_listener imaps {{
    port = 0
  }}
}}
service anvil {{
  chroot =
}}
!include_try {tmp}/conf.d/*.conf
"""


class LmtpDovecot(Dovecot):
    """``etc``: where the recipe put ``conf.d/*.conf`` and the files they name below /etc/dovecot;
    ``local_paths``: the test's paths for the other system paths in them."""

    def __init__(self, etc: Path, local_paths: Callable[[str], str], start_timeout: float = 10.0) -> None:
        self.etc = etc
        self._local_paths = local_paths
        super().__init__(start_timeout=start_timeout)

    def _write_config(self) -> None:
        # Debian's internal users must pass through to base_dir, as they pass through /run.
        self.tmp.chmod(0o755)
        folder = self.tmp / "conf.d"
        folder.mkdir(exist_ok=True)
        for conf in sorted((self.etc / "conf.d").glob("*.conf")):
            text = conf.read_text().replace("/etc/dovecot/", f"{self.etc}/")
            (folder / conf.name).write_text(self._local_paths(text))
        self.conf.write_text(_CONFIG.format(tmp=self.tmp, host=self.host, port=self.port))

    @staticmethod
    def owner(path: Path) -> tuple[str, str, int]:
        """(user, group, mode) of a file, e.g. the LMTP socket as Postfix finds it."""
        st = os.stat(path)
        return pwd.getpwuid(st.st_uid).pw_name, grp.getgrgid(st.st_gid).gr_name, st.st_mode & 0o777
