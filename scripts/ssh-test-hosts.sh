#!/usr/bin/env bash
# A real multi-host network on one machine, for the ssh runtime's tests: every host is a
# network namespace with its own sshd and address, joined by a bridge in a hub namespace.
# The host's own network namespace is never changed: the controller reaches each sshd
# through `ip netns exec <ns> nc %h %p`, so no veth, route or firewall rule is needed there.
set -euo pipefail

prog=ssh-test-hosts.sh
usage() {
  cat >&2 <<'EOF'
usage: ssh-test-hosts.sh up N NODES_FILE [--servers S]
       ssh-test-hosts.sh down NODES_FILE

up makes hosts h1..hN (namespaces, each with an sshd on 10.251.K.I:22 and a key for root)
and writes NODES_FILE, the nodes file of fencecheck's ssh runtime; its state goes to
NODES_FILE.d/. The first S hosts (default 5, or N if N < 5) get role "server", the rest
role "client": a run needs one server host per server of its backend (redis 1, redlock 3
or 5, zookeeper and etcd 3) and one client host per client process plus one for the
resource service r1, so --concurrency 5 needs 6 client hosts: `up 11 FILE --servers 5`.
down stops the sshds and deletes the namespaces, NODES_FILE.d/ and NODES_FILE. It is
idempotent and also cleans up after an up that failed half-way.
EOF
}
refuse() { echo "$prog: $*" >&2; exit 2; }
is_num() { [[ $1 =~ ^(0|[1-9][0-9]{0,2})$ ]]; }  # also keeps bash from reading 010 as octal
now_us() { local t=$EPOCHREALTIME; echo "${t//[.,]/}"; }

# Every name derives from the absolute NODES_FILE path: down finds what a half-finished up
# made, and two fixtures never share a namespace.
init_paths() {
  nodes=$(realpath -m -- "$1")
  # The path ends up unquoted in sshd_config, ssh options (% expands) and a pkill pattern.
  [[ $nodes =~ ^[A-Za-z0-9._/-]+$ ]] ||
    refuse "the NODES_FILE path $nodes may contain only letters, digits and . _ / - characters."
  state=$nodes.d
  local hash
  hash=$(printf '%s' "$nodes" | sha256sum)
  id=${hash:0:6}
  net=10.251.$((16#${hash:0:2}))
}
ns_of() { echo "fcssh-$id-$1"; }

teardown() {
  local -a nss=() pids=() alive=()
  local ns pidfile pid
  # The recorded names, plus any with this fixture's prefix, in case the state dir is gone.
  mapfile -t nss < <({ cat "$state/namespaces" 2>/dev/null || true
    ip netns list 2>/dev/null | awk -v p="fcssh-$id-" 'index($1, p) == 1 { print $1 }'; } | sort -u)
  for pidfile in "$state"/sshd.h*.pid; do
    [[ -f $pidfile ]] || continue
    pid=$(<"$pidfile")
    # A stale pid file may name a recycled pid: kill it only if it runs one of our configs.
    [[ $pid =~ ^[0-9]+$ ]] || continue
    if grep -qzF "$state/sshd_config" "/proc/$pid/cmdline" 2>/dev/null; then kill "$pid" || true; fi
  done
  pkill -f "${state//./\\.}/sshd_config" 2>/dev/null || true
  # Sessions (sshd's per-connection children, commands run over ssh, ProxyCommand nc)
  # outlive the listener and keep a deleted namespace alive: end whatever runs inside.
  for ns in "${nss[@]}"; do
    mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null || true)
  done
  if ((${#pids[@]})); then
    kill "${pids[@]}" 2>/dev/null || true
    for _ in {1..20}; do  # sshd ends on SIGTERM at once; a shell mid-command may take longer
      alive=()  # a zombie is dead already, whenever its parent (maybe init) reaps it
      for pid in "${pids[@]}"; do
        [[ $(ps -o stat= -p "$pid" 2>/dev/null) == [^Z]* ]] && alive+=("$pid")
      done
      ((${#alive[@]})) || break; sleep 0.1
    done
    ((${#alive[@]} == 0)) || kill -9 "${alive[@]}" 2>/dev/null || true
  fi
  for ns in "${nss[@]}"; do ip netns delete "$ns" 2>/dev/null || true; done
  rm -rf -- "$state"
  rm -f -- "$nodes"
}

# ssh_to I SECONDS COMMAND...: the options fencecheck's ssh runtime uses, from the host namespace.
ssh_to() {
  local i=$1 secs=$2
  shift 2
  timeout "$secs" ssh -F /dev/null -o BatchMode=yes -o IdentitiesOnly=yes -i "$state/id_ed25519" \
    -o UserKnownHostsFile="$state/known_hosts" -o StrictHostKeyChecking=yes \
    -o ProxyCommand="ip netns exec $(ns_of "h$i") nc %h %p" -p 22 "root@$net.$i" "$@"
}

wait_ssh() {
  local i=$1 deadline left
  deadline=$(($(now_us) + 10000000))
  while left=$((deadline - $(now_us))); ((left > 0)); do
    ssh_to "$i" "$((left / 1000000)).$(printf %06d $((left % 1000000)))" true \
      </dev/null >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "$prog: the sshd of h$i did not answer ssh within 10 s (see $state/sshd.h$i.log)" >&2
  return 1
}

on_up_exit() {
  local rc=$?
  set +e
  ((rc == 0)) || { echo "$prog: up failed; removing what it made" >&2; teardown; }
}

up() {
  (($# >= 2)) || { usage; exit 2; }
  local n=$1 file=$2 s='' i ns veth role start el tool json='' summary=''
  shift 2
  if (($# == 2)) && [[ $1 == --servers ]]; then s=$2; elif (($#)); then usage; exit 2; fi
  ((EUID == 0)) || refuse "must run as root (it creates network namespaces)."
  for tool in /usr/sbin/sshd ssh ssh-keygen nc ip; do
    command -v "$tool" >/dev/null || refuse "$tool is missing:" \
      "apt-get install openssh-server netcat-openbsd (or run scripts/setup.sh)."
  done
  # Addresses .1 to .254: .0 is the subnet, .255 its broadcast address.
  if ! is_num "$n" || ((n < 1 || n > 254)); then
    refuse "N must be a number from 1 to 254, not '$n'."
  fi
  [[ -n $s ]] || s=$((n < 5 ? n : 5))
  if ! is_num "$s" || ((s > n)); then refuse "--servers S must be from 0 to N ($n), not '$s'."; fi
  init_paths "$file"
  [[ ! -e $nodes ]] || refuse "$nodes already exists: run '$prog down $nodes' first."
  [[ ! -e $state ]] || refuse "$state already exists (left over?): run '$prog down $nodes' first."

  start=$(now_us)
  mkdir -p -- "$(dirname -- "$nodes")"
  mkdir -- "$state"  # claims the name: a concurrent up of the same file fails here
  trap on_up_exit EXIT
  trap 'exit 130' INT TERM

  ssh-keygen -t ed25519 -N '' -q -C "fencecheck@controller" -f "$state/id_ed25519"
  ssh-keygen -t ed25519 -N '' -q -C "fcssh-$id" -f "$state/ssh_host_ed25519_key"
  cp -- "$state/id_ed25519.pub" "$state/authorized_keys"
  : >"$state/known_hosts"
  : >"$state/namespaces"
  mkdir -p /run/sshd  # sshd's privilege-separation dir; systemd makes it only for its own sshd

  ns=$(ns_of hub)
  echo "$ns" >>"$state/namespaces"
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip -n "$ns" link add br0 type bridge
  ip -n "$ns" link set br0 up

  for ((i = 1; i <= n; i++)); do
    ns=$(ns_of "h$i")
    veth=s${id}h$i
    ((${#veth} <= 15)) || { echo "$prog: interface name $veth is over 15 characters" >&2; exit 1; }
    echo "$ns" >>"$state/namespaces"
    ip netns add "$ns"
    # Made in the hub with its peer straight in the host's namespace: never in the root one.
    ip -n "$(ns_of hub)" link add "$veth" type veth peer name eth0 netns "$ns"
    ip -n "$(ns_of hub)" link set "$veth" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$net.$i/24" dev eth0
    ip -n "$ns" link set eth0 up

    cat >"$state/sshd_config.h$i" <<EOF
ListenAddress $net.$i
Port 22
HostKey $state/ssh_host_ed25519_key
PidFile $state/sshd.h$i.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
AuthorizedKeysFile $state/authorized_keys
# The state directory may sit in a world-writable /tmp.
StrictModes no
UsePAM no
# Headroom for many concurrent connections and sessions per host.
MaxSessions 64
MaxStartups 200
AllowStreamLocalForwarding yes
AllowTcpForwarding yes
X11Forwarding no
PrintMotd no
LogLevel INFO
Subsystem sftp internal-sftp
# bash sources ~/.bashrc for a command sshd runs only when SHLVL was unset (below 2 after
# its own increment): a slow rc file (pyenv takes ~0.9 s) would slow every remote command.
SetEnv SHLVL=1
EOF
    /usr/sbin/sshd -t -f "$state/sshd_config.h$i"
    echo "$net.$i $(<"$state/ssh_host_ed25519_key.pub")" >>"$state/known_hosts"
    ip netns exec "$ns" /usr/sbin/sshd -f "$state/sshd_config.h$i" -E "$state/sshd.h$i.log"
  done

  # All sshds start at once; then each must accept the key exactly as fencecheck will. One
  # after another: each remote command runs root's shell startup files, which may serialize
  # on a lock (pyenv's rehash does), so parallel checks were slower.
  for ((i = 1; i <= n; i++)); do wait_ssh "$i"; done
  # The checks above stay inside each host; this one crosses the bridge.
  for ((i = 2; i <= n; i++)); do
    ip netns exec "$(ns_of h1)" nc -z -w 2 "$net.$i" 22 ||
      { echo "$prog: h1 cannot reach h$i ($net.$i:22) over the bridge" >&2; exit 1; }
  done

  # Written last and atomically: an existing NODES_FILE means a complete fixture. One JSON
  # object per line, the format of fencecheck's --nodes-file (docs/runtimes.md).
  json="# made by $prog up $n $nodes --servers $s"$'\n'
  for ((i = 1; i <= n; i++)); do
    role=client; ((i <= s)) && role=server
    printf -v json '%s{"name": "h%d", "host": "%s", "port": 22, "user": "root", "key": "%s", "role": "%s", "known_hosts": "%s", "proxy_command": "ip netns exec %s nc %%h %%p"}\n' \
      "$json" "$i" "$net.$i" "$state/id_ed25519" "$role" "$state/known_hosts" "$(ns_of "h$i")"
    printf -v summary '%s%-4s %-6s %s\n' "$summary" "h$i" "$role" "$net.$i"
  done
  printf '%s' "$json" >"$state/nodes.json.tmp"
  mv -- "$state/nodes.json.tmp" "$nodes"

  printf '%s' "$summary"
  el=$(($(now_us) - start))
  printf '%s: up took %d.%02d s; nodes file %s; remove with: %s down %s\n' \
    "$prog" $((el / 1000000)) $((el % 1000000 / 10000)) "$nodes" "$0" "$nodes"
}

down() {
  (($# == 1)) || { usage; exit 2; }
  ((EUID == 0)) || refuse "must run as root (it deletes network namespaces)."
  init_paths "$1"
  teardown
  echo "$prog: removed the fixture of $nodes (if there was one)"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) shift; down "$@" ;;
  -h | --help) usage ;;
  *) usage; exit 2 ;;
esac
