// The test guest: a stock Debian kernel and a busybox initramfs (built by src/local/guest/build.sh)
// whose /init reports what the guest sees as QVIRT-* lines on the serial console. Tests boot it
// with `-kernel/-initrd/-append` (or spec.domain.firmware.kernelBoot) and wait for markers; `qvirt demo`
// boots it from a kernel-boot image. Every marker is documented in src/local/guest/README.md.
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { checkoutPath } from '../checkout.ts';

/** The marker names, exactly as the guest prints them at the start of a console line. */
export const markers = {
  /** `QVIRT-GUEST-BOOTED uptime=<s> kernel=<release>`: /init started. */
  booted: 'QVIRT-GUEST-BOOTED',
  /** `QVIRT-GUEST-READY uptime=<s>`: everything below reported, user-data done, shell next. */
  ready: 'QVIRT-GUEST-READY',
  /** `QVIRT-TICK n=<counter> uptime=<s>`: every `qvirt.tick=<ms>` ms (kernel command line). */
  tick: 'QVIRT-TICK',
  /** `QVIRT-DISK name= serial= size=<512-byte sectors> ro=0|1 bus=virtio|sata|scsi|usb`, at boot. */
  disk: 'QVIRT-DISK',
  /** Same fields as `disk`, for a disk that appeared after boot. */
  diskAdded: 'QVIRT-DISK-ADDED',
  /** `QVIRT-DISK-REMOVED name= serial=` (serial as reported when it was added). */
  diskRemoved: 'QVIRT-DISK-REMOVED',
  /** Same fields as `disk`: media change (CD-ROM) or resize. */
  diskChanged: 'QVIRT-DISK-CHANGED',
  /** `QVIRT-NIC name= mac= driver=`, at boot (Ethernet only). */
  nic: 'QVIRT-NIC',
  /** Same fields as `nic`, hot-plugged. */
  nicAdded: 'QVIRT-NIC-ADDED',
  /** `QVIRT-NIC-REMOVED name= mac=`. */
  nicRemoved: 'QVIRT-NIC-REMOVED',
  /** `QVIRT-NIC-IP name= ip=<a.b.c.d/prefix> router= mtu= dns=`: a DHCP lease (udhcpc; the lease's MTU is applied). */
  nicIp: 'QVIRT-NIC-IP',
  /** `QVIRT-CPUS online=<list> possible=<list>`, at boot. */
  cpus: 'QVIRT-CPUS',
  /** `QVIRT-CPU-ONLINE cpu=<n> online=<list>`: a hot-plugged (or offline) vCPU was onlined. */
  cpuOnline: 'QVIRT-CPU-ONLINE',
  /** `QVIRT-CPU-REMOVED cpu=<n>`. */
  cpuRemoved: 'QVIRT-CPU-REMOVED',
  /** `QVIRT-CPU-ERROR cpu=<n> reason=`. */
  cpuError: 'QVIRT-CPU-ERROR',
  /** `QVIRT-MEMORY total-kb=<MemTotal>`, at boot. */
  memory: 'QVIRT-MEMORY',
  /** `QVIRT-MEMORY-ONLINE block=<n> total-kb=`: a hot-plugged memory block came online. */
  memoryOnline: 'QVIRT-MEMORY-ONLINE',
  /** `QVIRT-MEMORY-OFFLINE block=<n> total-kb=`. */
  memoryOffline: 'QVIRT-MEMORY-OFFLINE',
  /** `QVIRT-CIDATA instance-id= source=nocloud|configdrive dev= hostname=`. */
  cidata: 'QVIRT-CIDATA',
  /** `QVIRT-CIDATA-ERROR dev= reason=`. */
  cidataError: 'QVIRT-CIDATA-ERROR',
  /** `QVIRT-USERDATA-START`: a `#!` user-data script starts (its output follows). */
  userdataStart: 'QVIRT-USERDATA-START',
  /** `QVIRT-USERDATA-EXIT code=<n>`. */
  userdataExit: 'QVIRT-USERDATA-EXIT',
  /** `QVIRT-USERDATA-SKIPPED reason=not-a-script first-line=`: e.g. #cloud-config. */
  userdataSkipped: 'QVIRT-USERDATA-SKIPPED',
  /** `QVIRT-GA-STARTED port=<vportXpY>`: qemu-ga runs on org.qemu.guest_agent.0. */
  gaStarted: 'QVIRT-GA-STARTED',
  /** `QVIRT-GA-ERROR port= reason=`. */
  gaError: 'QVIRT-GA-ERROR',
  /** `QVIRT-GUEST-POWEROFF uptime=`: the guest powers off (ACPI button, poweroff, qemu-ga). */
  poweroff: 'QVIRT-GUEST-POWEROFF',
  /** `QVIRT-GUEST-REBOOT uptime=`: the guest reboots (reboot, Ctrl-Alt-Del, qemu-ga). */
  reboot: 'QVIRT-GUEST-REBOOT',
} as const;

export type MarkerName = (typeof markers)[keyof typeof markers];

/**
 * The kernel command line to boot the guest with: the serial console, quiet (markers are the
 * output; kernel chatter on an emulated UART costs boot time and could split marker lines), and no
 * crypto self-tests at boot (cryptomgr.notests: the kernel tests each algorithm it registers, ~0.6 s
 * of a 4.2 s boot to QVIRT-GUEST-READY under TCG, measured 2026-11-27).
 * Append `qvirt.dhcp=0`, `qvirt.ga=0`, `qvirt.shell=0` or `qvirt.hostname=<name>` as needed.
 */
export const kernelCmdline = 'console=ttyS0 quiet cryptomgr.notests';

/** The QEMU arguments that boot the guest directly (no disk, no bootloader). */
export function kernelBootArgs(guest: GuestArtifacts, cmdline: string = kernelCmdline): string[] {
  return ['-kernel', guest.kernel, '-initrd', guest.initrd, '-append', cmdline];
}

export interface GuestArtifacts {
  /**
   * The kernel to boot: the Debian kernel's vmlinux (ELF with a PVH entry), which QEMU's SeaBIOS
   * path starts without decompressing — seconds faster under TCG. Falls back to the bzImage.
   */
  kernel: string;
  /** newc cpio, uncompressed (cheaper to boot under TCG): busybox, modules, qemu-ga, /init. */
  initrd: string;
  /** The same kernel as a bzImage (EFI stub): for OVMF/EFI firmware, which cannot boot an ELF. */
  bzImage: string;
}

const buildScript = checkoutPath('src/local/guest/build.sh');
let built: Promise<GuestArtifacts> | undefined;

/**
 * Builds the guest if needed (src/local/guest/build.sh; cached under .cache/guest/) and returns where
 * its kernel and initramfs are. The first call in a process runs the script; later calls share it.
 */
export function ensureGuest(): Promise<GuestArtifacts> {
  built ??= new Promise<GuestArtifacts>((resolve, reject) => {
    execFile('bash', [buildScript], { encoding: 'utf8', maxBuffer: 4 << 20, timeout: 600_000 }, (err, stdout, stderr) => {
      if (err) {
        reject(new Error(`test guest build failed (${buildScript}): ${err.message}\n${stderr.trim().split('\n').slice(-15).join('\n')}`));
        return;
      }
      const [kernel, initrd] = stdout.trim().split('\n').slice(-2);
      if (!kernel || !/\/vmlinu[xz]$/.test(kernel) || !initrd?.endsWith('/initrd.img')) {
        reject(new Error(`test guest build printed no kernel/initrd paths (${buildScript}): ${JSON.stringify(stdout)}`));
        return;
      }
      resolve({ kernel, initrd, bzImage: join(dirname(kernel), 'vmlinuz') });
    });
  });
  built.catch(() => { built = undefined; });
  return built;
}

/** One parsed marker line: its name and its `key=value` fields. */
export interface Marker {
  name: MarkerName;
  fields: Record<string, string>;
  /** The line as printed, from the marker name on. */
  line: string;
}

const knownNames = new Set<string>(Object.values(markers));

/**
 * The marker in one console line, or undefined. A marker may follow other text on the same line
 * (a shell prompt, an escape sequence), so it is searched for, not anchored.
 */
export function parseMarker(line: string): Marker | undefined {
  const m = /(?:^|[^A-Z0-9-])(QVIRT-[A-Z-]+[A-Z])(?=\s|$)(.*)$/.exec(line.replace(/\r/g, ''));
  if (!m || !knownNames.has(m[1]!)) return undefined;
  const fields: Record<string, string> = {};
  for (const kv of (m[2] ?? '').trim().split(/\s+/)) {
    const eq = kv.indexOf('=');
    if (eq > 0) fields[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  return { name: m[1] as MarkerName, fields, line: `${m[1]}${m[2] ?? ''}` };
}

/**
 * Collects console output and resolves waits on markers. Feed it the serial stream with `push`;
 * `waitFor` looks at markers already seen (from `since`) and at those still to come.
 */
export class MarkerLog {
  readonly seen: Marker[] = [];
  private partial = '';
  private text = '';
  private waiters: Array<{ test: (m: Marker) => boolean; from: number; resolve: (m: Marker) => void; reject: (e: Error) => void }> = [];
  private ended: string | undefined;

  /** Everything received so far (for failure messages). */
  get output(): string { return this.text; }

  push(chunk: string | Buffer): void {
    const s = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    this.text += s;
    const lines = (this.partial + s).split('\n');
    this.partial = lines.pop() ?? '';
    for (const line of lines) {
      const m = parseMarker(line);
      if (!m) continue;
      this.seen.push(m);
      const index = this.seen.length - 1;
      this.waiters = this.waiters.filter((w) => {
        if (index < w.from || !w.test(m)) return true;
        w.resolve(m);
        return false;
      });
    }
  }

  /**
   * The console is gone (QEMU exited): waits that nothing seen satisfies fail now, with `reason`,
   * instead of at their timeout.
   */
  end(reason: string): void {
    this.ended = reason;
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new Error(`${reason}; console so far:\n${this.text.slice(-3000)}`));
  }

  /**
   * The first marker named `name` (whose fields equal `fields` and which passes `where`, if given)
   * at or after position `since` in `seen`. Rejects after `timeoutMs` with the console output.
   */
  waitFor(name: MarkerName, opts: { fields?: Record<string, string>; where?: (m: Marker) => boolean; since?: number; timeoutMs?: number } = {}): Promise<Marker> {
    const { fields = {}, where = () => true, since = 0, timeoutMs = 60_000 } = opts;
    const test = (m: Marker) => m.name === name && Object.entries(fields).every(([k, v]) => m.fields[k] === v) && where(m);
    const found = this.seen.slice(since).find(test);
    if (found) return Promise.resolve(found);
    if (this.ended) return Promise.reject(new Error(`no ${name} on the guest console: ${this.ended}; console so far:\n${this.text.slice(-3000)}`));
    return new Promise<Marker>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        const want = Object.keys(fields).length ? `${name} ${JSON.stringify(fields)}` : name;
        reject(new Error(`no ${want} on the guest console within ${timeoutMs} ms; console so far:\n${this.text.slice(-3000)}`));
      }, timeoutMs);
      const waiter = {
        test, from: since,
        resolve: (m: Marker) => { clearTimeout(timer); resolve(m); },
        reject: (e: Error) => { clearTimeout(timer); reject(e); },
      };
      this.waiters.push(waiter);
    });
  }
}

/** The kernel-boot image name the guest goes under in a local image store (examples/*-demo.yaml use it). */
export const TEST_GUEST_IMAGE = 'qvirt/test-guest:latest';

/** A VMI manifest (YAML) booting the test guest from its kernel-boot image, no devices: for a test or bench that loads a manifest file. */
export function testGuestVmiYaml(name: string, memory = '128Mi'): string {
  return `
apiVersion: kubevirt.io/v1
kind: VirtualMachineInstance
metadata: {name: ${name}}
spec:
  terminationGracePeriodSeconds: 0
  domain:
    firmware:
      kernelBoot:
        kernelArgs: console=ttyS0 quiet cryptomgr.notests
        container: {image: ${TEST_GUEST_IMAGE}, kernelPath: /boot/vmlinuz, initrdPath: /boot/initrd.img}
    devices: {}
    resources: {requests: {memory: ${memory}}}
`;
}

/**
 * Puts the test guest into an image store as a kernel-boot image (`/boot/vmlinuz`, `/boot/initrd.img`),
 * building it first if needed.
 */
export async function importTestGuest(
  store: { importFiles(ref: string, files: ReadonlyArray<{ src: string; dest: string }>): Promise<unknown> },
  ref: string = TEST_GUEST_IMAGE,
): Promise<void> {
  const g = await ensureGuest();
  await store.importFiles(ref, [{ src: g.kernel, dest: '/boot/vmlinuz' }, { src: g.initrd, dest: '/boot/initrd.img' }]);
}
