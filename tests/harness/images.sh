#!/usr/bin/env bash
# Builds (or reuses) the test host images from Debian packages only; no registry, no cloud image.
#   images.sh container  -> docker image llmhost-test/debian-systemd:<hash> in the private dockerd
#   images.sh vm         -> $LLMHOST_TEST_CACHE/images/vm-<hash>.qcow2 (SeaBIOS + GRUB + Debian kernel)
# <hash> is the hash of this script and env.sh: editing the recipe rebuilds, otherwise the cache is reused.
# Prints the image reference on stdout; all logs go to stderr.
set -euo pipefail
# shellcheck source=env.sh
. "$(dirname "$0")/env.sh"
IMG=$LLMHOST_TEST_CACHE/images
mkdir -p "$IMG"
HASH=$(recipe_hash "$0" "$HARNESS_DIR/env.sh")
MIRROR=$(debian_mirror)
PROXY_OPT="Acquire::http::Proxy \"http://127.0.0.1:$LLMHOST_ACNG_PORT\";"
"$HARNESS_DIR/acng.sh" start

# Packages both kinds of host need; python3-apt saves Ansible's apt module a bootstrap on every run.
# mmdebstrap keeps --aptopt in the image; the harness sets the proxy per tier in prepare instead.
# shellcheck disable=SC2016  # $1 is expanded by mmdebstrap's hook, not here
DROP_PROXY_HOOK='rm -f "$1"/etc/apt/apt.conf.d/99mmdebstrap'
BASE_PKGS=systemd,systemd-sysv,dbus,python3,python3-apt,sudo,iproute2,procps,apt-utils,gnupg,ca-certificates,kmod

container() {
  local tag="llmhost-test/debian-systemd:$HASH"
  "$HARNESS_DIR/dockerd.sh" start >&2
  take_lock image-container  # held until this script exits: a concurrent caller waits, then reuses
  if docker image inspect "$tag" >/dev/null 2>&1; then log "reusing $tag"; echo "$tag"; return; fi
  local tmp; tmp=$(mktemp -d "$IMG/.ctr.XXXXXX"); trap 'rm -rf "$tmp"' RETURN
  log "building $tag (mmdebstrap $LLMHOST_TEST_SUITE from $MIRROR)"
  mmdebstrap --quiet --variant=minbase --include="$BASE_PKGS" --aptopt="$PROXY_OPT" \
    --customize-hook="$DROP_PROXY_HOOK" \
    "$LLMHOST_TEST_SUITE" "$tmp/rootfs.tar" "$MIRROR" >&2
  docker import --change 'CMD ["/sbin/init"]' --change 'ENV container=docker' "$tmp/rootfs.tar" "$tag" >&2
  # Older images of this recipe family are dead weight.
  docker images --format '{{.Repository}}:{{.Tag}}' llmhost-test/debian-systemd | grep -v ":$HASH$" | xargs -r docker rmi >&2 || true
  echo "$tag"
}

# Decide once per host kernel whether KVM boots a stock Debian guest; else TCG.
# A KVM that accepts the VM but never finishes booting it (seen with kvm_pvm) costs one bounded try.
accel_file() { echo "$LLMHOST_TEST_CACHE/accel-$(uname -r)"; }

boot_and_wait() { # $1 accel, $2 disk, $3 kernel, $4 initrd, $5 timeout_s -> 0 when ssh answers
  local accel=$1 disk=$2 k=$3 i=$4 limit=$5 port=2299 cpu=max
  [ "${accel%%,*}" = kvm ] && cpu=host
  rm -f "$IMG/build-qemu.pid" "$IMG/build-console.log"
  qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 2048 -smp 2 -display none -daemonize \
    -pidfile "$IMG/build-qemu.pid" -serial "file:$IMG/build-console.log" \
    -drive "file=$disk,if=virtio,format=qcow2,cache=unsafe" \
    -netdev "user,id=n0,restrict=on,hostfwd=tcp:127.0.0.1:$port-:22" -device virtio-net-pci,netdev=n0 \
    -kernel "$k" -initrd "$i" -append "root=/dev/vda1 console=ttyS0" >&2 9>&-
  local t0=$SECONDS
  while [ $((SECONDS - t0)) -lt "$limit" ]; do
    # A working KVM prints the kernel's first lines on the serial console within a second or two;
    # one that accepts the VM and never runs it (seen nested, with kvm_pvm) prints nothing at all.
    if [ "${accel%%,*}" = kvm ] && [ $((SECONDS - t0)) -ge 15 ] && [ ! -s "$IMG/build-console.log" ]; then
      log "KVM: nothing on the serial console after 15 s"; return 1
    fi
    timeout 15 ssh -q -o BatchMode=yes -o ConnectTimeout=5 -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
      -i "$LLMHOST_SSH_KEY" -p $port root@127.0.0.1 true 2>/dev/null && return 0
    sleep 2
  done
  return 1
}

stop_build_vm() {
  local p; p=$(cat "$IMG/build-qemu.pid" 2>/dev/null) || return 0
  for _ in $(seq 60); do kill -0 "$p" 2>/dev/null || return 0; sleep 1; done
  kill "$p" 2>/dev/null || true; sleep 1
}

vm() {
  local out="$IMG/vm-$HASH.qcow2"
  take_lock image-vm
  if [ -f "$out" ] && [ -f "$LLMHOST_SSH_KEY" ]; then log "reusing $out"; echo "$out"; return; fi
  mkdir -p "$(dirname "$LLMHOST_SSH_KEY")"
  [ -f "$LLMHOST_SSH_KEY" ] || ssh-keygen -q -t ed25519 -N '' -C llmhost-test -f "$LLMHOST_SSH_KEY"
  local tmp; tmp=$(mktemp -d "$IMG/.vm.XXXXXX"); trap 'rm -rf "$tmp"' RETURN
  local R=$tmp/rootfs
  log "building $out (mmdebstrap $LLMHOST_TEST_SUITE + kernel + grub)"
  # apparmor and firmware-linux-free are what an installed Debian or Ubuntu host already has (the
  # kernel's Recommends). Missing here, the kernel role's install pulled them in, and their
  # initramfs-tools trigger built the new kernel's initramfs a second time (about 3 min under TCG).
  mmdebstrap --quiet --variant=minbase --aptopt="$PROXY_OPT" \
    --include="$BASE_PKGS,linux-image-amd64,udev,openssh-server,initramfs-tools,grub-pc,less,apparmor,firmware-linux-free" \
    --customize-hook="$DROP_PROXY_HOOK" \
    "$LLMHOST_TEST_SUITE" "$R" "$MIRROR" >&2
  echo llmhost-vm > "$R/etc/hostname"
  printf '127.0.0.1 localhost\n127.0.1.1 llmhost-vm\n' > "$R/etc/hosts"
  printf '/dev/vda1 / ext4 errors=remount-ro 0 1\n' > "$R/etc/fstab"
  install -d -m700 "$R/root/.ssh"; install -m600 "$LLMHOST_SSH_KEY.pub" "$R/root/.ssh/authorized_keys"
  printf '[Match]\nName=en* eth*\n[Network]\nDHCP=ipv4\n' > "$R/etc/systemd/network/20-wired.network"
  chroot "$R" systemctl enable systemd-networkd >/dev/null 2>&1
  sed -i 's/^GRUB_CMDLINE_LINUX_DEFAULT=.*/GRUB_CMDLINE_LINUX_DEFAULT=""/; s/^GRUB_CMDLINE_LINUX=.*/GRUB_CMDLINE_LINUX="console=ttyS0,115200"/; s/^#\?GRUB_TERMINAL=.*/GRUB_TERMINAL=serial/; s/^GRUB_TIMEOUT=.*/GRUB_TIMEOUT=1/' "$R/etc/default/grub"
  echo 'GRUB_SERIAL_COMMAND="serial --speed=115200"' >> "$R/etc/default/grub"
  # Test image only: initramfs images built inside the VM hold the modules its own virtual
  # hardware needs, not every module: compressing every module is what makes a kernel install
  # slow under TCG.
  printf 'MODULES=dep\n' > "$R/etc/initramfs-tools/conf.d/llmhost-test.conf"
  # MBR disk with one ext4 partition filled straight from the directory: no loop device needed.
  truncate -s 6143M "$tmp/root.ext4"; mkfs.ext4 -q -F -L rootfs -d "$R" "$tmp/root.ext4"
  truncate -s 6144M "$tmp/disk.raw"; printf 'label: dos\nstart=2048, type=83, bootable\n' | sfdisk -q "$tmp/disk.raw"
  dd if="$tmp/root.ext4" of="$tmp/disk.raw" bs=1M seek=1 conv=notrunc,sparse status=none
  qemu-img convert -O qcow2 "$tmp/disk.raw" "$tmp/disk.qcow2"; rm -f "$tmp/root.ext4" "$tmp/disk.raw"
  local k i; k=$(find "$R/boot" -name 'vmlinuz-*' | sort | tail -1); i=$(find "$R/boot" -name 'initrd.img-*' | sort | tail -1)
  # First boot from the rootfs' own kernel, to install GRUB from inside the guest.
  local accel; accel=$(cat "$(accel_file)" 2>/dev/null || true)
  if [ -z "$accel" ]; then
    accel=tcg,thread=multi
    if [ -w /dev/kvm ] && [ "${LLMHOST_TRY_KVM:-1}" = 1 ]; then
      log "trying KVM (bounded: 60 s to ssh, 15 s to the first console line)"
      if boot_and_wait kvm "$tmp/disk.qcow2" "$k" "$i" 60; then accel=kvm; else
        log "KVM did not boot a stock Debian kernel; using TCG"; kill "$(cat "$IMG/build-qemu.pid")" 2>/dev/null || true; sleep 2
      fi
    fi
    echo "$accel" > "$(accel_file)"
  fi
  if ! pgrep -F "$IMG/build-qemu.pid" >/dev/null 2>&1; then
    log "first boot ($accel)"
    boot_and_wait "$accel" "$tmp/disk.qcow2" "$k" "$i" 300 || { log "guest never answered ssh"; tail -30 "$IMG/build-console.log" >&2; exit 1; }
  fi
  ssh -q -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -i "$LLMHOST_SSH_KEY" -p 2299 root@127.0.0.1 \
    'echo "grub-pc grub-pc/install_devices multiselect /dev/vda" | debconf-set-selections && grub-install /dev/vda >/dev/null 2>&1 && update-grub >/dev/null 2>&1 && : > /etc/machine-id && rm -f /var/lib/dbus/machine-id && apt-get clean && sync && systemctl poweroff' || true
  stop_build_vm
  mv "$tmp/disk.qcow2" "$out.part" && mv "$out.part" "$out"
  find "$IMG" -maxdepth 1 -name 'vm-*.qcow2' ! -name "vm-$HASH.qcow2" -delete
  log "built $out"
  echo "$out"
}

case "${1:-}" in
  container) container ;;
  vm) vm ;;
  accel) cat "$(accel_file)" 2>/dev/null || echo tcg,thread=multi ;;
  *) echo "usage: $0 container|vm|accel" >&2; exit 2 ;;
esac
