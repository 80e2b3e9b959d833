// The device controller of virt-handler (device-manager/device_controller.go), reduced to the
// permanent host devices: keeps one GenericDevicePlugin per device registered with the kubelet,
// starting it again when it ends (the kubelet restarted and wiped its dir) or fails to register
// (the kubelet is not up yet), with a capped backoff.
import { existsSync } from 'node:fs';
import type { Logger } from '../../src/log/logger.ts';
import { DEFAULT_MAX_DEVICES, devicePermissions, permanentHostDevices, type HostDevice } from './constants.ts';
import { GenericDevicePlugin } from './generic-device.ts';

export interface DevicePluginManagerOptions {
  readonly pluginDir: string;
  readonly hostRoot: string;
  readonly log: Logger;
  readonly devices?: readonly HostDevice[];
  readonly maxDevices?: number;
  readonly permissions?: string;
  /** First retry delay; doubles up to maxBackoffMs. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
}

export class DevicePluginManager {
  private readonly o: DevicePluginManagerOptions;
  private readonly current = new Map<string, GenericDevicePlugin>();
  private readonly loops: Promise<void>[] = [];
  private stopped = false;
  private wake = new Set<() => void>();

  constructor(opts: DevicePluginManagerOptions) {
    this.o = opts;
  }

  /** Every device plugin is registered (KubeVirt keeps the node unschedulable until then). */
  get initialized(): boolean {
    const devices = this.o.devices ?? permanentHostDevices();
    return devices.every((d) => this.current.get(d.name)?.registered === true);
  }

  plugin(name: string): GenericDevicePlugin | undefined {
    return this.current.get(name);
  }

  start(): void {
    const permissions = this.o.permissions ?? devicePermissions(existsSync('/sys/fs/cgroup/cgroup.controllers'));
    for (const d of this.o.devices ?? permanentHostDevices()) this.loops.push(this.keep(d, permissions));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => { clearTimeout(t); this.wake.delete(done); resolve(); };
      const t = setTimeout(done, ms);
      this.wake.add(done);
    });
  }

  private async keep(d: HostDevice, permissions: string): Promise<void> {
    const first = this.o.backoffMs ?? 1000;
    let delay = first;
    while (!this.stopped) {
      const p = new GenericDevicePlugin({ deviceName: d.name, devicePath: d.path, preOpen: d.preOpen, permissions, maxDevices: this.o.maxDevices ?? DEFAULT_MAX_DEVICES, pluginDir: this.o.pluginDir, hostRoot: this.o.hostRoot, log: this.o.log });
      try {
        await p.start();
        this.current.set(d.name, p);
        delay = first;
        if (this.stopped) await p.stop();
        await p.ended;
      } catch (err) {
        this.o.log.warn({ device: d.name, err: (err as Error).message, retryInMs: delay }, 'device plugin failed to start');
        await this.sleep(delay);
        delay = Math.min(delay * 2, this.o.maxBackoffMs ?? 30_000);
        continue;
      } finally {
        if (this.current.get(d.name) === p) this.current.delete(d.name);
      }
      if (!this.stopped) await this.sleep(Math.min(first, 1000));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of [...this.wake]) w();
    await Promise.all([...this.current.values()].map((p) => p.stop()));
    await Promise.all(this.loops);
  }
}
