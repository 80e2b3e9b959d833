// One generic host-device plugin (pkg/virt-handler/device-manager/generic_device.go): advertises
// `devices.kubevirt.io/<name>` to the kubelet as `maxDevices` interchangeable devices backed by one
// device node (/dev/kvm, /dev/net/tun, /dev/vhost-net), and answers Allocate with that node, so a
// launcher pod that requests the resource gets the device without being privileged.
//
//   const p = new GenericDevicePlugin({ deviceName: 'kvm', devicePath: '/dev/kvm', ... });
//   await p.start();     // serves <pluginDir>/kubevirt-kvm.sock and registers with the kubelet
//   await p.ended;       // resolves when the kubelet went away (its dir was wiped) or stop() ran
//   await p.stop();      // tells the kubelet "no devices", closes the socket
import { existsSync, closeSync, openSync, rmSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { grpc, grpcJsService, listenUnix, shutdownServer } from '../../src/proto/grpc.ts';
import {
  DEVICE_PLUGIN_API_VERSION,
  DeviceHealth,
  devicePluginService,
  KUBELET_SOCKET_NAME,
  RegistrationClient,
  type AllocateRequest,
  type AllocateResponse,
  type Device,
  type DevicePluginOptions,
  type ListAndWatchResponse,
} from '../../src/proto/deviceplugin.ts';
import type { Logger } from '../../src/log/logger.ts';
import { DEVICE_NAMESPACE, pluginSocketName } from './constants.ts';

export interface GenericDeviceOptions {
  /** `kvm`, `tun`, `vhost-net`: the resource is `devices.kubevirt.io/<deviceName>`. */
  readonly deviceName: string;
  /** The device node as containers see it (and as the kubelet passes it through). */
  readonly devicePath: string;
  readonly maxDevices: number;
  /** cgroup device permissions: `rw`, or `rwm` on cgroup v2 (runc's eBPF filter checks mknod). */
  readonly permissions: string;
  /** Open the node once first, so tun / vhost-net kernel modules auto-load. */
  readonly preOpen: boolean;
  /** The kubelet's device-plugins directory (holds kubelet.sock and the plugins' sockets). */
  readonly pluginDir: string;
  /**
   * Where the host's device nodes are visible: `/` on the host and in a privileged pod (the runtime
   * gives it the host's /dev). Not `/proc/1/root`: containerd/runc refuse that walk (EACCES) even to a
   * privileged hostPID pod, so every device looked absent and the node unschedulable.
   */
  readonly hostRoot: string;
  readonly log: Logger;
  /** Deadline of the Register call. */
  readonly registerTimeoutMs?: number;
}

/** `devices.kubevirt.io/<name>`. */
export const resourceName = (deviceName: string): string => `${DEVICE_NAMESPACE}/${deviceName}`;

/** The advertised devices: `<name>0` … `<name><max-1>`, all with one health. */
export function deviceList(deviceName: string, maxDevices: number, health: DeviceHealth): Device[] {
  return Array.from({ length: maxDevices }, (_, i) => ({ ID: `${deviceName}${i}`, health }));
}

/**
 * Allocate's answer: every container that asked for the resource gets the one device node
 * (same path on host and in the container). KubeVirt answers one container; the kubelet wants one
 * response per container request, so every request gets its own.
 */
export function allocateResponse(req: AllocateRequest, devicePath: string, permissions: string): AllocateResponse {
  const requests = req.container_requests.length > 0 ? req.container_requests : [{ devices_ids: [] }];
  return {
    container_responses: requests.map(() => ({
      envs: {},
      mounts: [],
      devices: [{ container_path: devicePath, host_path: devicePath, permissions }],
      annotations: {},
    })),
  };
}

export class GenericDevicePlugin {
  readonly resourceName: string;
  readonly socketPath: string;
  private readonly o: GenericDeviceOptions;
  private readonly log: Logger;
  private server?: grpc.Server;
  private streams = new Set<grpc.ServerWritableStream<unknown, ListAndWatchResponse>>();
  private watchers: FSWatcher[] = [];
  private health: DeviceHealth = DeviceHealth.Unhealthy;
  private endResolve!: () => void;
  private stopping = false;
  /** Resolves when the plugin stopped serving: stop(), or the kubelet removed its socket (restart). */
  readonly ended: Promise<void>;
  /** Registered with the kubelet and serving. */
  registered = false;

  constructor(opts: GenericDeviceOptions) {
    this.o = opts;
    this.resourceName = resourceName(opts.deviceName);
    this.socketPath = join(opts.pluginDir, pluginSocketName(opts.deviceName));
    this.log = opts.log.child({ resource: this.resourceName });
    this.ended = new Promise((r) => { this.endResolve = r; });
  }

  private get hostDevicePath(): string {
    return join(this.o.hostRoot, this.o.devicePath);
  }

  get currentHealth(): DeviceHealth {
    return this.health;
  }

  /** Serves the plugin socket, registers with the kubelet and starts watching the device's health. */
  async start(): Promise<void> {
    if (this.o.preOpen) {
      try { closeSync(openSync(this.o.devicePath, 'r')); } catch { /* absent: reported unhealthy below */ }
    }
    this.health = existsSync(this.hostDevicePath) ? DeviceHealth.Healthy : DeviceHealth.Unhealthy;
    if (this.health === DeviceHealth.Unhealthy) this.log.warn({ device: this.o.devicePath }, 'device is not present, the device plugin advertises it unhealthy');
    const server = new grpc.Server();
    server.addService(grpcJsService(devicePluginService()).service, {
      GetDevicePluginOptions: (_call: unknown, cb: grpc.sendUnaryData<DevicePluginOptions>) => cb(null, { pre_start_required: false, get_preferred_allocation_available: false }),
      ListAndWatch: (call: grpc.ServerWritableStream<unknown, ListAndWatchResponse>) => this.listAndWatch(call),
      GetPreferredAllocation: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb({ code: grpc.status.UNIMPLEMENTED, details: 'GetPreferredAllocation is not offered (get_preferred_allocation_available=false)' }),
      Allocate: (call: grpc.ServerUnaryCall<AllocateRequest, AllocateResponse>, cb: grpc.sendUnaryData<AllocateResponse>) => {
        this.log.info({ containers: call.request.container_requests.length }, 'allocate');
        cb(null, allocateResponse(call.request, this.o.devicePath, this.o.permissions));
      },
      PreStartContainer: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, {}),
    });
    this.server = server;
    await listenUnix(server, this.socketPath);
    const client = new RegistrationClient(join(this.o.pluginDir, KUBELET_SOCKET_NAME), { timeoutMs: this.o.registerTimeoutMs ?? 5000 });
    try {
      await client.register({ version: DEVICE_PLUGIN_API_VERSION, endpoint: basename(this.socketPath), resource_name: this.resourceName, options: { pre_start_required: false, get_preferred_allocation_available: false } });
    } catch (err) {
      await this.shutdown();
      throw new Error(`device plugin ${this.resourceName}: registering with the kubelet at ${join(this.o.pluginDir, KUBELET_SOCKET_NAME)} failed: ${(err as Error).message}`, { cause: err });
    } finally {
      client.close();
    }
    this.registered = true;
    this.watchHealth();
    this.log.info({ socket: this.socketPath, device: this.o.devicePath, devices: this.o.maxDevices, health: this.health }, 'device plugin registered');
  }

  private listAndWatch(call: grpc.ServerWritableStream<unknown, ListAndWatchResponse>): void {
    this.streams.add(call);
    call.on('cancelled', () => this.streams.delete(call));
    call.on('close', () => this.streams.delete(call));
    call.write({ devices: deviceList(this.o.deviceName, this.o.maxDevices, this.health) });
  }

  private setHealth(h: DeviceHealth): void {
    if (h === this.health) return;
    this.health = h;
    this.log.info({ device: this.o.devicePath, health: h }, h === DeviceHealth.Healthy ? 'monitored device appeared' : 'monitored device disappeared');
    for (const s of this.streams) s.write({ devices: deviceList(this.o.deviceName, this.o.maxDevices, h) });
  }

  /** inotify on the device's directory (health) and on the plugin dir (a restarted kubelet wipes it). */
  private watchHealth(): void {
    const devDir = dirname(this.hostDevicePath);
    try {
      this.watchers.push(watch(devDir, () => this.setHealth(existsSync(this.hostDevicePath) ? DeviceHealth.Healthy : DeviceHealth.Unhealthy)));
    } catch (err) {
      this.log.warn({ dir: devDir, err: (err as Error).message }, 'cannot watch the device directory; health stays as first seen');
    }
    try {
      this.watchers.push(watch(this.o.pluginDir, (_ev, file) => {
        if (file !== null && file !== basename(this.socketPath)) return;
        if (existsSync(this.socketPath)) return;
        this.log.info({ socket: this.socketPath }, 'device plugin socket was removed, the kubelet probably restarted');
        void this.stop();
      }));
    } catch (err) {
      this.log.warn({ dir: this.o.pluginDir, err: (err as Error).message }, 'cannot watch the device-plugins directory; a kubelet restart goes unnoticed');
    }
  }

  private async shutdown(): Promise<void> {
    for (const w of this.watchers) w.close();
    this.watchers = [];
    const server = this.server;
    this.server = undefined;
    if (server) await shutdownServer(server, 1000);
    rmSync(this.socketPath, { force: true });
  }

  /** Sends an empty device list (the kubelet's only "deregister"), closes the socket. Idempotent. */
  async stop(): Promise<void> {
    if (this.stopping) return this.ended;
    this.stopping = true;
    for (const s of this.streams) {
      try { s.write({ devices: [] }); s.end(); } catch { /* the kubelet hung up */ }
    }
    this.streams.clear();
    this.registered = false;
    await this.shutdown();
    this.endResolve();
  }
}
