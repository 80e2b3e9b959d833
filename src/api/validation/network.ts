/**
 * KubeVirt's network admitter (`pkg/network/admitter`) on a VMI spec: one pod or Multus default
 * network, network sources, interface states, binding methods (discontinued ones refused), names
 * matched both ways and unique, models, MAC and PCI addresses, ports, port ranges, DHCP options.
 */
import { FeatureGate, isFeatureGateEnabled, type ClusterConfig } from '../cluster-config.ts';
import { InterfaceModels } from '../constants.ts';
import { fieldError, FieldErrorType, type FieldError, type FieldPath } from '../field-error.ts';
import type { Interface, VirtualMachineInstanceSpec } from '../types.ts';
import { isValidPortName, macAddressError, PCI_ADDRESS } from './formats.ts';

const RESERVED_MASQUERADE_MAC = '02:00:00:00:00:00';

export function validateNetworks(f: FieldPath, spec: VirtualMachineInstanceSpec, config: ClusterConfig, out: FieldError[]): void {
  const networks = spec.networks ?? [];
  const ifaces = spec.domain.devices.interfaces ?? [];
  const ifacesPath = f.child('domain').child('devices').child('interfaces');
  const pod = networks.filter((n) => n.pod);
  const multusDefault = networks.filter((n) => n.multus?.default);
  if (pod.length > 1) {
    out.push({ field: f.child('interfaces').toString(), type: FieldErrorType.Duplicate, reason: `more than one interface is connected to a pod network in ${f.child('interfaces')}` });
  }
  if (multusDefault.length > 1) out.push(fieldError.invalid(f.child('networks'), 'Multus CNI should only have one default network'));
  if (pod.length > 0 && multusDefault.length > 0) out.push(fieldError.invalid(f.child('networks'), 'Pod network cannot be defined when Multus default network is defined'));
  networks.forEach((n, i) => {
    const count = [n.pod, n.multus, n.resourceClaim].filter((x) => x !== undefined).length;
    if (count === 0) out.push(fieldError.required(f.child('networks').index(i), 'should have a network type'));
    else if (count > 1) out.push(fieldError.required(f.child('networks').index(i), 'should have only one network type'));
  });
  const missingNetworkName = networks.findIndex((n) => n.multus !== undefined && !n.multus.networkName);
  if (missingNetworkName >= 0) out.push(fieldError.required(f.child('networks').index(missingNetworkName), 'CNI delegating plugin must have a networkName'));
  ifaces.forEach((iface, i) => {
    const p = ifacesPath.index(i);
    if (iface.state !== undefined && !['absent', 'up', 'down'].includes(iface.state)) {
      out.push({ field: p.child('state').toString(), type: FieldErrorType.NotSupported, reason: `logical ${iface.name} interface state value is unsupported: ${iface.state}` });
    }
  });
  const netByName = new Map(networks.map((n) => [n.name, n]));
  ifaces.forEach((iface, i) => validateInterfaceBinding(ifacesPath.index(i), iface, netByName.get(iface.name), config, out));
  const seenNet = new Set<string>();
  networks.forEach((n, i) => {
    if (seenNet.has(n.name)) {
      out.push({ field: f.child('networks').index(i).child('name').toString(), type: FieldErrorType.Duplicate, reason: `Network with name ${JSON.stringify(n.name)} already exists, every network must have a unique name` });
    }
    seenNet.add(n.name);
  });
  const ifaceNames = new Set(ifaces.map((x) => x.name));
  networks.forEach((n, i) => {
    if (!ifaceNames.has(n.name)) {
      const p = f.child('networks').index(i).child('name');
      out.push(fieldError.required(p, `${p} '${n.name}' not found.`));
    }
  });
  const seenIface = new Set<string>();
  ifaces.forEach((iface, i) => {
    if (seenIface.has(iface.name)) {
      out.push({ field: ifacesPath.index(i).child('name').toString(), type: FieldErrorType.Duplicate, reason: 'Only one interface can be connected to one specific network' });
    }
    seenIface.add(iface.name);
  });
  ifaces.forEach((iface, i) => {
    if (!netByName.has(iface.name)) {
      const p = ifacesPath.index(i).child('name');
      out.push(fieldError.invalid(p, `${p} '${iface.name}' not found.`));
    }
  });
  ifaces.forEach((iface, i) => validateInterfaceFields(ifacesPath.index(i), iface, netByName.get(iface.name)?.pod !== undefined, config, out));
}

function validateInterfaceBinding(p: FieldPath, iface: Interface, net: { pod?: object } | undefined, config: ClusterConfig, out: FieldError[]): void {
  const count = [iface.bridge, iface.masquerade, iface.sriov, iface.passtBinding, iface.binding].filter((x) => x !== undefined).length;
  if (count !== 1) out.push(fieldError.invalid(p, `logical ${iface.name} interface must have exactly one binding method or binding plugin`));
  if (iface.masquerade && !net?.pod) out.push(fieldError.invalid(p.child('name'), 'Masquerade interface only implemented with pod network'));
  if (iface.masquerade && iface.macAddress === RESERVED_MASQUERADE_MAC) {
    out.push(fieldError.invalid(p.child('macAddress'), 'The requested MAC address is reserved for the in-pod bridge. Please choose another one.'));
  }
  if (iface.bridge && net?.pod && !config.network.permitBridgeInterfaceOnPodNetwork) {
    out.push(fieldError.invalid(p.child('name'), 'Bridge on pod network configuration is not enabled under kubevirt-config'));
  }
  if (iface.slirp) out.push(fieldError.invalid(p.child('slirp'), 'Slirp interface support has been discontinued since v1.3'));
  if (iface.passt) out.push(fieldError.invalid(p.child('passt'), 'Passt network binding has been discontinued since v1.3'));
  if (iface.macvtap) out.push(fieldError.invalid(p.child('macvtap'), 'Macvtap network binding has been discontinued since v1.3'));
}

function validateInterfaceFields(p: FieldPath, iface: Interface, onPodNetwork: boolean, config: ClusterConfig, out: FieldError[]): void {
  if (!/^[A-Za-z0-9-_]+$/.test(iface.name)) {
    out.push(fieldError.invalid(p.child('name'), 'Network interface name can only contain alphabetical characters, numbers, dashes (-) or underscores (_)'));
  }
  if (iface.model && !(InterfaceModels as readonly string[]).includes(iface.model)) {
    out.push({ field: p.child('model').toString(), type: FieldErrorType.NotSupported, reason: `interface ${p.child('name')} uses model ${iface.model} that is not supported.` });
  }
  const macErr = macAddressError(iface.macAddress ?? '');
  if (macErr) out.push(fieldError.invalid(p.child('macAddress'), `interface ${p.child('name')} has ${macErr}.`));
  if (iface.pciAddress && !PCI_ADDRESS.test(iface.pciAddress)) {
    out.push(fieldError.invalid(p.child('pciAddress'), `interface ${p.child('name')} has malformed PCI address (${iface.pciAddress}).`));
  }
  if (onPodNetwork && iface.ports) {
    const names = new Set<string>();
    iface.ports.forEach((port, j) => {
      const pp = p.child('ports').index(j);
      if (port.name) {
        if (names.has(port.name)) out.push({ field: pp.child('name').toString(), type: FieldErrorType.Duplicate, reason: `Duplicate name of the port: ${port.name}` });
        if (!isValidPortName(port.name)) out.push(fieldError.invalid(pp.child('name'), `Invalid name of the port: ${port.name}`));
        names.add(port.name);
      }
    });
    iface.ports.forEach((port, j) => {
      const pp = p.child('ports').index(j);
      if (port.port === 0) out.push(fieldError.required(pp.child('port'), 'Port field is mandatory.'));
      if (port.port < 0 || port.port >= 65536) out.push(fieldError.invalid(pp.child('port'), 'Port field must be in range 0 < x < 65536.'));
      if (port.protocol && port.protocol !== 'TCP' && port.protocol !== 'UDP') out.push(fieldError.invalid(pp.child('protocol'), 'Unknown protocol, only TCP or UDP allowed'));
    });
  }
  if (iface.portRanges && !isFeatureGateEnabled(config, FeatureGate.PortRangesSpec)) {
    out.push(fieldError.invalid(p.child('name'), 'portRanges is specified on interface but the PortRangesSpec feature gate is not enabled'));
  }
  const dhcp = iface.dhcpOptions;
  if (dhcp) {
    (dhcp.privateOptions ?? []).forEach((o) => {
      if (o.option < 224 || o.option > 254) {
        out.push(fieldError.invalid(p, 'provided DHCPPrivateOptions are out of range, must be in range 224 to 254'));
      }
    });
    const seen = new Set<number>();
    for (const o of dhcp.privateOptions ?? []) {
      if (seen.has(o.option)) out.push(fieldError.invalid(p, 'Found Duplicates: you have provided duplicate DHCPPrivateOptions'));
      seen.add(o.option);
    }
    (dhcp.ntpServers ?? []).forEach((s, k) => {
      if (!/^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/.test(s)) {
        out.push(fieldError.invalid(p.child('dhcpOptions').child('ntpServers').index(k), 'NTP servers must be a list of valid IPv4 addresses.'));
      }
    });
  }
}
