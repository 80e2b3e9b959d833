#!/bin/sh
# /init of qvirt's test guest (PID 1, busybox ash). It prepares a minimal system, then reports
# what the guest sees on the console as QVIRT-* marker lines (documented in README.md):
# disks by serial, NICs, CPUs, NoCloud/ConfigDrive data; it runs shell user-data, starts acpid
# (power button), qemu-ga when its channel exists, and a root shell on the console.
#
# Kernel command line knobs (all optional):
#   qvirt.hostname=NAME   hostname before cloud-init data overrides it (default qvirt-guest)
#   qvirt.dhcp=0          do not run udhcpc on NICs
#   qvirt.ga=0            do not start qemu-ga
#   qvirt.shell=0         no console shell (the console stays write-only)
#   qvirt.tick=MS         print QVIRT-TICK n=<counter> every MS milliseconds
#   qvirt.dirty=MIB       keep rewriting MIB MiB of guest memory
export PATH=/sbin:/bin:/usr/sbin:/usr/bin
umask 022

mount -t proc -o nosuid,nodev,noexec proc /proc
mount -t sysfs -o nosuid,nodev,noexec sysfs /sys
mount -t devtmpfs -o mode=0755,nosuid devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /run
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin
ln -sf /proc/self/fd/1 /dev/stdout
ln -sf /proc/self/fd/2 /dev/stderr
mkdir -p /run/qvirt/disks /run/qvirt/nics /dev/virtio-ports
exec </dev/console >/dev/console 2>&1

# marker, arg, disk_report, nic_report, cpu_online, ga_start, ... (shared with the uevent handler)
. /lib/qvirt/lib.sh

# ---- power: `poweroff`/`reboot`/`halt` and acpid/qemu-ga signal PID 1 ----------------------------
power() { # power poweroff|reboot
  trap '' USR1 USR2 TERM INT
  case $1 in
    reboot) marker "QVIRT-GUEST-REBOOT uptime=$(uptime_s)" ;;
    *) marker "QVIRT-GUEST-POWEROFF uptime=$(uptime_s)" ;;
  esac
  kill -TERM -1 2>/dev/null
  sleep 0.2
  umount /run/qvirt/cidata 2>/dev/null
  sync
  if [ "$1" = reboot ]; then reboot -f; else poweroff -f; fi
  while :; do sleep 1; done
}
trap 'power poweroff' USR1 USR2
trap 'power reboot' TERM INT
# Ctrl-Alt-Del becomes SIGINT to PID 1 instead of an immediate reset.
echo 0 > /proc/sys/kernel/ctrl-alt-del 2>/dev/null


hostname "$(arg qvirt.hostname qvirt-guest)"
marker "QVIRT-GUEST-BOOTED uptime=$(uptime_s) kernel=$(uname -r)"

# ---- drivers -----------------------------------------------------------------------------------
# All of them, whatever the machine has: devices plugged later then bind at once. Block devices
# are probed by the time modprobe returns (module init waits for the async probes it started).
modprobe -q -a $(cat /etc/qvirt-modules) 2>/dev/null

# Hot-plugged memory comes up movable, so it can be unplugged again.
[ -w /sys/devices/system/memory/auto_online_blocks ] &&
  echo online_movable > /sys/devices/system/memory/auto_online_blocks

# ---- hotplug: from here on the uevent handler reports devices that come and go ---------------------
uevent /lib/qvirt/uevent.sh >/dev/null 2>&1 &

ifconfig lo 127.0.0.1 up 2>/dev/null

# ---- coldplug report ---------------------------------------------------------------------------
for cpu in /sys/devices/system/cpu/cpu[0-9]*; do cpu_online "${cpu##*/cpu}"; done
marker "QVIRT-CPUS online=$(cat /sys/devices/system/cpu/online) possible=$(cat /sys/devices/system/cpu/possible)"
for mem in /sys/devices/system/memory/memory[0-9]*; do
  [ "$(cat "$mem/state" 2>/dev/null)" = offline ] && echo online_movable > "$mem/state" 2>/dev/null
done
for d in /sys/block/*; do disk_report QVIRT-DISK "${d##*/}"; done
for n in /sys/class/net/*; do nic_report QVIRT-NIC "${n##*/}"; done
marker "QVIRT-MEMORY total-kb=$(mem_total_kb)"

# ---- cloud-init: NoCloud (label cidata) or ConfigDrive (label config-2) --------------------------
yaml_or_json() { # yaml_or_json KEY FILE: first scalar value of KEY in a flat YAML or JSON document
  [ -f "$2" ] || return 0
  # JSON may be on one line: one member per line first (values here hold no commas or braces).
  tr ',{}' '\n\n\n' < "$2" | sed -n "s/^[[:space:]{,]*[\"']\{0,1\}$1[\"']\{0,1\}[[:space:]]*:[[:space:]]*[\"']\{0,1\}\([^\"',}]*\).*/\1/p" 2>/dev/null |
    head -n 1 | sed 's/[[:space:]]*$//'
}
run_user_data() { # run_user_data FILE
  [ -s "$1" ] || return 0
  case $(head -c 2 "$1") in
    '#!')
      cp "$1" /run/qvirt/user-data
      chmod 0700 /run/qvirt/user-data
      marker "QVIRT-USERDATA-START"
      (cd /root && sh /run/qvirt/user-data </dev/null)
      marker "QVIRT-USERDATA-EXIT code=$?"
      ;;
    *)
      marker "QVIRT-USERDATA-SKIPPED reason=not-a-script first-line=$(head -n 1 "$1" | tr -d '\r\n' | tr -c 'A-Za-z0-9#:_.-' _ | head -c 40)"
      ;;
  esac
}
cidata() {
  local dev src dir id host
  for label in cidata CIDATA config-2 CONFIG-2; do
    dev=$(findfs "LABEL=$label" 2>/dev/null) && break
  done
  [ -n "$dev" ] || return 0
  dir=/run/qvirt/cidata
  mkdir -p "$dir"
  if ! mount -o ro "$dev" "$dir" 2>/dev/null; then
    marker "QVIRT-CIDATA-ERROR dev=${dev#/dev/} reason=mount-failed"
    return 0
  fi
  if [ -f "$dir/openstack/latest/meta_data.json" ]; then
    src=configdrive
    id=$(yaml_or_json uuid "$dir/openstack/latest/meta_data.json")
    host=$(yaml_or_json hostname "$dir/openstack/latest/meta_data.json")
    [ -n "$host" ] || host=$(yaml_or_json name "$dir/openstack/latest/meta_data.json")
    ud=$dir/openstack/latest/user_data
  else
    src=nocloud
    id=$(yaml_or_json instance-id "$dir/meta-data")
    host=$(yaml_or_json local-hostname "$dir/meta-data")
    [ -n "$host" ] || host=$(yaml_or_json hostname "$dir/meta-data")
    ud=$dir/user-data
  fi
  [ -n "$host" ] && hostname "${host%%.*}"
  marker "QVIRT-CIDATA instance-id=$id source=$src dev=${dev#/dev/} hostname=$(hostname)"
  run_user_data "$ud"
}
cidata

# ---- ACPI power button, guest agent ------------------------------------------------------------
acpid -c /etc/acpi -l /run/acpid.log 2>/dev/null
ga_start

# ---- test workloads (kernel command line knobs) -------------------------------------------------
# qvirt.tick=MS: a counter on the console every MS milliseconds (live migration: no gap, no reboot).
tick=$(arg qvirt.tick 0)
if [ "$tick" != 0 ]; then
  (
    n=0
    while :; do
      marker "QVIRT-TICK n=$n uptime=$(uptime_s)"
      n=$((n + 1))
      usleep $((tick * 1000))
    done
  ) &
fi
# qvirt.dirty=MIB: rewrite MIB MiB of memory (tmpfs) in a loop, as fast as the guest can.
dirty=$(arg qvirt.dirty 0)
if [ "$dirty" != 0 ]; then
  (
    dd if=/dev/urandom of=/run/qvirt/dirty-src bs=1M count=4 2>/dev/null
    while :; do
      i=0
      while [ $i -lt "$dirty" ]; do
        dd if=/run/qvirt/dirty-src of=/run/qvirt/dirty bs=1M count=4 seek=$i conv=notrunc 2>/dev/null
        i=$((i + 4))
      done
    done
  ) &
fi

marker "QVIRT-GUEST-READY uptime=$(uptime_s)"

# ---- console shell, respawned; PID 1 also reaps orphans while it waits ----------------------------
if [ "$(arg qvirt.shell 1)" = 0 ]; then
  while :; do sleep 3600 & wait $!; done
fi
while :; do
  : > /run/qvirt/console-shell
  setsid cttyhack sh -l &
  sh_pid=$!
  while kill -0 "$sh_pid" 2>/dev/null; do wait "$sh_pid"; done
  sleep 0.5
done
