#!/bin/sh
# udhcpc's script for qvirt's test guest: configure the lease, report it as QVIRT-NIC-IP.
. /lib/qvirt/lib.sh
case $1 in
  deconfig)
    ifconfig "$interface" 0.0.0.0 up 2>/dev/null ;;
  bound|renew)
    old=$(cat "/run/qvirt/nics/$interface.ip" 2>/dev/null)
    ifconfig "$interface" "$ip" netmask "${subnet:-255.255.255.0}" ${broadcast:+broadcast "$broadcast"} ${mtu:+mtu "$mtu"} up
    if [ -n "$router" ]; then
      while route del default gw 0.0.0.0 dev "$interface" 2>/dev/null; do :; done
      for r in $router; do route add default gw "$r" dev "$interface"; break; done
    fi
    : > /etc/resolv.conf
    [ -n "$domain" ] && echo "search $domain" >> /etc/resolv.conf
    for d in $dns; do echo "nameserver $d" >> /etc/resolv.conf; done
    if [ "$old" != "$ip" ]; then
      echo "$ip" > "/run/qvirt/nics/$interface.ip"
      marker "QVIRT-NIC-IP name=$interface ip=$ip/${mask:-24} router=${router%% *} mtu=$(cat "/sys/class/net/$interface/mtu") dns=${dns%% *}"
    fi ;;
esac
exit 0
