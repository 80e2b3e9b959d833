#!/usr/bin/env bash
# Builds qvirt's Debian guest: a real Debian 12 (bookworm) system made with mmdebstrap from
# Debian's archive — systemd, cloud-init (NoCloud), openssh-server, qemu-guest-agent and the cloud
# kernel — for tests where the guest's own software matters (ssh/scp through virtctl, the agent).
#
#   test/guest/debian/build.sh     prints four lines: the root disk (qcow2, compressed), the
#                                  kernel, the initrd, and the kernel command line that boots them
#
# The VM boots it by direct kernel boot (spec.domain.firmware.kernelBoot: no firmware bootloader,
# no grub) with the disk as a containerDisk on the virtio bus; the root filesystem is found by its
# label. Everything comes from Debian packages; the .debs are kept in <cache>/debs across builds.
# The result lives in <cache>/<hash>/ where <hash> is the sha256 of this script and customize.sh
# (the mmdebstrap hook that configures the guest), so a second run
# prints the cached paths at once. Concurrent runs wait for each other (flock) and build once.
#
# Environment:
#   QVIRT_GUEST_CACHE    cache root (default <repo>/.cache/guest); this guest goes under debian/
#   QVIRT_DEBIAN_MIRROR  Debian mirror (default http://deb.debian.org/debian)
set -euo pipefail
# Debian's own tools first: mmdebstrap runs its mmtarfilter (`#!/usr/bin/env python3`) once per
# essential package, and a python3 found first on a user's PATH through a version manager's shim
# (pyenv's: several bash processes a call, ~0.7 s of CPU against ~0.05 s) cost ~40 s of the build.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache_root=${QVIRT_GUEST_CACHE:-$repo/.cache/guest}/debian
mirror=${QVIRT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
security_mirror=${mirror%/debian}/debian-security
[ "$security_mirror" != "$mirror" ] || security_mirror=http://deb.debian.org/debian-security

log() { echo "debian-guest-build: $*" >&2; }
die() { log "error: $*"; exit 1; }

# The root filesystem's label: the kernel command line finds the root disk by it, whatever the
# disk's name in the guest (vda, vdb: the order of virtio devices is the launcher's affair).
# quiet: kernel and systemd status lines on the emulated UART cost ~5 s of a ~35 s boot under TCG;
# failures and cloud-init's own lines still reach the console.
label=qvirt-debian
cmdline="root=LABEL=$label ro console=ttyS0 quiet"

inputs=("$here/build.sh" "$here/customize.sh")
for f in "${inputs[@]}"; do [ -f "$f" ] || die "missing build input $f"; done
hash=$( (for f in "${inputs[@]}"; do echo "== ${f##*/}"; cat "$f"; done; echo "mirror=$mirror") | sha256sum | cut -c1-16)
out=$cache_root/$hash

print_cached() {
  [ -s "$out/disk.qcow2" ] && [ -s "$out/kernel-path" ] && [ -s "$out/initrd.img" ] && [ -s "$out/cmdline" ] || return 1
  local kernel_name; kernel_name=$(cat "$out/kernel-path")
  echo "$out/disk.qcow2"
  echo "$out/${kernel_name##*/}"
  echo "$out/initrd.img"
  cat "$out/cmdline"
}
print_cached && exit 0

[ "$(id -u)" = 0 ] || die "building the Debian guest needs root (mmdebstrap chroots, mkfs.ext4 -d keeps owners)"

# ---- host tools ------------------------------------------------------------------------------
need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v qemu-img >/dev/null || need+=(qemu-utils)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v xz >/dev/null || need+=(xz-utils)
command -v zstd >/dev/null || need+=(zstd)
command -v lz4 >/dev/null || need+=(lz4)
command -v flock >/dev/null || need+=(util-linux)
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

mkdir -p "$cache_root/debs"
exec 9>"$cache_root/.lock"
flock 9
print_cached && exit 0   # another build finished while this one waited

# A scratch directory on tmpfs when there is room (the tree and the raw image: about 1.5 GiB).
scratch_parent=$cache_root
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR==2 {print $4}')" -gt 3145728 ]; then
  scratch_parent=/dev/shm
fi
work=$(mktemp -d "$scratch_parent/qvirt-debian.XXXXXX")
chmod 0755 "$work"   # apt downloads as _apt inside the tree
cleanup() {
  # mmdebstrap unmounts what it mounted; a failed hook may leave a mount behind.
  for m in $(awk -v w="$work" 'index($2, w) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
root=$work/root
mkdir -p "$root"

# ---- the system --------------------------------------------------------------------------------
# cloud kernel: virtio only (no AHCI), smaller and faster to boot; the VM puts its disks on virtio.
# dbus: systemd-logind's bus. iproute2: cloud-init's networkd renderer. zstd: the initrd's compression.
# e2fsprogs (not essential since bookworm): fsck of the root filesystem at boot. sudo: the
# passwordless sudo cloud-init gives its users (a Recommends of cloud-init, as in Debian's cloud images).
# systemd-networkd (part of systemd) brings up the NIC cloud-init configures; no ifupdown, no netplan.
packages=(
  linux-image-cloud-amd64 systemd-sysv udev dbus iproute2 netbase e2fsprogs
  cloud-init openssh-server qemu-guest-agent zstd sudo
)
log "mmdebstrap bookworm (${packages[*]})"
# Hooks: the .debs in and out of the cache; documentation left out (dpkg path-exclude); the kernel's
# first initrd (made as it installs) small at once: customize.sh makes the one that boots, and
# initramfs-tools' default (MODULES=most) cost ~23 s of CPU (of ~150) for an initrd thrown away.
mmdebstrap --variant=apt --skip=essential/unlink --components=main \
  --include="$(IFS=,; echo "${packages[*]}")" \
  --dpkgopt='path-exclude=/usr/share/man/*' \
  --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/locale/*' \
  --dpkgopt='path-include=/usr/share/locale/locale.alias' \
  --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
  --essential-hook='mkdir -p "$1"/etc/initramfs-tools/conf.d && printf "MODULES=list\nCOMPRESS=zstd\n" > "$1"/etc/initramfs-tools/conf.d/qvirt.conf' \
  --setup-hook="sync-in '$cache_root/debs' /var/cache/apt/archives/" \
  --customize-hook="sync-out /var/cache/apt/archives '$cache_root/debs'" \
  --customize-hook="'$here/customize.sh' \"\$1\" $label" \
  bookworm "$root" \
  "deb $mirror bookworm main" \
  "deb $mirror bookworm-updates main" \
  "deb $security_mirror bookworm-security main" >&2
# apt's lock and partial/ came out with the .debs; .debs unused for a month (superseded) go.
rm -rf "$cache_root/debs/partial" "$cache_root/debs/lock"
find "$cache_root/debs" -name '*.deb' -mtime +30 -delete 2>/dev/null || true

vmlinuz=$(ls "$root"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$vmlinuz" ] || die "no /boot/vmlinuz-* in the guest"
kver=${vmlinuz##*/vmlinuz-}
[ -s "$root/boot/initrd.img-$kver" ] || die "no /boot/initrd.img-$kver in the guest"

stage=$work/out
mkdir -p "$stage"
cp "$vmlinuz" "$stage/vmlinuz"
cp "$root/boot/initrd.img-$kver" "$stage/initrd.img"

# ---- kernel: vmlinux (ELF, PVH entry) when it can be extracted, else the bzImage -----------------
# QEMU starts an ELF kernel with a PVH note directly: no real-mode setup, no in-guest decompression
# (seconds under TCG). As in test/guest/build.sh.
kernel_name=vmlinuz
if grep -q '^CONFIG_PVH=y' "$root/boot/config-$kver" 2>/dev/null; then
  extract_vmlinux() { # extract_vmlinux BZIMAGE OUT: the payload after the first known compression magic
    local magic tool off
    # Debian's cloud kernel is LZ4 (the kernel's legacy LZ4 frame: lz4 -d reads it, then complains
    # about the size word after it, hence no exit status check), the generic one xz.
    for magic in lz4:$'\x02\x21\x4c\x18' xz:$'\xfd7zXZ' zstd:$'\x28\xb5\x2f\xfd' gzip:$'\x1f\x8b\x08'; do
      tool=${magic%%:*}
      off=$(LC_ALL=C grep -abo -m1 "${magic#*:}" "$1" 2>/dev/null | head -n 1 | cut -d: -f1)
      [ -n "$off" ] || continue
      case $tool in
        lz4) tail -c +$((off + 1)) "$1" | lz4 -dc > "$2" 2>/dev/null || true ;;
        xz) tail -c +$((off + 1)) "$1" | xz -dc > "$2" 2>/dev/null ;;
        zstd) tail -c +$((off + 1)) "$1" | zstd -qdc > "$2" 2>/dev/null ;;
        gzip) tail -c +$((off + 1)) "$1" | gzip -dc > "$2" 2>/dev/null ;;
      esac
      [ "$(head -c 4 "$2" | od -An -c | tr -d ' ')" = '177ELF' ] && return 0
    done
    return 1
  }
  if extract_vmlinux "$vmlinuz" "$stage/vmlinux"; then
    kernel_name=vmlinux
  else
    rm -f "$stage/vmlinux"
    log "note: could not extract vmlinux from $vmlinuz; the guest boots from the bzImage"
  fi
fi

# ---- the root disk: ext4 made from the tree, as a compressed qcow2 ---------------------------------
# 2 GiB virtual; inode tables and journal initialised here, so the guest's ext4lazyinit does not
# write them (into the VM's overlay, under TCG) after boot.
raw=$work/disk.raw
truncate -s 2G "$raw"
mkfs.ext4 -q -F -L "$label" -m 0 -d "$root" -E lazy_itable_init=0,lazy_journal_init=0,root_owner=0:0 "$raw"
compression=zlib
qemu-img create -f qcow2 -o help 2>/dev/null | grep -q compression_type && compression=zstd
qemu-img convert -q -c -f raw -O qcow2 -o "compression_type=$compression" "$raw" "$stage/disk.qcow2"
rm -f "$raw"

echo "$cmdline" > "$stage/cmdline"
echo "$kernel_name" > "$stage/kernel-path"
echo "linux $kver; $(chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' cloud-init openssh-server qemu-guest-agent systemd | tr '\n' ';')" > "$stage/PACKAGES"
chroot "$root" dpkg-query -W -f '${Package} ${Version}\n' > "$stage/dpkg-list"

mkdir -p "$cache_root"
# The stage may be on tmpfs: copy it next to its destination first, then rename (atomic).
final_tmp=$(mktemp -d "$cache_root/.build.XXXXXX")
cp -a "$stage/." "$final_tmp/"
mv -T "$final_tmp" "$out" || die "could not move the build to $out"
# Builds from earlier versions of this script, unused for a day, go.
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9a-f]\{16\}' ! -name "$hash" -mtime +1 -exec rm -rf {} + 2>/dev/null || true
log "built $out (Linux $kver, disk $(du -k "$out/disk.qcow2" | cut -f1) KiB, initrd $(du -k "$out/initrd.img" | cut -f1) KiB, kernel $kernel_name)"
print_cached
