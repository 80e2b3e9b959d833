#!/bin/sh
# Run by busybox `uevent` for each kernel uevent, with the event in the environment
# (ACTION, SUBSYSTEM, DEVPATH, DEVNAME, DEVTYPE, INTERFACE, ...). Reports hotplug as QVIRT-* lines.
case $SUBSYSTEM in block|net|cpu|memory|virtio-ports) ;; *) exit 0 ;; esac
. /lib/qvirt/lib.sh

case $SUBSYSTEM:$ACTION in
  block:add)
    [ "$DEVTYPE" = disk ] && disk_report QVIRT-DISK-ADDED "${DEVNAME##*/}" ;;
  block:remove)
    [ "$DEVTYPE" = disk ] && case ${DEVNAME##*/} in vd*|sd*|sr*) disk_removed "${DEVNAME##*/}" ;; esac ;;
  block:change)
    # Media change (CD-ROM insert/eject) or resize.
    [ "$DEVTYPE" = disk ] && disk_report QVIRT-DISK-CHANGED "${DEVNAME##*/}" ;;
  net:add)
    nic_report QVIRT-NIC-ADDED "$INTERFACE" ;;
  net:remove)
    [ "$INTERFACE" = lo ] || nic_removed "$INTERFACE" ;;
  cpu:add)
    cpu_online "${DEVPATH##*/cpu}" ;;
  cpu:remove)
    marker "QVIRT-CPU-REMOVED cpu=${DEVPATH##*/cpu}" ;;
  memory:add)
    memory_online "${DEVPATH##*/memory}" ;;
  memory:online)
    marker "QVIRT-MEMORY-ONLINE block=${DEVPATH##*/memory} total-kb=$(mem_total_kb)" ;;
  memory:offline)
    marker "QVIRT-MEMORY-OFFLINE block=${DEVPATH##*/memory} total-kb=$(mem_total_kb)" ;;
  virtio-ports:add|virtio-ports:change)
    vport_link "${DEVNAME##*/}" ;;
esac
exit 0
