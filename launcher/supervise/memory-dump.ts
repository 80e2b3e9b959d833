// The launcher's memory dump (KubeVirt's virtwrap/storage memoryDump.go): libvirt's
// virDomainCoreDumpWithFormat(RAW, MEMORY_ONLY) is QEMU's `dump-guest-memory` with paging off — an
// ELF core of the guest's RAM — written to `protocol: file:<path>`, detached, and followed with
// `query-dump` until it has completed or failed (QEMU stops the guest for the dump and resumes
// it). One dump at a time; a request for the file already dumped (or being dumped) is ignored, as
// the handler repeats its request until it sees the result. Older `*memory.dump*` files in the
// directory go first. What happened is the domain's Spec.Metadata.KubeVirt.MemoryDump
// (api.MemoryDumpMetadata, Go field names), published through `onChange`.
import { readdir, rm } from '../fs/async.ts';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../../src/log/logger.ts';
import { errorMessage, type QmpConnection } from './qmp-connection.ts';
import type { MemoryDumpMetadata } from '../../src/api/domain/domain.ts';
import { rfc3339 } from '../../src/log/iso-time.ts';

/** KubeVirt's storage.FailedDomainMemoryDump: the prefix of a failure's reason. */
export const FAILED_DOMAIN_MEMORY_DUMP = 'Domain memory dump failed';
/** Files of earlier dumps (removePreviousMemoryDump). */
const PREVIOUS_DUMP = 'memory.dump';

/** QEMU's DumpQueryResult. */
interface DumpStatus { status?: string; completed?: number; total?: number }

export interface MemoryDumpOptions {
  readonly log: Logger;
  /** What the domain reports changed (the manager publishes the domain). */
  readonly onChange: () => void;
  /** Before `dump-guest-memory`: the domain will STOP for the dump (the manager records why). */
  readonly beforeDump?: (() => void) | undefined;
  /** query-dump interval (default 200 ms). */
  readonly pollMs?: number | undefined;
  readonly now?: (() => Date) | undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class MemoryDumper {
  private readonly o: MemoryDumpOptions;
  private meta: MemoryDumpMetadata | null = null;
  private running: Promise<void> | undefined;

  constructor(o: MemoryDumpOptions) {
    this.o = o;
  }

  /** The domain's MemoryDump metadata: null before any dump was asked for. */
  get metadata(): MemoryDumpMetadata | null {
    return this.meta ? { ...this.meta } : null;
  }

  /** The dump under way, if any (tests, shutdown). */
  get current(): Promise<void> | undefined {
    return this.running;
  }

  /**
   * VirtualMachineMemoryDump: starts dumping the guest's memory to `path` and returns at once (the
   * result is in the metadata). Ignored while a dump runs, or when `path`'s file name is the last one.
   */
  request(qmp: QmpConnection, path: string): void {
    if (this.running) {
      this.o.log.info({ path }, 'memory-dump is in progress');
      return;
    }
    if (this.meta?.FileName === basename(path)) return;
    const now = this.o.now ?? (() => new Date());
    this.meta = { FileName: basename(path), StartTimestamp: rfc3339(now().getTime()), EndTimestamp: null, Completed: false, Failed: false, FailureReason: '' };
    this.o.onChange();
    this.running = this.dump(qmp, path).then(
      () => this.finish(false, ''),
      (err: unknown) => {
        const reason = `${FAILED_DOMAIN_MEMORY_DUMP}: ${errorMessage(err)}`;
        this.o.log.error({ path, err: errorMessage(err) }, FAILED_DOMAIN_MEMORY_DUMP);
        this.finish(true, reason);
      },
    ).finally(() => { this.running = undefined; });
  }

  private finish(failed: boolean, reason: string): void {
    if (!this.meta) return;
    const now = this.o.now ?? (() => new Date());
    this.meta = { ...this.meta, Completed: true, EndTimestamp: rfc3339(now().getTime()), Failed: failed, FailureReason: reason };
    this.o.onChange();
  }

  private async dump(qmp: QmpConnection, path: string): Promise<void> {
    await removePreviousDumps(dirname(path), this.o.log);
    this.o.log.info({ path }, 'Starting memory dump');
    this.o.beforeDump?.();
    await qmp.execute('dump-guest-memory', { paging: false, protocol: `file:${path}`, detach: true });
    for (;;) {
      const st = await qmp.execute('query-dump') as DumpStatus;
      if (st.status === 'completed') break;
      if (st.status === 'failed') throw new Error(`QEMU reports the dump to ${path} failed after ${st.completed ?? 0} of ${st.total ?? 0} bytes`);
      if (st.status !== 'active') throw new Error(`query-dump: unexpected status ${JSON.stringify(st.status)} while dumping to ${path}`);
      await sleep(this.o.pollMs ?? 200);
    }
    this.o.log.info({ path }, 'Completed memory dump successfully');
  }
}

/** removePreviousMemoryDump: every `*memory.dump*` file of the directory (failures are logged only). */
async function removePreviousDumps(dir: string, log: Logger): Promise<void> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    log.error({ dir, err: errorMessage(err) }, 'failed to remove older memory dumps');
    return;
  }
  for (const name of names) {
    if (!name.includes(PREVIOUS_DUMP)) continue;
    await rm(join(dir, name), { force: true }).catch((err: unknown) => log.error({ file: name, err: errorMessage(err) }, 'failed to remove older memory dumps'));
  }
}
