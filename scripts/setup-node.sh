#!/usr/bin/env bash
# Prepares a Debian 12 host to be a node of `fencecheck run --runtime ssh`: the servers, and
# the shared libraries of a built fencecheck, since the controller uploads its own binary
# and runs it there as the worker and the resource. The packages are setup.sh's `--image`
# group; they are listed there only.
#
# Either on the node, with the scripts/ folder copied there:
#   sudo scripts/setup-node.sh
# or from the controller, copying nothing (this installs only; `fencecheck preflight
# --nodes-file FILE` then checks the hosts):
#   ssh root@HOST 'bash -s -- --image' < scripts/setup.sh
#
# The runtime also runs sh, bash, env, timeout, ps, awk, tar, find, iptables,
# iptables-restore, kill, mkdir, mv, chmod, cat, sed, tr and grep on the node, and setpriv
# and unshare for PostgreSQL. procps and iptables are in setup.sh's servers group; the rest
# are Essential packages, except awk (mawk is only Priority: required) and sshd
# (openssh-server is in setup.sh's tests group: the image has no sshd). Both are checked
# below rather than added to setup.sh.
set -euo pipefail

prog=setup-node.sh
here=$(dirname "$0")
refuse() { echo "$prog: $*" >&2; exit 1; }

((EUID == 0)) || refuse "must run as root (sudo $0): it installs packages and checks iptables."
# setup.sh names Debian 12's library packages, and the uploaded binary needs exactly those.
grep -qx 'VERSION_ID="12"' /etc/os-release 2>/dev/null || refuse "this host is not Debian 12 (bookworm)."

"$here/setup.sh" --image
# Run again, it installs nothing and says how many packages the group has.
count=$("$here/setup.sh" --image | sed -n 's/^setup\.sh: all \([0-9]*\) packages already installed$/\1/p')
[[ -n $count ]] || refuse "setup.sh --image still finds packages missing."

problems=()
command -v awk >/dev/null || problems+=("awk is missing (pauses wait with it): apt-get install mawk.")
if [[ ! -x /usr/sbin/sshd ]]; then
  problems+=("no sshd: the controller reaches every node over ssh: apt-get install openssh-server.")
elif ! sshd_config=$(/usr/sbin/sshd -T 2>&1); then
  problems+=("\`sshd -T\` fails, so sshd cannot start: ${sshd_config//$'\n'/ }")
else
  # The runtime logs in as root by key and forwards the workers' sockets and probe ports.
  has() { grep -qE "^$1\$" <<<"$sshd_config"; }
  has 'permitrootlogin (yes|without-password|prohibit-password)' ||
    problems+=("sshd refuses root logins by key: set PermitRootLogin prohibit-password.")
  ! has 'disableforwarding yes' ||
    problems+=("sshd has DisableForwarding yes: set it to no (the runtime forwards sockets and ports).")
  ! has 'allowtcpforwarding (no|remote)' ||
    problems+=("sshd forbids local TCP forwarding: set AllowTcpForwarding yes (readiness probes use it).")
  ! has 'allowstreamlocalforwarding (no|remote)' ||
    problems+=("sshd forbids socket forwarding: set AllowStreamLocalForwarding yes (the workers' control sockets).")
fi
iptables -w -S >/dev/null 2>&1 ||
  problems+=("\`iptables -w -S\` fails: partitions need iptables (and nf_tables in the kernel).")

if ((${#problems[@]})); then
  for p in "${problems[@]}"; do echo "$prog: $p" >&2; done
  exit 1
fi
echo "$prog: ready ($count packages)"
