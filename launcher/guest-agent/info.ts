// Guest agent replies → the JSON KubeVirt's handler expects from GetGuestInfo / GetUsers /
// GetFilesystems (kubevirt.io/v1 VirtualMachineInstanceGuestAgentInfo, ...GuestOSUserList,
// ...FileSystemList) and the domain's GuestOSInfo. Pure.
import type { GuestOSInfo } from '../../src/api/domain/domain.ts';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** `guest-get-osinfo` → the domain status' GuestOSInfo (Go field names). */
export function domainOSInfo(osinfo: unknown): GuestOSInfo {
  const o = isObj(osinfo) ? osinfo : {};
  return {
    Name: str(o.name),
    KernelRelease: str(o['kernel-release']),
    Version: str(o.version),
    PrettyName: str(o['pretty-name']),
    VersionId: str(o['version-id']),
    KernelVersion: str(o['kernel-version']),
    Machine: str(o.machine),
    Id: str(o.id),
  };
}

/** `guest-get-osinfo` → v1.VirtualMachineInstanceGuestOSInfo (json tags, omitempty). */
export function vmiGuestOSInfo(osinfo: unknown): Record<string, string> {
  const d = domainOSInfo(osinfo);
  const out: Record<string, string> = {};
  const put = (k: string, v: string) => { if (v) out[k] = v; };
  put('name', d.Name);
  put('kernelRelease', d.KernelRelease);
  put('version', d.Version);
  put('prettyName', d.PrettyName);
  put('versionId', d.VersionId);
  put('kernelVersion', d.KernelVersion);
  put('machine', d.Machine);
  put('id', d.Id);
  return out;
}

export interface GuestUser { userName: string; domain?: string; loginTime?: number }

/** `guest-get-users` → VirtualMachineInstanceGuestOSUser[]. */
export function guestUsers(users: unknown): GuestUser[] {
  if (!Array.isArray(users)) return [];
  return users.filter(isObj).map((u) => {
    const out: GuestUser = { userName: str(u.user) };
    if (str(u.domain)) out.domain = str(u.domain);
    if (num(u['login-time'])) out.loginTime = num(u['login-time']);
    return out;
  });
}

export interface GuestFilesystem {
  diskName: string;
  mountPoint: string;
  fileSystemType: string;
  usedBytes: number;
  totalBytes: number;
  disk?: { serial?: string; busType: string }[];
}

/** `guest-get-fsinfo` → VirtualMachineInstanceFileSystem[]. */
export function guestFilesystems(fsinfo: unknown): GuestFilesystem[] {
  if (!Array.isArray(fsinfo)) return [];
  return fsinfo.filter(isObj).map((f) => {
    const out: GuestFilesystem = {
      diskName: str(f.name),
      mountPoint: str(f.mountpoint),
      fileSystemType: str(f.type),
      usedBytes: num(f['used-bytes']),
      totalBytes: num(f['total-bytes']),
    };
    if (Array.isArray(f.disk) && f.disk.length) {
      out.disk = f.disk.filter(isObj).map((d) => {
        const disk: { serial?: string; busType: string } = { busType: str(d['bus-type']) };
        if (str(d.serial)) disk.serial = str(d.serial);
        return disk;
      });
    }
    return out;
  });
}

export interface GuestAgentInfoParts {
  info?: unknown;      // guest-info
  osinfo?: unknown;    // guest-get-osinfo
  hostname?: unknown;  // guest-get-host-name
  timezone?: unknown;  // guest-get-timezone
  users?: unknown;     // guest-get-users
  fsinfo?: unknown;    // guest-get-fsinfo
  fsFreezeStatus?: string | undefined;
}

/** The parts → v1.VirtualMachineInstanceGuestAgentInfo JSON. Missing parts are left out. */
export function guestAgentInfo(p: GuestAgentInfoParts): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (isObj(p.info)) {
    if (str(p.info.version)) out.guestAgentVersion = str(p.info.version);
    if (Array.isArray(p.info.supported_commands)) {
      out.supportedCommands = p.info.supported_commands.filter(isObj).map((c) => (c.enabled === true ? { name: str(c.name), enabled: true } : { name: str(c.name) }));
    }
  }
  if (isObj(p.hostname) && str(p.hostname['host-name'])) out.hostname = str(p.hostname['host-name']);
  if (p.osinfo !== undefined) out.os = vmiGuestOSInfo(p.osinfo);
  if (isObj(p.timezone)) out.timezone = `${str(p.timezone.zone)}, ${num(p.timezone.offset)}`;
  if (p.users !== undefined) {
    const users = guestUsers(p.users);
    if (users.length) out.userList = users;
  }
  out.fsInfo = { disks: guestFilesystems(p.fsinfo) };
  if (p.fsFreezeStatus) out.fsFreezeStatus = p.fsFreezeStatus;
  return out;
}
