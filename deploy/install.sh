#!/usr/bin/env bash
# Installs the pbem server for a service user, as root; safe to run again (to upgrade, or after
# changing nothing at all).
#
#   deploy/install.sh --address pbem@games.example.org [--door pipe|dovecot]
#
# What it does, each step only when it is not done yet:
#   1. creates the system user (default pbem) that runs `pbem serve` and Postfix's pipe;
#   2. finds a Python >= 3.11 that this user can run (a system one: /usr/bin/python3.X first; a
#      pyenv or venv under a home folder such as /root is refused, as the user cannot enter it);
#   3. makes the venv PREFIX/venv with it (root-owned: the service cannot change its own code) and
#      installs pbem from SOURCE into it (again on every run: that is the upgrade);
#   4. creates DATA_DIR (the user's, 0750) and CONFIG_DIR (root:user, 0750), and writes
#      CONFIG_DIR/pbem.toml (root:user, 0640) for the chosen door when there is none; for the
#      Dovecot door also CONFIG_DIR/imap-password, a new random password;
#   5. writes the files of deploy/ with this installation's paths, user and address into
#      PREFIX/deploy/ and prints the commands that put them into Postfix, Dovecot and systemd.
#
# Options (defaults in brackets):
#   --address ADDR     the server's address [pbem@$(hostname --fqdn)]; its local part should be the user
#   --door pipe|dovecot  how mail comes in: Postfix's pipe into `pbem deliver` (deploy/pipe/), or
#                      Postfix -> Dovecot LMTP -> IMAP IDLE (deploy/dovecot/) [pipe]
#   --prefix DIR       where the venv and the rendered deploy files go [/opt/pbem]
#   --data-dir DIR     the server's data: database, outbox, Dovecot mailbox [/var/lib/pbem]
#   --config-dir DIR   pbem.toml and password files [/etc/pbem]
#   --user NAME        the service user (and group) [pbem]
#   --source PATH      what pip installs: a checkout, sdist or wheel [this script's checkout]
#   --python PATH      the interpreter for the venv [the first fitting one, see step 2]
#   --extras LIST      pip extras, e.g. postgres for PostgreSQL workers [none]
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ADDRESS=""
DOOR=pipe
PREFIX=/opt/pbem
DATA_DIR=/var/lib/pbem
CONFIG_DIR=/etc/pbem
SERVICE_USER=pbem
SOURCE="$(dirname "$HERE")"
PYTHON=""
EXTRAS=""

say() { printf 'install.sh: %s\n' "$*"; }
die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'; }

while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) ;;
    -*) [ $# -ge 2 ] || die "$1 needs a value (--help lists the options)" ;;
  esac
  case "$1" in
    --address) ADDRESS="$2"; shift 2 ;;
    --door) DOOR="$2"; shift 2 ;;
    --prefix) PREFIX="$2"; shift 2 ;;
    --data-dir) DATA_DIR="$2"; shift 2 ;;
    --config-dir) CONFIG_DIR="$2"; shift 2 ;;
    --user) SERVICE_USER="$2"; shift 2 ;;
    --source) SOURCE="$2"; shift 2 ;;
    --python) PYTHON="$2"; shift 2 ;;
    --extras) EXTRAS="$2"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; die "unknown option: $1" ;;
  esac
done

[ "$(id -u)" -eq 0 ] || die "run me as root (I create a user and install into $PREFIX)"
case "$DOOR" in pipe|dovecot) ;; *) die "--door is pipe or dovecot, not '$DOOR'" ;; esac
[ -e "$SOURCE" ] || die "no such source: $SOURCE"
SOURCE="$(realpath "$SOURCE")"
for dir in "$PREFIX" "$DATA_DIR" "$CONFIG_DIR"; do
  case "$dir" in /*) ;; *) die "folders must be absolute paths: $dir" ;; esac
  case "$dir" in *[\|\&\ ]*) die "folder names with '|', '&' or spaces are not supported: $dir" ;; esac
done
# Run from / : the service user may not enter the folder this was started from (/root).
cd /
if [ -z "$ADDRESS" ]; then
  ADDRESS="$SERVICE_USER@$(hostname --fqdn 2>/dev/null || hostname)"
fi
case "$ADDRESS" in
  *@*.*|*@localhost) ;;
  *) die "'$ADDRESS' is no mail address with a domain: give the server's address with --address" ;;
esac
DOMAIN="${ADDRESS#*@}"
if [ "${ADDRESS%%@*}" != "$SERVICE_USER" ]; then
  say "note: Postfix accepts $ADDRESS as a local address only if '${ADDRESS%%@*}' is a user or an alias of this host (the steps below assume the user $SERVICE_USER)"
fi
VENV="$PREFIX/venv"

# --- 1. the user -----------------------------------------------------------------------------
if id -u "$SERVICE_USER" >/dev/null 2>&1; then
  say "user $SERVICE_USER exists"
else
  useradd --system --user-group --home-dir "$DATA_DIR" --no-create-home \
    --shell /usr/sbin/nologin --comment "pbem play-by-email server" "$SERVICE_USER"
  say "created the system user $SERVICE_USER (home $DATA_DIR)"
fi
GROUP="$(id -gn "$SERVICE_USER")"

as_user() { runuser -u "$SERVICE_USER" -- "$@"; }

# --- 2. an interpreter the user can run ------------------------------------------------------
# Why not simply python3.11 from PATH: root's PATH may find a pyenv under /root (mode 0700), and the
# venv's python is a link to the interpreter it was made with, so the service could not start it.
fits() {  # fits PYTHON: prints why not, returns 1, when it does not
  local py="$1" why
  [ -x "$py" ] || { echo "$py: not an executable file"; return 1; }
  if ! why="$(as_user "$py" -c 'import sys
if sys.version_info < (3, 11):
    sys.exit("Python %d.%d, pbem needs 3.11 or later" % sys.version_info[:2])
import venv, ensurepip' 2>&1)"; then
    why="$(printf '%s' "$why" | tail -n 1)"
    case "$why" in
      *ensurepip*) why="$why (Debian: apt-get install python3-venv)" ;;
      *"ermission denied"*) why="user $SERVICE_USER cannot run it: $why" ;;
    esac
    echo "$py: $why"
    return 1
  fi
}

if [ -n "$PYTHON" ]; then
  fits "$PYTHON" >&2 || die "--python $PYTHON does not fit (see the line above)"
else
  rejected=()
  candidates=(/usr/bin/python3.13 /usr/bin/python3.12 /usr/bin/python3.11 /usr/bin/python3
              /usr/local/bin/python3.13 /usr/local/bin/python3.12 /usr/local/bin/python3.11
              /usr/local/bin/python3)
  for name in python3.13 python3.12 python3.11 python3; do
    found="$(command -v "$name" 2>/dev/null || true)"
    [ -n "$found" ] && candidates+=("$found")
  done
  for py in "${candidates[@]}"; do
    [ -e "$py" ] || continue
    if why="$(fits "$py")"; then PYTHON="$py"; break; fi
    rejected+=("$why")
  done
  if [ -z "$PYTHON" ]; then
    for why in "${rejected[@]}"; do printf '  not usable: %s\n' "$why" >&2; done
    die "no Python >= 3.11 that user $SERVICE_USER can run. On Debian 12: apt-get install python3 python3-venv; elsewhere install Python 3.11 or later system-wide (/usr/bin or /usr/local/bin, not under a home folder) and run me again, with --python PATH if it has another name"
  fi
fi
say "Python for the venv: $PYTHON ($("$PYTHON" -c 'import platform; print(platform.python_version())'))"

# --- 3. the venv and pbem in it --------------------------------------------------------------
install -d -o root -g root -m 0755 "$PREFIX"
if [ -x "$VENV/bin/python" ] && ! fits "$VENV/bin/python" >/dev/null; then
  say "the venv $VENV was made with an interpreter user $SERVICE_USER cannot run: making it again"
  rm -rf "$VENV"
fi
if [ ! -x "$VENV/bin/python" ]; then
  "$PYTHON" -m venv "$VENV"
  say "made the venv $VENV"
fi
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
# One build of SOURCE, then two installs of that wheel: the first brings the dependencies a new
# version needs, the second replaces pbem's own files even when the version number is unchanged.
wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
"$VENV/bin/pip" wheel --quiet --no-deps --wheel-dir "$wheels" "$SOURCE" >/dev/null
wheel="$(ls "$wheels"/pbem-*.whl)"
target="$wheel${EXTRAS:+[$EXTRAS]}"
"$VENV/bin/pip" install --quiet "$target"
"$VENV/bin/pip" install --quiet --force-reinstall --no-deps "$wheel"
version="$(as_user "$VENV/bin/pbem" --version)" || die "user $SERVICE_USER cannot run $VENV/bin/pbem"
say "installed $version into $VENV (runs as user $SERVICE_USER)"

# --- 4. folders and the configuration -------------------------------------------------------
install -d -o "$SERVICE_USER" -g "$GROUP" -m 0750 "$DATA_DIR"
install -d -o root -g "$GROUP" -m 0750 "$CONFIG_DIR"

# The files of deploy/ name /opt/pbem, /etc/pbem, /var/lib/pbem, the user pbem and the address
# pbem@games.example.org; this installation's own values replace exactly those.
render() {
  sed -e "s|pbem@games\.example\.org|$ADDRESS|g" \
      -e "s|games\.example\.org|$DOMAIN|g" \
      -e "s|/opt/pbem|$PREFIX|g" \
      -e "s|/etc/pbem|$CONFIG_DIR|g" \
      -e "s|/var/lib/pbem|$DATA_DIR|g" \
      -e "s/\(user\|User\|Group\|uid\|gid\)=pbem\b/\1=$SERVICE_USER/g" "$1"
}

config="$CONFIG_DIR/pbem.toml"
if [ -e "$config" ]; then
  say "kept $config"
else
  render "$HERE/$DOOR/pbem.toml" >"$config.new"
  chown root:"$GROUP" "$config.new"
  chmod 0640 "$config.new"
  mv "$config.new" "$config"
  say "wrote $config (the $DOOR door)"
fi
if [ "$DOOR" = dovecot ] && [ ! -e "$CONFIG_DIR/imap-password" ]; then
  ( umask 027; "$PYTHON" -c 'import secrets; print(secrets.token_urlsafe(24))' >"$CONFIG_DIR/imap-password" )
  chown root:"$GROUP" "$CONFIG_DIR/imap-password"
  say "wrote $CONFIG_DIR/imap-password (a new random password for the server's mailbox)"
fi

# --- 5. the deploy files for this installation, and what to do with them ---------------------
rendered="$PREFIX/deploy"
install -d -o root -g root -m 0755 "$rendered" "$rendered/pipe" "$rendered/dovecot" "$rendered/workers"
for file in pipe/master.cf pipe/main.cf pipe/pbem-transport pipe/pbem.toml \
            dovecot/main.cf dovecot/pbem-transport dovecot/pbem.conf dovecot/pbem.toml \
            pbem.service workers/pbem-worker@.service workers/pbem-workers.target \
            workers/worker.toml.example; do
  render "$HERE/$file" >"$rendered/$file"
done
if [ -f "$SOURCE/README.md" ]; then  # the units' Documentation=
  install -o root -g root -m 0644 "$SOURCE/README.md" "$PREFIX/README.md"
fi
say "wrote this installation's deploy files into $rendered"

if ! as_user "$VENV/bin/pbem" check-config -c "$config" >/dev/null 2>&1; then
  say "warning: the check of $config fails for now (fix it, then run again to see the steps):"
  as_user "$VENV/bin/pbem" check-config -c "$config" || true
fi

uid="$(id -u "$SERVICE_USER")"
# The main.cf settings, from the file (one source), as one postconf -e command.
settings() {
  local args=()
  while IFS= read -r line; do
    case "$line" in ''|'#'*) continue ;; esac
    args+=("'$line'")
  done <"$rendered/$1/main.cf"
  echo "postconf -e ${args[*]}"
}
postfix_steps() {  # postfix_steps DOOR
  if [ -f "$rendered/$1/master.cf" ]; then  # once: a second service of that name is an error
    echo "grep -q '^pbem ' /etc/postfix/master.cf || cat $rendered/$1/master.cf >>/etc/postfix/master.cf"
  fi
  settings "$1"
  echo "cp $rendered/$1/pbem-transport /etc/postfix/pbem-transport && postmap /etc/postfix/pbem-transport"
  echo "postconf -h mydestination | tr ', ' '\n\n' | grep -qxF $DOMAIN || postconf -e \"mydestination = \$(postconf -h mydestination), $DOMAIN\""
  echo "postfix check && postfix reload"
}

echo
echo "Next steps (as root), for the $DOOR door of $ADDRESS:"
n=1
step() { printf '%d. %s\n' "$n" "$1"; shift; n=$((n + 1)); for line in "$@"; do printf '     %s\n' "$line"; done; }
if [ "$DOOR" = pipe ]; then
  mapfile -t lines < <(postfix_steps pipe)
  step "Postfix: the pipe service, and the server's address (only it) to it" "${lines[@]}"
else
  lines=("cp $rendered/dovecot/pbem.conf /etc/dovecot/conf.d/99-pbem.conf"
         "printf '%s:{SHA512-CRYPT}%s::::::\\n' ${ADDRESS%%@*} \"\$(openssl passwd -6 -stdin <$CONFIG_DIR/imap-password)\" >/etc/dovecot/pbem.passwd"
         "chown root:dovecot /etc/dovecot/pbem.passwd && chmod 0640 /etc/dovecot/pbem.passwd")
  if [ "$uid" -lt 500 ]; then  # Dovecot refuses mail users below first_valid_uid (500)
    lines+=("echo 'first_valid_uid = $uid' >>/etc/dovecot/conf.d/99-pbem.conf")
  fi
  lines+=("systemctl restart dovecot")
  step "Dovecot (apt-get install dovecot-imapd dovecot-lmtpd): the server's mailbox" "${lines[@]}"
  mapfile -t lines < <(postfix_steps dovecot)
  step "Postfix: the server's address (only it) to Dovecot over LMTP" "${lines[@]}"
fi
step "Check the configuration as the server's user" \
  "runuser -u $SERVICE_USER -- $VENV/bin/pbem check-config -c $config"
step "Start the server with systemd" \
  "cp $rendered/pbem.service /etc/systemd/system/pbem.service" \
  "systemctl daemon-reload && systemctl enable --now pbem" \
  "journalctl -u pbem -f    # one line per processed mail"
step "Play: send 'help' to $ADDRESS from any mail client."
