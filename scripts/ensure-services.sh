#!/usr/bin/env bash
# Installs the real servers the test suite starts for itself (throw-away instances on loopback ports):
# Dovecot (IMAP) and PostgreSQL 15. Nothing is started here; the test harness starts and stops them.
set -euo pipefail
need=()
command -v dovecot >/dev/null 2>&1 || need+=(dovecot-imapd)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql-15)
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "ensure-services: missing ${need[*]}; install them as root (apt-get install ${need[*]}) or the tests that need them skip" >&2
  exit 0
fi
echo "ensure-services: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq "${need[@]}" >/dev/null
# The packaged system instances are not used by the tests; keep them from holding ports.
systemctl disable --now dovecot >/dev/null 2>&1 || service dovecot stop >/dev/null 2>&1 || true
