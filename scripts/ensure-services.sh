#!/usr/bin/env bash
# Installs the real servers the test suite starts for itself: Dovecot with its IMAP and LMTP servers
# (dovecot-imapd, dovecot-lmtpd), Postfix, PostgreSQL 15, Chromium (headless, for the archive site)
# and systemd's systemd-analyze (the deploy tests verify the units in deploy/), and libfaketime
# (faketime: tests/faults/test_clock_step.py steps the wall clock of a real pbem serve back).
# Nothing is started here: the harness in tests/services/ runs private throw-away instances on
# free loopback ports, as the unprivileged user pbemtest (Postfix: its own config, queue and data
# directories).
#
# Called by `make test` (as root on CI machines). Idempotent; when everything is present it does
# no apt work at all. Without root it only reports what is missing: the tests that need a
# missing service then skip, or fail under CI=true (so this script fails early there too).
set -euo pipefail

PG_MAJOR=15
TEST_USER=pbemtest

have_dovecot() {
  # dovecot-core alone has no IMAP server; dovecot-imapd adds libexec/dovecot/imap.
  { command -v dovecot >/dev/null 2>&1 || [ -x /usr/sbin/dovecot ]; } &&
    { command -v doveadm >/dev/null 2>&1 || [ -x /usr/bin/doveadm ]; } &&
    { [ -x /usr/lib/dovecot/imap ] || [ -x /usr/libexec/dovecot/imap ]; }
}

have_lmtp() {
  [ -x /usr/lib/dovecot/lmtp ] || [ -x /usr/libexec/dovecot/lmtp ]
}

have_postfix() {
  # The pipe and virtual delivery agents are part of the postfix package itself.
  [ -x /usr/sbin/postfix ] && [ -x /usr/sbin/postmap ] &&
    { [ -x /usr/lib/postfix/sbin/pipe ] || [ -x /usr/libexec/postfix/pipe ]; }
}

have_postgres() {
  [ -x "/usr/lib/postgresql/${PG_MAJOR}/bin/initdb" ] && [ -x "/usr/lib/postgresql/${PG_MAJOR}/bin/pg_ctl" ]
}

missing() {
  need=()
  have_dovecot || need+=(dovecot-imapd)
  have_lmtp || need+=(dovecot-lmtpd)
  [ -n "${skip_postfix:-}" ] || have_postfix || need+=(postfix)
  command -v systemd-analyze >/dev/null 2>&1 || need+=(systemd)
  have_postgres || need+=("postgresql-${PG_MAJOR}")
  # Headless Chromium opens the static archive site in tests/archive.
  command -v chromium >/dev/null 2>&1 || need+=(chromium)
  # libfaketime steps the wall clock of a real pbem serve in tests/faults/test_clock_step.py.
  compgen -G '/usr/lib/*/faketime/libfaketimeMT.so.1' >/dev/null || need+=(faketime)
}

is_root() { [ "$(id -u)" -eq 0 ]; }

# The harness would create the user itself; doing it here keeps the first test run quiet.
if is_root && ! id -u "$TEST_USER" >/dev/null 2>&1; then
  useradd -r -U -M -d /nonexistent -s /usr/sbin/nologin "$TEST_USER" 2>/dev/null ||
    id -u "$TEST_USER" >/dev/null 2>&1 # created concurrently by a test run: fine
fi

missing
if [ ${#need[@]} -eq 0 ]; then
  exit 0
fi

give_up() {
  if [ "${CI:-}" = "true" ]; then
    echo "ensure-services: $1 (CI=true: the service tests cannot run, failing now)" >&2
    exit 1
  fi
  echo "ensure-services: $1; the tests that need them will skip" >&2
  exit 0
}

# Installing Postfix would remove another MTA (exim4, sendmail) that the machine may rely on: leave
# it, and let the Postfix tests skip (or fail under CI=true) with this reason.
if printf '%s\n' "${need[@]}" | grep -qx postfix && [ -e /usr/sbin/sendmail ]; then
  echo "ensure-services: another mail server provides /usr/sbin/sendmail; not replacing it with" \
    "postfix (the Postfix deploy tests need it: apt-get install postfix)" >&2
  [ "${CI:-}" = "true" ] && exit 1
  skip_postfix=1
  missing
  [ ${#need[@]} -eq 0 ] && exit 0
fi

if ! is_root; then
  give_up "missing ${need[*]}; install them as root: apt-get install ${need[*]}"
fi
if ! command -v apt-get >/dev/null 2>&1; then
  give_up "missing ${need[*]} and no apt-get here to install them"
fi

echo "ensure-services: installing ${need[*]}"
export DEBIAN_FRONTEND=noninteractive

# Keep the packages' maintainer scripts from starting the system daemons: they are not used by the
# tests and would only hold ports 143/993/5432 and run a cluster for nothing. policy-rc.d is
# honoured by invoke-rc.d and deb-systemd-invoke; an existing one (containers have it) is kept.
policy=/usr/sbin/policy-rc.d
if [ ! -e "$policy" ]; then
  printf '#!/bin/sh\n# ensure-services.sh: no daemon starts during package installation\nexit 101\n' >"$policy"
  chmod 755 "$policy"
  trap 'rm -f "$policy"' EXIT
fi

# Postfix asks which kind of mail server this is: "No configuration" writes no /etc/postfix/main.cf,
# so the system Postfix cannot start (nothing holds port 25); the tests run their own instances.
if printf '%s\n' "${need[@]}" | grep -qx postfix; then
  echo "postfix postfix/main_mailer_type select No configuration" | debconf-set-selections
fi

apt_opts=(-o DPkg::Lock::Timeout=300 -qq)
apt-get "${apt_opts[@]}" update
apt-get "${apt_opts[@]}" install -y --no-install-recommends "${need[@]}" >/dev/null

# Whatever got started anyway (no policy-rc.d support) is stopped and kept from starting at boot.
# Only packages installed by this run are touched: a system instance someone runs on purpose is
# left alone (the tests never use or clash with it: own ports, own base_dir / data dir).
for pkg in "${need[@]}"; do
  case "$pkg" in
    dovecot-*) services=(dovecot) ;;
    postfix) services=(postfix) ;;
    postgresql-*) services=(postgresql) ;;
    *) services=() ;;
  esac
  for svc in "${services[@]}"; do
    if [ -d /run/systemd/system ]; then
      systemctl disable --now "$svc" >/dev/null 2>&1 || true
    else
      service "$svc" stop >/dev/null 2>&1 || true
      update-rc.d "$svc" disable >/dev/null 2>&1 || true
    fi
  done
done

missing
if [ ${#need[@]} -ne 0 ]; then
  echo "ensure-services: still missing after apt-get install: ${need[*]}" >&2
  exit 1
fi
echo "ensure-services: done"
