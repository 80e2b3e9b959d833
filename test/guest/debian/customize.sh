#!/usr/bin/env bash
# mmdebstrap's customize hook for the Debian guest (test/guest/debian/build.sh): run on the host
# with the guest's root directory once every package is installed.
#
#   customize.sh ROOT LABEL
#
# What it changes from a stock Debian 12 cloud system, and why:
#  - fstab mounts the root filesystem by LABEL (the disk has no partition table: direct kernel boot);
#  - the initrd carries only what finding and checking that root needs (virtio, ext4, e2fsck;
#    FSTYPE because the label cannot be resolved in the build chroot): smaller, faster under TCG;
#  - cloud-init reads NoCloud only (no datasource probing) and runs the modules a test VM uses;
#    its ssh module makes the host keys at first boot (ed25519 and ecdsa only: RSA keygen under TCG
#    is slow), so no two guests share keys and the image ships none;
#  - systemd-networkd brings up the NIC cloud-init configures, waiting for any one link (not all);
#  - timers that would wake a test VM for maintenance (apt, e2scrub, fstrim) are masked.
set -euo pipefail
root=$1
label=$2
[ -d "$root/etc" ] || { echo "customize.sh: $root is not a root filesystem" >&2; exit 1; }

echo debian > "$root/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 debian\n::1 localhost ip6-localhost ip6-loopback\n' > "$root/etc/hosts"
: > "$root/etc/resolv.conf"
printf 'LABEL=%s / ext4 defaults,noatime,errors=remount-ro 0 1\n' "$label" > "$root/etc/fstab"
# systemd makes a machine-id at first boot.
: > "$root/etc/machine-id"
rm -f "$root/var/lib/dbus/machine-id"

# ---- initrd ---------------------------------------------------------------------------------------
printf 'MODULES=list\nCOMPRESS=zstd\nFSTYPE=ext4\n' > "$root/etc/initramfs-tools/conf.d/qvirt.conf"
printf '%s\n' virtio_pci virtio_blk virtio_scsi sd_mod ext4 crc32c_generic > "$root/etc/initramfs-tools/modules"
chroot "$root" update-initramfs -u -k all >&2

# ---- cloud-init ---------------------------------------------------------------------------------------
cat > "$root/etc/cloud/cloud.cfg.d/90-qvirt.cfg" <<'EOF'
# qvirt's Debian test guest: KubeVirt's cloudInitNoCloud disk (label cidata) is the only source.
datasource_list: [NoCloud, None]
# /etc/hosts names the hostname cloud-init sets (the VMI's name): sudo resolves it.
manage_etc_hosts: true
ssh_deletekeys: true
ssh_genkeytypes: [ed25519, ecdsa]
cloud_init_modules:
 - seed_random
 - bootcmd
 - write-files
 - set_hostname
 - update_hostname
 - update_etc_hosts
 - users-groups
 - ssh
cloud_config_modules:
 - set-passwords
 - runcmd
cloud_final_modules:
 - write-files-deferred
 - scripts-vendor
 - scripts-per-once
 - scripts-per-boot
 - scripts-per-instance
 - scripts-user
 - ssh-authkey-fingerprints
 - keys-to-console
 - final-message
 - power-state-change
EOF

# ---- ssh ---------------------------------------------------------------------------------------------
rm -f "$root"/etc/ssh/ssh_host_*
cat > "$root/etc/ssh/sshd_config.d/qvirt.conf" <<'EOF'
# The host keys cloud-init makes at first boot (ssh_genkeytypes).
HostKey /etc/ssh/ssh_host_ed25519_key
HostKey /etc/ssh/ssh_host_ecdsa_key
EOF

# ---- network and services ---------------------------------------------------------------------------
chroot "$root" systemctl enable systemd-networkd.service >&2
mkdir -p "$root/etc/systemd/system/systemd-networkd-wait-online.service.d"
cat > "$root/etc/systemd/system/systemd-networkd-wait-online.service.d/qvirt.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=/lib/systemd/systemd-networkd-wait-online --any --timeout=60
EOF
for unit in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer dpkg-db-backup.timer; do
  if [ -e "$root/lib/systemd/system/$unit" ]; then chroot "$root" systemctl mask "$unit" >&2; fi
done
