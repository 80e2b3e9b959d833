# Functions shared by /init and the uevent handler of qvirt's test guest (busybox ash).
# Every report is one QVIRT-* line written to /dev/console in a single write.

marker() {
  # Once the console shell runs, its prompt may have left the cursor mid-line: start a fresh one.
  if [ -e /run/qvirt/console-shell ]; then printf '\n%s\n' "$*"; else echo "$*"; fi > /dev/console
}
uptime_s() { local up _; read -r up _ < /proc/uptime; echo "$up"; }
mem_total_kb() { sed -n 's/^MemTotal:[[:space:]]*\([0-9]*\).*/\1/p' /proc/meminfo; }

arg() { # arg NAME DEFAULT: value of NAME= on the kernel command line
  local w
  for w in $(cat /proc/cmdline); do
    case $w in "$1="*) echo "${w#*=}"; return ;; esac
  done
  echo "$2"
}

# A field value without spaces: trimmed, inner whitespace as '_'.
field() { tr -d '\000' | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//' -e 's/[[:space:]][[:space:]]*/_/g'; }

# ---- disks -------------------------------------------------------------------------------------
disk_serial() { # disk_serial NAME
  local d=/sys/block/$1
  if [ -r "$d/serial" ]; then
    cat "$d/serial"                                   # virtio-blk
  elif [ -r "$d/device/vpd_pg80" ]; then
    tail -c +5 "$d/device/vpd_pg80" | tr -d '\000'   # SCSI/ATA unit serial number VPD page
  elif [ -r "$d/device/serial" ]; then
    cat "$d/device/serial"
  else
    ata_serial "$1"                                   # ATAPI CD-ROMs have no VPD pages
  fi 2>/dev/null | field
}
ata_serial() { # ata_serial NAME: serial number words (10-19) of the ATA/ATAPI IDENTIFY data
  local p id w
  p=$(readlink -f "/sys/block/$1/device" 2>/dev/null)
  case $p in */ata[0-9]*/*) p=${p%%/host*} ;; *) return 0 ;; esac
  for id in "$p"/link*/dev*/ata_device/dev*/id; do
    [ -r "$id" ] || continue
    for w in $(tr -s ' \n' '\n\n' < "$id" | sed -n '11,20p'); do
      printf "\\$(printf %o $((0x${w%??})))\\$(printf %o $((0x${w#??})))"
    done
    return 0
  done
}
disk_bus() { # disk_bus NAME: virtio | sata | scsi | usb
  case $1 in vd*) echo virtio; return ;; esac
  case $(readlink -f "/sys/block/$1/device" 2>/dev/null) in
    */usb[0-9]*) echo usb ;;
    */ata[0-9]*) echo sata ;;
    *) echo scsi ;;
  esac
}
disk_report() { # disk_report MARKER NAME
  case $2 in vd*|sd*|sr*) ;; *) return 0 ;; esac
  [ -d "/sys/block/$2" ] || return 0
  local serial
  serial=$(disk_serial "$2")
  echo "$serial" > "/run/qvirt/disks/$2"
  # CD-ROMs: poll for media changes, so an inserted or ejected medium raises a change event.
  case $2 in sr*) echo 2000 > "/sys/block/$2/events_poll_msecs" 2>/dev/null ;; esac
  marker "$1 name=$2 serial=$serial size=$(cat "/sys/block/$2/size") ro=$(cat "/sys/block/$2/ro") bus=$(disk_bus "$2")"
}
disk_removed() { # disk_removed NAME
  local serial=
  [ -f "/run/qvirt/disks/$1" ] && serial=$(cat "/run/qvirt/disks/$1")
  rm -f "/run/qvirt/disks/$1"
  marker "QVIRT-DISK-REMOVED name=$1 serial=$serial"
}

# ---- NICs --------------------------------------------------------------------------------------
nic_report() { # nic_report MARKER NAME
  local n=$2 drv
  [ "$n" = lo ] && return 0
  [ "$(cat "/sys/class/net/$n/type" 2>/dev/null)" = 1 ] || return 0    # Ethernet only
  drv=$(readlink "/sys/class/net/$n/device/driver" 2>/dev/null); drv=${drv##*/}
  [ "$drv" = virtio_net ] || [ -n "$drv" ] || drv=$(readlink "/sys/class/net/$n/device/../driver" 2>/dev/null)
  cat "/sys/class/net/$n/address" > "/run/qvirt/nics/$n"
  marker "$1 name=$n mac=$(cat "/sys/class/net/$n/address") driver=${drv##*/}"
  ifconfig "$n" up 2>/dev/null
  if [ "$(arg qvirt.dhcp 1)" != 0 ]; then
    udhcpc -i "$n" -s /lib/qvirt/udhcpc.sh -p "/run/udhcpc.$n.pid" -b -S -t 3 -T 2 -A 5 >/dev/null 2>&1 &
    # DHCPv6 (a masquerade pod with IPv6): dhcpcd, /etc/dhcpcd.conf; the kernel takes the RAs.
    if [ -x /usr/sbin/dhcpcd ]; then
      mkdir -p /run/dhcpcd /var/lib/dhcpcd
      dhcpcd -B -q -c /lib/qvirt/dhcpcd.sh "$n" >/dev/null 2>&1 &
    fi
  fi
}
nic_removed() { # nic_removed NAME
  local mac=
  [ -f "/run/qvirt/nics/$1" ] && mac=$(cat "/run/qvirt/nics/$1")
  rm -f "/run/qvirt/nics/$1"
  [ -f "/run/udhcpc.$1.pid" ] && kill "$(cat "/run/udhcpc.$1.pid")" 2>/dev/null
  marker "QVIRT-NIC-REMOVED name=$1 mac=$mac"
}

# ---- CPUs and memory ---------------------------------------------------------------------------
cpu_online() { # cpu_online N: bring cpuN online if it is offline, and say so
  local f=/sys/devices/system/cpu/cpu$1/online
  [ -f "$f" ] || return 0
  [ "$(cat "$f")" = 1 ] && return 0
  echo 1 > "$f" 2>/dev/null || { marker "QVIRT-CPU-ERROR cpu=$1 reason=online-failed"; return 0; }
  marker "QVIRT-CPU-ONLINE cpu=$1 online=$(cat /sys/devices/system/cpu/online)"
}
memory_online() { # memory_online N: bring memory block N online (movable) if offline
  local f=/sys/devices/system/memory/memory$1/state
  [ "$(cat "$f" 2>/dev/null)" = offline ] || return 0
  echo online_movable > "$f" 2>/dev/null || echo online > "$f" 2>/dev/null
}

# ---- guest agent -------------------------------------------------------------------------------
ga_port() { # the vport named org.qemu.guest_agent.0, e.g. vport1p1
  local p
  for p in /sys/class/virtio-ports/*; do
    [ "$(cat "$p/name" 2>/dev/null)" = org.qemu.guest_agent.0 ] && { echo "${p##*/}"; return 0; }
  done
  return 1
}
ga_start() {
  [ -x /usr/sbin/qemu-ga ] || return 0
  [ "$(arg qvirt.ga 1)" = 0 ] && return 0
  [ -f /run/qemu-ga.pid ] && kill -0 "$(cat /run/qemu-ga.pid)" 2>/dev/null && return 0
  local port
  port=$(ga_port) || return 0
  mkdir -p /run/qemu-ga
  if /usr/sbin/qemu-ga -m virtio-serial -p "/dev/$port" -d -f /run/qemu-ga.pid -t /run/qemu-ga -l /run/qemu-ga.log; then
    marker "QVIRT-GA-STARTED port=$port"
  else
    marker "QVIRT-GA-ERROR port=$port reason=start-failed"
  fi
}
vport_link() { # vport_link DEVNAME: /dev/virtio-ports/<name> -> ../vportXpY, as udev does
  local name
  name=$(cat "/sys/class/virtio-ports/$1/name" 2>/dev/null)
  [ -n "$name" ] || return 0
  ln -sfn "../$1" "/dev/virtio-ports/$name"
  [ "$name" = org.qemu.guest_agent.0 ] && ga_start
}
