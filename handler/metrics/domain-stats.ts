// KubeVirt's stats.DomainStats (pkg/virt-launcher/virtwrap/stats) as GetDomainStats carries it:
// JSON with libvirt's convention of a `XSet` flag beside each figure `X`. Parsed here, at the
// boundary, into figures that are present only when set — a launcher that says nothing about a
// figure (no balloon, no guest stats yet) leaves it out, never reports it as 0. Pure.

export const CPU_FIGURES = ['Time', 'User', 'System'] as const;
export const MEMORY_FIGURES = ['Unused', 'Cached', 'Available', 'ActualBalloon', 'RSS', 'SwapIn', 'SwapOut', 'MajorFault', 'MinorFault', 'Usable', 'Total'] as const;
export const VCPU_FIGURES = ['State', 'Time', 'Wait', 'Delay'] as const;
export const NET_FIGURES = ['RxBytes', 'RxPkts', 'RxErrs', 'RxDrop', 'TxBytes', 'TxPkts', 'TxErrs', 'TxDrop'] as const;
export const BLOCK_FIGURES = ['RdReqs', 'RdBytes', 'RdTimes', 'WrReqs', 'WrBytes', 'WrTimes', 'FlReqs', 'FlTimes', 'Errors', 'Allocation', 'Capacity', 'Physical'] as const;
export const JOB_FIGURES = ['DataTotal', 'DataProcessed', 'MemoryBps', 'DataRemaining', 'MemDirtyRate'] as const;

export type Figures<K extends string> = Partial<Record<K, number>>;

export interface NetStats { readonly name: string; readonly alias?: string | undefined; readonly figures: Figures<(typeof NET_FIGURES)[number]> }
export interface BlockStats { readonly name: string; readonly alias?: string | undefined; readonly figures: Figures<(typeof BLOCK_FIGURES)[number]> }

export interface DomainStats {
  readonly name: string;
  readonly uuid: string;
  readonly cpu?: Figures<(typeof CPU_FIGURES)[number]> | undefined;
  readonly memory?: Figures<(typeof MEMORY_FIGURES)[number]> | undefined;
  readonly vcpu: readonly Figures<(typeof VCPU_FIGURES)[number]>[];
  readonly net: readonly NetStats[];
  readonly block: readonly BlockStats[];
  /** Present while the VMI migrates away (KubeVirt's MigrateDomainJobInfo). */
  readonly migration?: Figures<(typeof JOB_FIGURES)[number]> | undefined;
}

export class DomainStatsParseError extends Error {
  override name = 'DomainStatsParseError';
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function figures<K extends string>(o: Obj, names: readonly K[], field: string): Figures<K> {
  const out: Figures<K> = {};
  for (const n of names) {
    if (o[`${n}Set`] !== true) continue;
    const v = o[n];
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new DomainStatsParseError(`${field}.${n}: ${n}Set is true but ${n} is ${JSON.stringify(v)}, not a number`);
    out[n] = v;
  }
  return out;
}

function section(v: unknown, field: string): Obj | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObj(v)) throw new DomainStatsParseError(`${field}: must be an object or null`);
  return v;
}

function list(v: unknown, field: string): Obj[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new DomainStatsParseError(`${field}: must be an array or null`);
  return v.map((e, i) => {
    if (!isObj(e)) throw new DomainStatsParseError(`${field}[${i}]: must be an object`);
    return e;
  });
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

/** GetDomainStats' `domainStats` string → DomainStats. Throws DomainStatsParseError naming the bad field. */
export function parseDomainStats(json: string): DomainStats {
  let raw: unknown;
  try { raw = JSON.parse(json); } catch (err) { throw new DomainStatsParseError(`domainStats: not JSON: ${(err as Error).message}`); }
  if (!isObj(raw)) throw new DomainStatsParseError('domainStats: must be a JSON object');
  const cpu = section(raw.Cpu, 'Cpu');
  const memory = section(raw.Memory, 'Memory');
  const job = section(raw.MigrateDomainJobInfo, 'MigrateDomainJobInfo');
  return {
    name: text(raw.Name),
    uuid: text(raw.UUID),
    cpu: cpu ? figures(cpu, CPU_FIGURES, 'Cpu') : undefined,
    memory: memory ? figures(memory, MEMORY_FIGURES, 'Memory') : undefined,
    vcpu: list(raw.Vcpu, 'Vcpu').map((v, i) => figures(v, VCPU_FIGURES, `Vcpu[${i}]`)),
    net: list(raw.Net, 'Net').flatMap((n, i) => n.NameSet === true && text(n.Name)
      ? [{ name: text(n.Name), alias: n.AliasSet === true && text(n.Alias) ? text(n.Alias) : undefined, figures: figures(n, NET_FIGURES, `Net[${i}]`) }]
      : []),
    block: list(raw.Block, 'Block').flatMap((b, i) => b.NameSet === true && text(b.Name)
      ? [{ name: text(b.Name), alias: text(b.Alias) || undefined, figures: figures(b, BLOCK_FIGURES, `Block[${i}]`) }]
      : []),
    migration: job ? figures(job, JOB_FIGURES, 'MigrateDomainJobInfo') : undefined,
  };
}
