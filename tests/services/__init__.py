"""Real services for the test suite: Dovecot (IMAP), PostgreSQL and an aiosmtpd SMTP sink.

The project tests against real components, never mocks. The fixtures in ``tests/conftest.py``
start these on loopback ports in temporary directories; a missing service skips the test, or
fails it when ``CI=true``. See ``requirements.py`` for that policy.
"""
