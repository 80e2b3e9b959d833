#!/bin/sh
# dhcpcd's script for qvirt's test guest (DHCPv6 only): report the leased address as QVIRT-NIC-IP6,
# with the default router the kernel learnt from the router advertisements (waited for briefly).
. /lib/qvirt/lib.sh
case $reason in
  BOUND6|REBOOT6|RENEW6|REBIND6)
    ip=$new_dhcp6_ia_na1_ia_addr1
    [ -n "$ip" ] || exit 0
    old=$(cat "/run/qvirt/nics/$interface.ip6" 2>/dev/null)
    [ "$old" = "$ip" ] && exit 0
    echo "$ip" > "/run/qvirt/nics/$interface.ip6"
    (
      i=0
      while [ $i -lt 20 ]; do
        gw=$(ip -6 route show default dev "$interface" 2>/dev/null | sed -n 's/^default via \([^ ]*\).*/\1/p' | head -n 1)
        [ -n "$gw" ] && break
        usleep 250000; i=$((i + 1))
      done
      marker "QVIRT-NIC-IP6 name=$interface ip=$ip router=$gw"
    ) &
    ;;
esac
exit 0
