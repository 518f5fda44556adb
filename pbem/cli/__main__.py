"""``python -m pbem.cli``, as the tests and the systemd unit run it."""

import sys

from pbem.cli import main

sys.exit(main())
