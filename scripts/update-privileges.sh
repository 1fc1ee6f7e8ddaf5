#!/usr/bin/env bash
# Install or update the privilege rules of the host firewall bridge (fail2ban):
#   - a sudoers drop-in that lets the service user run, without a password, exactly the
#     fail2ban-client commands the station sends and the file helper below;
#   - the root-owned helper that writes the jail and filter files and creates the security log.
# The drop-in is checked with "visudo -cf" before it is installed (mode 0440). Running the script
# again changes nothing unless an option or a template changed. Needs root, except --dry-run.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
templates="$here/../deploy/privileges"
program=$(basename "$0")

SUDOERS_PATH=/etc/sudoers.d/alertstation-hostban
HELPER_PATH=/usr/local/libexec/alertstation/hostban-files

user=alertstation
dry_run=0
dest_root=""
socket=/var/run/fail2ban/fail2ban.sock
config_dir=/etc/fail2ban
jail_file=/etc/fail2ban/jail.d/alertstation.conf
filter_file=/etc/fail2ban/filter.d/alertstation.conf
log_file=/var/log/alertstation-security.log
app_jail=alertstation
ssh_jail=sshd
client=/usr/bin/fail2ban-client

usage() {
    cat <<EOF
Usage: $program [--user NAME] [--dry-run] [options]

Installs $SUDOERS_PATH and $HELPER_PATH.
Use the same values as the station's host-ban settings.

  --user NAME          service user the station runs as        (default: $user)
  --dry-run            show what would be installed; change nothing (no root needed)
  --socket PATH        fail2ban socket                          (default: $socket)
  --config-dir DIR     fail2ban config directory                (default: $config_dir)
  --jail-file PATH     jail file                                (default: $jail_file)
  --filter-file PATH   filter file                              (default: $filter_file)
  --log-file PATH      security log                             (default: $log_file)
  --app-jail NAME      dedicated jail                           (default: $app_jail)
  --ssh-jail NAME      SSH jail                                 (default: $ssh_jail)
  --client PATH        fail2ban-client as sudo resolves it      (default: $client)
  --dest-root DIR      install below DIR instead of / (staging, tests)
  -h, --help           this help
EOF
}

fail() {
    echo "$program: $*" >&2
    exit 1
}

need_value() {
    [ $# -ge 2 ] && [ -n "$2" ] || fail "$1 needs a value (see --help)"
}

while [ $# -gt 0 ]; do
    case "$1" in
        --user) need_value "$@"; user=$2; shift 2 ;;
        --dry-run) dry_run=1; shift ;;
        --dest-root) need_value "$@"; dest_root=${2%/}; shift 2 ;;
        --socket) need_value "$@"; socket=$2; shift 2 ;;
        --config-dir) need_value "$@"; config_dir=${2%/}; shift 2 ;;
        --jail-file) need_value "$@"; jail_file=$2; shift 2 ;;
        --filter-file) need_value "$@"; filter_file=$2; shift 2 ;;
        --log-file) need_value "$@"; log_file=$2; shift 2 ;;
        --app-jail) need_value "$@"; app_jail=$2; shift 2 ;;
        --ssh-jail) need_value "$@"; ssh_jail=$2; shift 2 ;;
        --client) need_value "$@"; client=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) fail "unknown option $1 (see --help)" ;;
    esac
done

if [ "$dry_run" -eq 0 ] && [ "$(id -u)" -ne 0 ]; then
    fail "must run as root to install the privilege rules (try: sudo $0 --user $user; --dry-run shows them without root)"
fi

# Values end up in sudoers and in a root script: allow a strict character set only.
check_path() {
    [[ $2 =~ ^/[A-Za-z0-9._/-]+$ ]] || fail "$1 must be an absolute path of letters, digits and ._/- ($2)"
    [[ /$2/ != */../* && /$2/ != */./* ]] || fail "$1 must not contain . or .. components ($2)"
}
check_name() {
    [[ $2 =~ ^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$ ]] || fail "$1 must be letters, digits and _.- ($2)"
}
[[ $user =~ ^[a-z_][a-z0-9_-]{0,31}$ ]] || fail "--user must be a plain user name ($user)"
[ "$user" != root ] || fail "--user is the unprivileged service user, not root"
getent passwd "$user" >/dev/null || fail "user $user does not exist: create the service user first"
check_path --socket "$socket"
check_path --config-dir "$config_dir"
check_path --jail-file "$jail_file"
check_path --filter-file "$filter_file"
check_path --log-file "$log_file"
check_path --client "$client"
check_name --app-jail "$app_jail"
check_name --ssh-jail "$ssh_jail"
if [ -n "$dest_root" ]; then
    check_path --dest-root "$dest_root"
fi

visudo=$(command -v visudo || true)
[ -n "$visudo" ] || visudo=/usr/sbin/visudo
[ -x "$visudo" ] || fail "visudo not found: install the sudo package (apt-get install sudo)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

render() {  # render TEMPLATE OUTPUT
    sed -e "s|@USER@|$user|g" \
        -e "s|@CLIENT@|$client|g" \
        -e "s|@SOCKET@|$socket|g" \
        -e "s|@CONFIG_DIR@|$config_dir|g" \
        -e "s|@JAIL_FILE@|$jail_file|g" \
        -e "s|@FILTER_FILE@|$filter_file|g" \
        -e "s|@LOG_FILE@|$log_file|g" \
        -e "s|@APP_JAIL@|$app_jail|g" \
        -e "s|@SSH_JAIL@|$ssh_jail|g" \
        -e "s|@HELPER@|$HELPER_PATH|g" \
        "$1" >"$2"
    if grep -q '@[A-Z_]*@' "$2"; then
        fail "template $1 has a placeholder this script does not fill"
    fi
}

render "$templates/alertstation-hostban.sudoers.in" "$work/sudoers"
render "$templates/hostban-files.in" "$work/helper"
chmod 0440 "$work/sudoers"
if ! check=$("$visudo" -c -f "$work/sudoers" 2>&1); then
    echo "$check" >&2
    fail "visudo rejected the rendered drop-in; nothing was installed"
fi

sudoers_target="$dest_root$SUDOERS_PATH"
helper_target="$dest_root$HELPER_PATH"

if [ "$dry_run" -eq 1 ]; then
    echo "dry run: nothing is changed"
    echo "visudo: the drop-in parses OK"
    echo "would install $sudoers_target (0440 root:root):"
    sed 's/^/  | /' "$work/sudoers"
    echo "would install $helper_target (0755 root:root), limited to:"
    echo "  | user $user, jail file $jail_file, filter file $filter_file"
    echo "  | security log $log_file, jails $app_jail and $ssh_jail"
    if [ -z "$dest_root" ]; then
        echo "would create $log_file (0640, owner $user) when missing"
    fi
    exit 0
fi

install_file() {  # install_file SOURCE MODE TARGET LABEL
    local mode_now=""
    if [ -f "$3" ] && [ ! -L "$3" ]; then
        mode_now=$(stat -c '%a %u %g' "$3")
    fi
    if [ "$mode_now" = "${2#0} 0 0" ] && cmp -s "$1" "$3"; then
        echo "$4: unchanged ($3)"
        return 0
    fi
    local directory
    directory=$(dirname "$3")
    [ -d "$directory" ] || install -d -m 0755 -o root -g root "$directory"
    # A name with a dot: sudo ignores it in sudoers.d until the rename makes it complete.
    install -m "$2" -o root -g root "$1" "$directory/.$(basename "$3").new"
    mv -f "$directory/.$(basename "$3").new" "$3"
    echo "$4: installed ($3)"
}

install_file "$work/helper" 0755 "$helper_target" "helper"
install_file "$work/sudoers" 0440 "$sudoers_target" "sudoers drop-in"

if [ -z "$dest_root" ]; then
    if ! check=$("$visudo" -c 2>&1); then
        rm -f "$sudoers_target"
        echo "$check" >&2
        fail "the sudoers configuration no longer parses with the drop-in; it was removed again"
    fi
    if "$helper_target" log "$log_file"; then
        echo "security log: ready ($log_file, owner $user, 0640)"
    else
        echo "security log: not created yet; the next save and apply creates it" >&2
    fi
fi
echo "privilege rules for $user are in place"
