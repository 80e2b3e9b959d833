#!/usr/bin/env bash
# Builds qvirt's test guest: a stock Debian kernel plus a busybox initramfs whose /init (init.sh)
# reports what the guest sees (disks by serial, NICs, CPUs, cloud-init data) on the serial console.
#
#   src/local/guest/build.sh     prints two lines: the kernel path, then the initramfs path
#
# The kernel printed is vmlinux (ELF, PVH entry: SeaBIOS/q35 boots it without decompressing, seconds
# faster under TCG) when it can be extracted, else the bzImage; the bzImage is always next to it
# as vmlinuz (for OVMF/EFI, which needs the EFI stub).
#
# Everything comes from Debian packages fetched with `apt-get download` (nothing is installed but
# the host tools cpio/kmod/xz if missing). The result lives in .cache/guest/<hash>/ where <hash> is
# the sha256 of this script and the files copied into the guest, so a second run prints the cached
# paths at once. Concurrent runs are safe: each builds in its own temp dir and renames it into place.
#
# Environment:
#   QVIRT_GUEST_CACHE   cache root (default <repo>/.cache/guest)
#   QVIRT_GUEST_KERNEL  a linux-image package to use instead of the newest generic amd64 one
#   QVIRT_GUEST_NO_QGA=1  leave qemu-guest-agent out
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
cache_root=${QVIRT_GUEST_CACHE:-$repo/.cache/guest}

log() { echo "guest-build: $*" >&2; }
die() { log "error: $*"; exit 1; }

# Inputs whose content defines the build. Anything copied into the initramfs is listed here.
inputs=("$here/build.sh" "$here/init.sh" "$here/lib.sh" "$here/uevent.sh" "$here/udhcpc.sh" "$here/dhcpcd.sh")
for f in "${inputs[@]}"; do [ -f "$f" ] || die "missing build input $f"; done
hash=$( (for f in "${inputs[@]}"; do echo "== ${f##*/}"; cat "$f"; done; \
         echo "kernel=${QVIRT_GUEST_KERNEL:-}"; echo "noqga=${QVIRT_GUEST_NO_QGA:-}") \
        | sha256sum | cut -c1-16)
out=$cache_root/$hash

# kernel-path names the kernel file inside $out (not an absolute path: the cache may be reached
# through another path, a symlinked .cache or a moved checkout, than the one that built it).
if [ -s "$out/initrd.img" ] && [ -s "$out/kernel-path" ]; then
  kernel_name=$(cat "$out/kernel-path")
  echo "$out/${kernel_name##*/}"
  echo "$out/initrd.img"
  exit 0
fi

# ---- host tools ------------------------------------------------------------------------------
need=()
command -v cpio >/dev/null || need+=(cpio)
command -v depmod >/dev/null || need+=(kmod)
command -v xz >/dev/null || need+=(xz-utils)
command -v gzip >/dev/null || need+=(gzip)
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || die "missing host tools: ${need[*]} (apt-get install ${need[*]})"
  log "installing ${need[*]}"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi

mkdir -p "$cache_root/debs"
work=$(mktemp -d "$cache_root/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---- package downloads (kept in .cache/guest/debs across builds) -----------------------------
updated=0
apt_update_once() {
  if [ $updated = 0 ]; then
    updated=1
    log "apt-get update"
    apt-get update -qq >&2 || true
  fi
}

# The kernel is the newest generic amd64 image of Debian 12's own kernel series (the one the
# linux-image-amd64 meta-package points to, 6.1): not cloud (it lacks AHCI, KubeVirt's default disk
# bus), not rt, not dbg/unsigned. Not the newer 6.12 series that bookworm also carries: with QEMU
# 7.2's ACPI tables Linux >= 6.9 registers no hot-pluggable CPUs ("Allowing 1 present CPUs plus 0
# hotplug CPUs" for -smp 1,maxcpus=2), so vCPU hotplug could not be tested; 6.1 allows them.
pick_kernel() {
  local meta
  meta=$(apt-cache depends linux-image-amd64 2>/dev/null \
    | sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -n 1)
  if [ -n "$meta" ]; then echo "$meta"; return 0; fi
  apt-cache pkgnames linux-image- 2>/dev/null \
    | grep -E '^linux-image-[0-9][0-9.]*[-+][^ ]*-amd64$' \
    | grep -v -E -- '-(cloud|rt)-amd64$|-dbg|-unsigned' \
    | sort -V | tail -n 1
}

kernel_pkg=${QVIRT_GUEST_KERNEL:-}
if [ -z "$kernel_pkg" ]; then
  kernel_pkg=$(pick_kernel || true)
  if [ -z "$kernel_pkg" ]; then apt_update_once; kernel_pkg=$(pick_kernel || true); fi
  [ -n "$kernel_pkg" ] || die "no linux-image-*-amd64 package known to apt"
fi
pkgs=("$kernel_pkg" busybox-static dhcpcd-base)
[ "${QVIRT_GUEST_NO_QGA:-}" = 1 ] || pkgs+=(qemu-guest-agent)

# Candidate versions of several packages in one apt-cache call (each call parses apt's lists).
declare -A candidate=()
resolve() {
  local pkg ver
  while read -r pkg ver; do candidate[$pkg]=$ver; done < <(apt-cache policy "$@" 2>/dev/null \
    | awk '/^[^ ].*:$/ {p=substr($0, 1, length($0)-1)} /^ *Candidate:/ {print p, $2}')
}
resolve "${pkgs[@]}"

# fetch PKG: prints the path of PKG's .deb in the deb cache, downloading it if needed.
fetch() {
  local pkg=$1 ver file
  ver=${candidate[$pkg]:-}
  if [ -z "$ver" ] || [ "$ver" = "(none)" ]; then
    apt_update_once
    resolve "$pkg"
    ver=${candidate[$pkg]:-}
  fi
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || { log "apt knows no package $pkg"; return 1; }
  file="$cache_root/debs/${pkg}_${ver//:/%3a}_amd64.deb"
  if [ ! -s "$file" ]; then
    local dl; dl=$(mktemp -d "$work/dl.XXXXXX")
    if ! (cd "$dl" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1); then
      apt_update_once
      (cd "$dl" && apt-get download -q "$pkg=$ver" >&2) || { log "apt-get download $pkg failed"; return 1; }
    fi
    local got; got=$(ls "$dl"/*.deb | head -n 1)
    mv -f "$got" "$file"   # rename within one filesystem: atomic for a concurrent build
  fi
  echo "$file"
}

log "kernel package $kernel_pkg"
kernel_deb=$(fetch "$kernel_pkg") || die "cannot download $kernel_pkg"
busybox_deb=$(fetch busybox-static) || die "cannot download busybox-static"
# dhcpcd: the DHCPv6 client (busybox-static has no udhcpc6). It needs only libc.
dhcpcd_deb=$(fetch dhcpcd-base) || { log "warning: no dhcpcd-base; the guest gets no DHCPv6 client"; dhcpcd_deb=; }
qga_deb=
if [ "${QVIRT_GUEST_NO_QGA:-}" != 1 ]; then
  qga_deb=$(fetch qemu-guest-agent) || { log "warning: no qemu-guest-agent; building without it"; qga_deb=; }
fi

# ---- unpack ------------------------------------------------------------------------------------
# The module tree is large (400 MB unpacked for 6.1): unpack it on tmpfs when there is one, and
# leave out the driver families a q35 test guest never meets.
scratch=$work
if [ -d /dev/shm ] && [ -w /dev/shm ] && [ "$(df -Pk /dev/shm | awk 'NR==2 {print $4}')" -gt 1048576 ]; then
  scratch=$(mktemp -d /dev/shm/qvirt-guest.XXXXXX)
  trap 'rm -rf "$work" "$scratch"' EXIT
fi
kx=$scratch/kernel
mkdir -p "$kx"
skip=()
for d in drivers/gpu drivers/media drivers/infiniband drivers/staging drivers/net/wireless \
         drivers/net/ethernet/mellanox drivers/net/ethernet/broadcom drivers/iio drivers/hwmon \
         drivers/bluetooth drivers/isdn drivers/mtd drivers/comedi sound net/wireless net/mac80211; do
  skip+=(--exclude="./lib/modules/*/kernel/$d")
done
dpkg-deb --fsys-tarfile "$kernel_deb" \
  | tar -x -C "$kx" --wildcards "${skip[@]}" './boot/vmlinuz-*' './boot/config-*' './lib/modules/*' 2>/dev/null || true
vmlinuz=$(ls "$kx"/boot/vmlinuz-* 2>/dev/null | head -n 1)
[ -n "$vmlinuz" ] || die "$kernel_pkg has no /boot/vmlinuz-*"
kver=${vmlinuz##*/vmlinuz-}
kmods=$kx/lib/modules/$kver
[ -d "$kmods" ] || die "$kernel_pkg has no modules for $kver"

root=$work/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,run,tmp,mnt,root,var,lib/qvirt}
ln -s ../run "$root/var/run"
dpkg-deb -x "$busybox_deb" "$work/busybox"
install -m 0755 "$work/busybox/bin/busybox" "$root/bin/busybox"
for applet in $("$root/bin/busybox" --list-full); do
  [ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done

# ---- kernel modules ----------------------------------------------------------------------------
# What the guest may meet on a KubeVirt q35 machine: virtio devices, SATA (ICH9 AHCI), SCSI disks
# and CD-ROMs, USB (xhci, storage, tablet), e1000/e1000e NICs, cloud-init media (iso9660, vfat),
# pvpanic, the i6300esb watchdog, vsock, and the ACPI power button (evdev for acpid).
wanted=(
  button evdev
  virtio_pci virtio_blk virtio_scsi virtio_net virtio_console virtio_rng virtio_balloon virtio_mem
  virtio_input vmw_vsock_virtio_transport
  ahci libahci libata sd_mod sr_mod cdrom scsi_mod sg
  isofs vfat fat nls_cp437 nls_iso8859_1 nls_utf8
  pvpanic pvpanic_pci pvpanic_mmio i6300esb
  xhci_pci xhci_hcd ehci_pci ehci_hcd uhci_hcd usb_storage usbhid hid_generic
  e1000 e1000e
)
declare -A modpath=()
while IFS= read -r f; do
  n=${f##*/}; n=${n%%.ko*}; n=${n//-/_}
  modpath[$n]=$f
done < <(find "$kmods/kernel" -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz')

declare -A chosen=()
add_module() {
  local n=${1//-/_} f dep
  [ -n "${chosen[$n]:-}" ] && return 0
  f=${modpath[$n]:-}
  if [ -z "$f" ]; then
    # Built into the kernel, or absent from this flavour: nothing to copy.
    grep -q -E "/${n//_/[-_]}\.ko\$" "$kmods/modules.builtin" 2>/dev/null || log "note: module $n not in $kernel_pkg"
    return 0
  fi
  chosen[$n]=$f
  for dep in $(modinfo -F depends "$f" | tr ',' ' '); do add_module "$dep"; done
}
for m in "${wanted[@]}"; do add_module "$m"; done

# unsign KO: drops the signature appended to a module (struct module_signature, 12 bytes, then the
# magic; its last 4 bytes are the signature's length, big-endian). The kernel then skips verifying
# it (and taints itself once, quietly): under TCG the RSA check and hash of the ~40 modules /init
# loads took ~0.5 s of CPU per boot (modprobe 1.25 s -> 0.8 s, measured 2026-11-27). Debian's kernel
# refuses unsigned modules only in lockdown (UEFI Secure Boot), which this guest does not boot in.
unsign() {
  local f=$1 size b len
  size=$(stat -c %s "$f")
  [ "$size" -gt 40 ] && [ "$(tail -c 28 "$f")" = "~Module signature appended~" ] || return 0
  read -r -a b < <(od -An -tu1 -j $((size - 32)) -N4 "$f")
  len=$(( (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3] ))
  [ $((size - 40 - len)) -gt 0 ] && truncate -s $((size - 40 - len)) "$f"
}

mroot=$root/lib/modules/$kver
mkdir -p "$mroot"
for n in "${!chosen[@]}"; do
  f=${chosen[$n]}
  rel=${f#"$kmods"/}
  dest=$mroot/${rel%.xz}; dest=${dest%.zst}; dest=${dest%.gz}
  mkdir -p "$(dirname "$dest")"
  # busybox modprobe cannot read compressed modules: store them plain.
  case $f in
    *.xz) xz -dc "$f" > "$dest" ;;
    *.zst) zstd -qdc "$f" > "$dest" ;;
    *.gz) gzip -dc "$f" > "$dest" ;;
    *) cp "$f" "$dest" ;;
  esac
  unsign "$dest"
done
for meta in modules.builtin modules.builtin.modinfo modules.order; do
  [ -f "$kmods/$meta" ] && sed -e 's/\.ko\.\(xz\|zst\|gz\)$/.ko/' "$kmods/$meta" > "$mroot/$meta"
done
depmod -b "$root" "$kver" || die "depmod failed for $kver"
# /init loads exactly these (modprobe pulls in the dependencies).
printf '%s\n' "${wanted[@]}" > "$root/etc/qvirt-modules"
echo "$kver" > "$root/etc/qvirt-kernel-release"

# copy_libs BIN LD_LIBRARY_PATH: the shared libraries BIN needs (and the loader) into the guest.
copy_libs() {
  LD_LIBRARY_PATH=$2 ldd "$1" | awk '/=>/ {print $1, $3} !/=>/ && $1 ~ /^\// {print $1, $1}' |
  while read -r soname path; do
    [ -f "$path" ] || continue
    case $soname in
      /*) dest=$root$soname ;;                                  # the dynamic loader, by its own path
      *) dest=$root/lib/x86_64-linux-gnu/$soname ;;
    esac
    mkdir -p "$(dirname "$dest")"
    cp -L "$path" "$dest"
  done
  mkdir -p "$root/lib64"
  [ -e "$root/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
}

# ---- qemu-guest-agent with the shared libraries it needs ---------------------------------------
if [ -n "$qga_deb" ]; then
  dpkg-deb -x "$qga_deb" "$work/qga"
  qga_bin=$work/qga/usr/sbin/qemu-ga
  libdirs=()
  missing=$(ldd "$qga_bin" 2>/dev/null | awk '/not found/ {print $1}' || true)
  if [ -n "$missing" ]; then
    # Fetch the agent's direct dependencies and resolve against them.
    deps=$(dpkg-deb -f "$qga_deb" Depends | tr ',' '\n' | sed -e 's/(.*)//' -e 's/|.*//' -e 's/ //g' | grep -v '^$')
    resolve $deps
    for d in $deps; do
      deb=$(fetch "$d") || continue
      dpkg-deb -x "$deb" "$work/qgalibs"
    done
    for d in "$work"/qgalibs/lib/x86_64-linux-gnu "$work"/qgalibs/usr/lib/x86_64-linux-gnu; do
      [ -d "$d" ] && libdirs+=("$d")
    done
  fi
  lp=$(IFS=:; echo "${libdirs[*]:-}")
  if LD_LIBRARY_PATH=$lp ldd "$qga_bin" | grep -q 'not found'; then
    log "warning: qemu-ga libraries unresolved, building without the agent:"
    LD_LIBRARY_PATH=$lp ldd "$qga_bin" | grep 'not found' >&2
  else
    install -D -m 0755 "$qga_bin" "$root/usr/sbin/qemu-ga"
    copy_libs "$qga_bin" "$lp"
  fi
fi

# ---- dhcpcd (DHCPv6 only; the kernel takes the router advertisements) ---------------------------
if [ -n "$dhcpcd_deb" ]; then
  dpkg-deb -x "$dhcpcd_deb" "$work/dhcpcd"
  if ldd "$work/dhcpcd/usr/sbin/dhcpcd" | grep -q 'not found'; then
    log "warning: dhcpcd libraries unresolved, building without it"
  else
    install -D -m 0755 "$work/dhcpcd/usr/sbin/dhcpcd" "$root/usr/sbin/dhcpcd"
    copy_libs "$work/dhcpcd/usr/sbin/dhcpcd" ""
    mkdir -p "$root/var/lib/dhcpcd"
    # No SLAAC, no DHCPv4 (udhcpc does that): one address by DHCPv6 (Rapid Commit, as KubeVirt's
    # server answers it); the kernel processes the router advertisements (default route, on-link).
    printf 'ipv6only\nnoipv6rs\nia_na\noption rapid_commit\noption domain_name_servers\n' > "$root/etc/dhcpcd.conf"
  fi
fi

# ---- the guest's own files -------------------------------------------------------------------
install -m 0755 "$here/init.sh" "$root/init"
install -m 0644 "$here/lib.sh" "$root/lib/qvirt/lib.sh"
install -m 0755 "$here/uevent.sh" "$root/lib/qvirt/uevent.sh"
install -m 0755 "$here/udhcpc.sh" "$root/lib/qvirt/udhcpc.sh"
install -m 0755 "$here/dhcpcd.sh" "$root/lib/qvirt/dhcpcd.sh"
kmajor=${kver%%-*}
cat > "$root/etc/os-release" <<EOF
NAME="qvirt test guest"
ID=qvirt-guest
ID_LIKE=debian
VERSION_ID="1"
VERSION="1 (busybox, Linux $kmajor)"
PRETTY_NAME="qvirt test guest 1"
HOME_URL="https://kubevirt.io/"
EOF
cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
nogroup:x:65534:
EOF
printf 'root::0:0:99999:7:::\n' > "$root/etc/shadow"
chmod 0600 "$root/etc/shadow"
printf '/bin/sh\n' > "$root/etc/shells"
cat > "$root/etc/profile" <<'EOF'
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
export PS1='\h:\w\$ '
EOF
printf '127.0.0.1 localhost\n::1 localhost\n' > "$root/etc/hosts"
# acpid runs /etc/acpi/<action> for the power button (busybox's default map: PWRF/00000080).
mkdir -p "$root/etc/acpi/PWRF"
printf '#!/bin/sh\nexec kill -USR2 1\n' > "$root/etc/acpi/PWRF/00000080"
chmod 0755 "$root/etc/acpi/PWRF/00000080"
# qemu-ga's guest-shutdown execs /sbin/shutdown -h|-r -P|-H +0 "...": route it to /init's handlers.
rm -f "$root/sbin/shutdown"
cat > "$root/sbin/shutdown" <<'EOF'
#!/bin/sh
# shutdown for the test guest: signal /init, which prints its marker and powers off or reboots.
sig=USR2
for a in "$@"; do
  case $a in
    -r) sig=TERM ;;
    -H) sig=USR1 ;;
  esac
done
exec kill -$sig 1
EOF
chmod 0755 "$root/sbin/shutdown"

# ---- kernel: the bzImage, and its vmlinux for PVH boot ------------------------------------------
# QEMU boots an ELF vmlinux with a PVH entry note directly (-kernel vmlinux): no real-mode setup and,
# above all, no decompression, which under TCG takes seconds (xz of ~66 MB). The bzImage stays for
# firmware that needs it (OVMF boots the EFI stub, not an ELF).
stage=$work/out
mkdir -p "$stage"
cp "$vmlinuz" "$stage/vmlinuz"
kernel_path=$out/vmlinuz
if grep -q '^CONFIG_PVH=y' "$kx/boot/config-$kver" 2>/dev/null; then
  extract_vmlinux() { # extract_vmlinux BZIMAGE OUT: the payload after the first known compression magic
    local magic tool off
    for magic in xz:$'\xfd7zXZ' zstd:$'\x28\xb5\x2f\xfd' gzip:$'\x1f\x8b\x08'; do
      tool=${magic%%:*}
      off=$(LC_ALL=C grep -abo -m1 "${magic#*:}" "$1" 2>/dev/null | head -n 1 | cut -d: -f1)
      [ -n "$off" ] || continue
      case $tool in
        xz) tail -c +$((off + 1)) "$1" | xz -dc > "$2" 2>/dev/null ;;
        zstd) tail -c +$((off + 1)) "$1" | zstd -qdc > "$2" 2>/dev/null ;;
        gzip) tail -c +$((off + 1)) "$1" | gzip -dc > "$2" 2>/dev/null ;;
      esac
      [ "$(head -c 4 "$2" | od -An -c | tr -d ' ')" = '177ELF' ] && return 0
    done
    return 1
  }
  if extract_vmlinux "$vmlinuz" "$stage/vmlinux"; then
    kernel_path=$out/vmlinux
  else
    rm -f "$stage/vmlinux"
    log "note: could not extract vmlinux from $vmlinuz; the guest boots from the bzImage"
  fi
fi

# ---- pack ----------------------------------------------------------------------------------------
# Uncompressed: the kernel unpacks a gzip initramfs at boot, and under TCG that costs more than the
# file's size saves (16 MB instead of 5.8; 0.6-0.8 s less CPU per boot to QVIRT-GUEST-READY, of
# ~5 s, measured 2026-11-27 in 8 alternating boots each). Container images compress their layers anyway.
(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio -o -H newc -0 -R 0:0 --quiet) > "$stage/initrd.img"
echo "$kernel_pkg $kver" > "$stage/KERNEL"
echo "${kernel_path##*/}" > "$stage/kernel-path"

mkdir -p "$cache_root"
if ! mv -T "$stage" "$out" 2>/dev/null; then
  # Another build won the race; its result is identical.
  [ -s "$out/initrd.img" ] || die "could not move the build to $out"
fi
# Builds from earlier versions of these inputs, unused for a day, go.
find "$cache_root" -mindepth 1 -maxdepth 1 -type d -regex '.*/[0-9a-f]\{16\}' ! -name "$hash" -mtime +1 -exec rm -rf {} + 2>/dev/null || true
log "built $out ($kernel_pkg, initramfs $(du -k "$out/initrd.img" | cut -f1) KiB, kernel ${kernel_path##*/})"
echo "$out/${kernel_path##*/}"
echo "$out/initrd.img"
