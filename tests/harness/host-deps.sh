#!/usr/bin/env bash
# Installs the Debian packages the harness needs on the controller, only those missing.
# usage: host-deps.sh KIND... (container, vm, lint, unit): one apt run for all of them.
# Exits 77 (cannot run) when packages are missing and this is not root.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
declare -A CMD_PKG=(
  [mmdebstrap]=mmdebstrap [apt-cacher-ng]=apt-cacher-ng [socat]=socat [ssh]=openssh-client
  [dockerd]=docker.io [qemu-system-x86_64]=qemu-system-x86 [qemu-img]=qemu-utils
  [sfdisk]=fdisk [mkfs.ext4]=e2fsprogs [shellcheck]=shellcheck [rsync]=rsync
  [dpkg-scanpackages]=dpkg-dev [gpg]=gpg [pci.ids]=pci.ids [nft]=nftables [ip]=iproute2
)
# the stand-in of NVIDIA's repository (nvrepo.py) is built with dpkg-deb, dpkg-scanpackages and gpg
repo=(dpkg-scanpackages gpg)
[ $# -gt 0 ] || { echo "usage: $0 container|vm|lint|unit..." >&2; exit 2; }
want=()
for kind in "$@"; do
  case "$kind" in
    container) want+=(mmdebstrap apt-cacher-ng dockerd "${repo[@]}") ;;
    vm) want+=(mmdebstrap apt-cacher-ng socat ssh qemu-system-x86_64 qemu-img sfdisk mkfs.ext4 "${repo[@]}") ;;
    lint) want+=(shellcheck rsync) ;;
    # pci.ids: the PCI ID Repository, which the GPU id table is checked against (test_pci_ids.py); nft and ip:
    # the Ray cluster's firewall table, loaded in a network namespace of the test's own (test_ray_firewall.py)
    unit) want+=("${repo[@]}" pci.ids nft ip) ;;
    *) echo "usage: $0 container|vm|lint|unit..." >&2; exit 2 ;;
  esac
done
missing=()
for c in "${want[@]}"; do
  if [ "$c" = apt-cacher-ng ]; then [ -x /usr/sbin/apt-cacher-ng ] && continue
  elif [ "$c" = pci.ids ]; then [ -f /usr/share/misc/pci.ids ] && continue
  else command -v "$c" >/dev/null 2>&1 && continue; fi
  [[ " ${missing[*]} " == *" ${CMD_PKG[$c]} "* ]] || missing+=("${CMD_PKG[$c]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
log "installing ${missing[*]}"
[ "$(id -u)" = 0 ] || { log "need root to apt-get install ${missing[*]}; install them, then run again"; exit 77; }
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# apt-cacher-ng's postinst tries to start a system service; there is no init system here.
printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d.llmhost
if [ ! -e /usr/sbin/policy-rc.d ]; then cp /usr/sbin/policy-rc.d.llmhost /usr/sbin/policy-rc.d; chmod 755 /usr/sbin/policy-rc.d; trap 'rm -f /usr/sbin/policy-rc.d' EXIT; fi
rm -f /usr/sbin/policy-rc.d.llmhost
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
