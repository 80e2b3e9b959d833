// A small ISO 9660 writer for seed and config disks, used when `xorrisofs` is not installed (edge
// nodes, slim launcher images). It writes three views of one tree that share the file data:
//   - the ECMA-119 primary hierarchy with level-1 8.3 names (`META_DAT.;1`), for strict readers;
//   - Rock Ridge (SUSP SP/CE/ER, RRIP PX/NM) on the primary hierarchy, so POSIX readers (Linux
//     isofs, xorriso, cloud-init's own ISO readers) see exact names such as `meta-data`,
//     `network-config`, `..data`, and POSIX modes (timestamps come from the records' own dates);
//   - a Joliet supplementary hierarchy (UCS-2 names, up to 103 characters like `-joliet-long`), for
//     Windows (cloudbase-init) and for readers mounted with `norock`.
// Layout: system area 0-15, PVD 16, Joliet SVD 17, terminator 18, then path tables, the Rock Ridge
// continuation sector, directory extents, file data, and 300 KiB of padding, on 2048-byte sectors.
// Pure: builds the image in memory from an in-memory tree (seed disks are a few KiB; config volumes
// are bounded by Kubernetes' 1 MiB object size).

export const SECTOR = 2048;

export interface IsoFile {
  readonly kind: 'file';
  readonly name: string;
  readonly data: Uint8Array;
  /** POSIX permission bits for Rock Ridge (default 0o444). */
  readonly mode?: number;
}

export interface IsoDir {
  readonly kind: 'dir';
  readonly name: string;
  readonly children: readonly IsoEntry[];
  /** POSIX permission bits for Rock Ridge (default 0o555). */
  readonly mode?: number;
}

export type IsoEntry = IsoFile | IsoDir;

export interface IsoOptions {
  /** Volume identifier (the label `blkid` reports): `cidata`, `config-2`, `cfgdata`, ... */
  readonly volumeId: string;
  /** Recording time for every record (default: now). */
  readonly time?: Date;
  readonly systemId?: string;
  readonly applicationId?: string;
}

export class IsoWriteError extends Error {
  override name = 'IsoWriteError';
}

/**
 * Zero sectors appended inside the volume, as mkisofs/xorrisofs do (`-pad`, 300 KiB): old block
 * drivers read ahead past the end, and probers read fixed windows (busybox's volume_id reads 68 KiB
 * at once and misses the label of a smaller device, found by booting the test guest).
 */
export const PADDING_SECTORS = 150;

/** Longest Joliet name accepted (what `xorrisofs -joliet-long` allows). */
export const JOLIET_MAX_NAME = 103;
/**
 * Longest Rock Ridge name (UTF-8 bytes) that fits one NM entry in one directory record:
 * 255 − 33 (record) − 15 (8.3 identifier + pad) − 36 (PX) − 5 (NM header) = 166; kept a little lower.
 */
export const ROCK_RIDGE_MAX_NAME = 160;

// ---------------------------------------------------------------------------------------------
// Field encoders

const le16 = (b: Uint8Array, o: number, v: number) => { b[o] = v & 0xff; b[o + 1] = (v >>> 8) & 0xff; };
const be16 = (b: Uint8Array, o: number, v: number) => { b[o] = (v >>> 8) & 0xff; b[o + 1] = v & 0xff; };
const le32 = (b: Uint8Array, o: number, v: number) => { le16(b, o, v & 0xffff); le16(b, o + 2, (v >>> 16) & 0xffff); };
const be32 = (b: Uint8Array, o: number, v: number) => { be16(b, o, (v >>> 16) & 0xffff); be16(b, o + 2, v & 0xffff); };
const both16 = (b: Uint8Array, o: number, v: number) => { le16(b, o, v); be16(b, o + 2, v); };
const both32 = (b: Uint8Array, o: number, v: number) => { le32(b, o, v); be32(b, o + 4, v); };

function ascii(b: Uint8Array, o: number, len: number, s: string): void {
  for (let i = 0; i < len; i++) b[o + i] = i < s.length ? s.charCodeAt(i) & 0x7f : 0x20;
}

function ucs2(s: string): Uint8Array {
  const out = new Uint8Array(s.length * 2);
  for (let i = 0; i < s.length; i++) be16(out, i * 2, s.charCodeAt(i));
  return out;
}

function ucs2Field(b: Uint8Array, o: number, len: number, s: string): void {
  for (let i = 0; i + 1 < len; i += 2) be16(b, o + i, i / 2 < s.length ? s.charCodeAt(i / 2) : 0x20);
}

/** 7-byte directory-record date (UTC). */
function recordDate(b: Uint8Array, o: number, t: Date): void {
  b[o] = t.getUTCFullYear() - 1900;
  b[o + 1] = t.getUTCMonth() + 1;
  b[o + 2] = t.getUTCDate();
  b[o + 3] = t.getUTCHours();
  b[o + 4] = t.getUTCMinutes();
  b[o + 5] = t.getUTCSeconds();
  b[o + 6] = 0;
}

/** 17-byte volume-descriptor date (UTC), or the "not specified" form. */
function descriptorDate(b: Uint8Array, o: number, t: Date | undefined): void {
  if (!t) {
    ascii(b, o, 16, '0000000000000000');
    b[o + 16] = 0;
    return;
  }
  const p = (n: number, w: number) => String(n).padStart(w, '0');
  ascii(b, o, 16, `${p(t.getUTCFullYear(), 4)}${p(t.getUTCMonth() + 1, 2)}${p(t.getUTCDate(), 2)}${p(t.getUTCHours(), 2)}${p(t.getUTCMinutes(), 2)}${p(t.getUTCSeconds(), 2)}00`);
  b[o + 16] = 0;
}

// ---------------------------------------------------------------------------------------------
// Names

/** Level-1 d-characters: A-Z 0-9 _ */
function dChars(s: string): string {
  return s.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
}

/** 8.3 primary names (`NAME.EXT;1` for files, `NAME` for directories), unique within a directory. */
export function primaryNames(entries: readonly IsoEntry[]): string[] {
  const used = new Set<string>();
  return entries.map((e) => {
    const dot = e.kind === 'file' ? e.name.lastIndexOf('.') : -1;
    const stemRaw = dot > 0 ? e.name.slice(0, dot) : e.name;
    const extRaw = dot > 0 ? e.name.slice(dot + 1) : '';
    let stem = dChars(stemRaw).slice(0, 8) || '_';
    const ext = dChars(extRaw).slice(0, 3);
    const make = (s: string) => (e.kind === 'file' ? `${s}.${ext};1` : s);
    let candidate = make(stem);
    for (let n = 1; used.has(candidate); n++) {
      const suffix = `_${n}`;
      stem = dChars(stemRaw).slice(0, 8 - suffix.length) + suffix;
      candidate = make(stem);
    }
    used.add(candidate);
    return candidate;
  });
}

function checkName(name: string, where: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new IsoWriteError(`invalid file name ${JSON.stringify(name)} in ${where}`);
  }
  if (name.length > JOLIET_MAX_NAME) {
    throw new IsoWriteError(`file name ${JSON.stringify(name)} in ${where} is ${name.length} characters long; the built-in ISO writer supports up to ${JOLIET_MAX_NAME} (install xorrisofs for longer names)`);
  }
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) throw new IsoWriteError(`file name ${JSON.stringify(name)} in ${where} has characters outside UCS-2`);
  }
  if (Buffer.byteLength(name, 'utf8') > ROCK_RIDGE_MAX_NAME) {
    throw new IsoWriteError(`file name ${JSON.stringify(name)} in ${where} is longer than ${ROCK_RIDGE_MAX_NAME} bytes, the built-in ISO writer's limit`);
  }
}

// ---------------------------------------------------------------------------------------------
// Layout model

interface Node {
  readonly entry: IsoEntry | undefined; // undefined for the root
  readonly name: string; // real name ('' for root)
  readonly isDir: boolean;
  readonly children: Node[];
  readonly parent: Node | undefined;
  primaryId: Uint8Array; // ECMA-119 identifier bytes
  jolietId: Uint8Array; // UCS-2BE identifier bytes
  dirNumber: number; // path-table number (dirs)
  jolietDirNumber: number;
  primaryExtent: number; // directory extents / file data
  primarySize: number;
  jolietExtent: number;
  jolietSize: number;
  dataExtent: number;
  dataSize: number;
  links: number;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function buildTree(root: readonly IsoEntry[]): Node {
  const make = (entry: IsoEntry | undefined, parent: Node | undefined, where: string): Node => {
    const node: Node = {
      entry, name: entry?.name ?? '', isDir: !entry || entry.kind === 'dir', children: [], parent,
      primaryId: new Uint8Array([0]), jolietId: new Uint8Array([0]), dirNumber: 0, jolietDirNumber: 0,
      primaryExtent: 0, primarySize: 0, jolietExtent: 0, jolietSize: 0, dataExtent: 0, dataSize: 0, links: 1,
    };
    const kids = entry ? (entry.kind === 'dir' ? entry.children : []) : root;
    const seen = new Set<string>();
    for (const k of kids) {
      checkName(k.name, where);
      if (seen.has(k.name)) throw new IsoWriteError(`duplicate name ${JSON.stringify(k.name)} in ${where}`);
      seen.add(k.name);
    }
    const ids = primaryNames(kids);
    kids.forEach((k, i) => {
      const child = make(k, node, `${where === '/' ? '' : where}/${k.name}`);
      child.primaryId = Buffer.from(ids[i]!, 'ascii');
      child.jolietId = ucs2(k.name);
      if (k.kind === 'file') child.dataSize = k.data.length;
      node.children.push(child);
    });
    node.links = 2 + node.children.filter((c) => c.isDir).length;
    return node;
  };
  return make(undefined, undefined, '/');
}

function bfsDirs(root: Node, key: (n: Node) => Uint8Array): Node[] {
  const out: Node[] = [root];
  for (let i = 0; i < out.length; i++) {
    const dirs = out[i]!.children.filter((c) => c.isDir).sort((a, b) => compareBytes(key(a), key(b)));
    out.push(...dirs);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Rock Ridge system-use entries

const RRIP_ID = 'RRIP_1991A';
const RRIP_DESC = 'THE ROCK RIDGE INTERCHANGE PROTOCOL PROVIDES SUPPORT FOR POSIX FILE SYSTEM SEMANTICS';
const RRIP_SRC = 'PLEASE CONTACT DISC PUBLISHER FOR SPECIFICATION SOURCE.  SEE PUBLISHER IDENTIFIER IN PRIMARY VOLUME DESCRIPTOR FOR CONTACT INFORMATION.';

function susp(sig: string, version: number, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + body.length);
  out[0] = sig.charCodeAt(0);
  out[1] = sig.charCodeAt(1);
  out[2] = out.length;
  out[3] = version;
  out.set(body, 4);
  return out;
}

function spEntry(): Uint8Array { return susp('SP', 1, new Uint8Array([0xbe, 0xef, 0])); }

function ceEntry(block: number, offset: number, length: number): Uint8Array {
  const b = new Uint8Array(24);
  both32(b, 0, block);
  both32(b, 8, offset);
  both32(b, 16, length);
  return susp('CE', 1, b);
}

function erEntry(): Uint8Array {
  const id = Buffer.from(RRIP_ID, 'ascii');
  const desc = Buffer.from(RRIP_DESC, 'ascii');
  const src = Buffer.from(RRIP_SRC, 'ascii');
  const b = new Uint8Array(4 + id.length + desc.length + src.length);
  b[0] = id.length; b[1] = desc.length; b[2] = src.length; b[3] = 1;
  b.set(id, 4); b.set(desc, 4 + id.length); b.set(src, 4 + id.length + desc.length);
  return susp('ER', 1, b);
}

function pxEntry(mode: number, links: number): Uint8Array {
  const b = new Uint8Array(32);
  both32(b, 0, mode);
  both32(b, 8, links);
  both32(b, 16, 0); // uid
  both32(b, 24, 0); // gid
  return susp('PX', 1, b);
}

function nmEntry(name: string): Uint8Array {
  const n = Buffer.from(name, 'utf8');
  const b = new Uint8Array(1 + n.length);
  b.set(n, 1);
  return susp('NM', 1, b);
}

const concat = (parts: readonly Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) { out.set(p, o); o += p.length; }
  return out;
};

// ---------------------------------------------------------------------------------------------
// Directory records

interface RecordSpec {
  readonly id: Uint8Array;
  readonly extent: number;
  readonly size: number;
  readonly isDir: boolean;
  readonly systemUse: Uint8Array;
}

function directoryRecord(r: RecordSpec, t: Date): Uint8Array {
  const idLen = r.id.length;
  const pad = idLen % 2 === 0 ? 1 : 0;
  let len = 33 + idLen + pad + r.systemUse.length;
  if (len % 2 === 1) len++;
  if (len > 255) throw new IsoWriteError(`directory record for ${Buffer.from(r.id).toString('latin1')} is ${len} bytes, over the 255-byte limit`);
  const b = new Uint8Array(len);
  b[0] = len;
  b[1] = 0;
  both32(b, 2, r.extent);
  both32(b, 10, r.size);
  recordDate(b, 18, t);
  b[25] = r.isDir ? 0x02 : 0x00;
  b[26] = 0;
  b[27] = 0;
  both16(b, 28, 1);
  b[32] = idLen;
  b.set(r.id, 33);
  b.set(r.systemUse, 33 + idLen + pad);
  return b;
}

/** Packs records into sectors; a record never crosses a sector boundary. Returns sector-aligned bytes. */
function packRecords(records: readonly Uint8Array[]): Uint8Array {
  const sectors: Uint8Array[] = [];
  let cur = new Uint8Array(SECTOR);
  let used = 0;
  for (const r of records) {
    if (used + r.length > SECTOR) {
      sectors.push(cur);
      cur = new Uint8Array(SECTOR);
      used = 0;
    }
    cur.set(r, used);
    used += r.length;
  }
  sectors.push(cur);
  return concat(sectors);
}

function pathTable(dirs: readonly Node[], number: (n: Node) => number, id: (n: Node) => Uint8Array, extent: (n: Node) => number, bigEndian: boolean): Uint8Array {
  const parts = dirs.map((d) => {
    const ident = d.parent ? id(d) : new Uint8Array([0]);
    const b = new Uint8Array(8 + ident.length + (ident.length % 2));
    b[0] = ident.length;
    b[1] = 0;
    (bigEndian ? be32 : le32)(b, 2, extent(d));
    (bigEndian ? be16 : le16)(b, 6, d.parent ? number(d.parent) : 1);
    b.set(ident, 8);
    return b;
  });
  return concat(parts);
}

const sectorsFor = (bytes: number) => Math.ceil(bytes / SECTOR);

// ---------------------------------------------------------------------------------------------

/** Builds an ISO 9660 image (primary + Rock Ridge + Joliet) holding `entries` at its root. */
export function writeIso9660(entries: readonly IsoEntry[], opts: IsoOptions): Uint8Array {
  if (opts.volumeId.length === 0 || opts.volumeId.length > 32) throw new IsoWriteError(`volume id ${JSON.stringify(opts.volumeId)} must be 1 to 32 characters`);
  if (!/^[\x20-\x7e]+$/.test(opts.volumeId)) throw new IsoWriteError(`volume id ${JSON.stringify(opts.volumeId)} must be printable ASCII`);
  const t = opts.time ?? new Date();
  const root = buildTree(entries);
  const primaryDirs = bfsDirs(root, (n) => n.primaryId);
  primaryDirs.forEach((d, i) => { d.dirNumber = i + 1; });
  const jolietDirs = bfsDirs(root, (n) => n.jolietId);
  jolietDirs.forEach((d, i) => { d.jolietDirNumber = i + 1; });

  const sortedChildren = (d: Node, key: (n: Node) => Uint8Array) => [...d.children].sort((a, b) => compareBytes(key(a), key(b)));

  // System-use areas are fixed-size per node, so directory sizes are known before extents are.
  const ceLength = erEntry().length;
  const suFor = (n: Node, self: 'self' | 'parent' | 'entry', ceBlock: number): Uint8Array => {
    const mode = n.isDir ? 0o040000 | (n.entry?.mode ?? 0o555) : 0o100000 | (n.entry?.mode ?? 0o444);
    const px = pxEntry(mode, n.isDir ? n.links : 1);
    if (self === 'self' && !n.parent) return concat([spEntry(), px, ceEntry(ceBlock, 0, ceLength)]);
    if (self === 'entry') return concat([px, nmEntry(n.name)]);
    return px;
  };

  const primaryRecords = (d: Node, ceBlock: number): Uint8Array[] => {
    const recs = [
      directoryRecord({ id: new Uint8Array([0]), extent: d.primaryExtent, size: d.primarySize, isDir: true, systemUse: suFor(d, 'self', ceBlock) }, t),
      directoryRecord({ id: new Uint8Array([1]), extent: (d.parent ?? d).primaryExtent, size: (d.parent ?? d).primarySize, isDir: true, systemUse: suFor(d.parent ?? d, 'parent', ceBlock) }, t),
    ];
    for (const c of sortedChildren(d, (n) => n.primaryId)) {
      recs.push(directoryRecord({ id: c.primaryId, extent: c.isDir ? c.primaryExtent : c.dataExtent, size: c.isDir ? c.primarySize : c.dataSize, isDir: c.isDir, systemUse: suFor(c, 'entry', ceBlock) }, t));
    }
    return recs;
  };
  const jolietRecords = (d: Node): Uint8Array[] => {
    const recs = [
      directoryRecord({ id: new Uint8Array([0]), extent: d.jolietExtent, size: d.jolietSize, isDir: true, systemUse: new Uint8Array(0) }, t),
      directoryRecord({ id: new Uint8Array([1]), extent: (d.parent ?? d).jolietExtent, size: (d.parent ?? d).jolietSize, isDir: true, systemUse: new Uint8Array(0) }, t),
    ];
    for (const c of sortedChildren(d, (n) => n.jolietId)) {
      recs.push(directoryRecord({ id: c.jolietId, extent: c.isDir ? c.jolietExtent : c.dataExtent, size: c.isDir ? c.jolietSize : c.dataSize, isDir: c.isDir, systemUse: new Uint8Array(0) }, t));
    }
    return recs;
  };

  // Pass 1: sizes.
  for (const d of primaryDirs) d.primarySize = packRecords(primaryRecords(d, 0)).length;
  for (const d of jolietDirs) d.jolietSize = packRecords(jolietRecords(d)).length;

  // Pass 2: placement.
  let next = 19; // after PVD (16), Joliet SVD (17), terminator (18)
  const ptPrimary = pathTable(primaryDirs, (n) => n.dirNumber, (n) => n.primaryId, () => 0, false);
  const ptJoliet = pathTable(jolietDirs, (n) => n.jolietDirNumber, (n) => n.jolietId, () => 0, false);
  const ptPrimarySectors = sectorsFor(ptPrimary.length);
  const ptJolietSectors = sectorsFor(ptJoliet.length);
  const lPrimary = next; next += ptPrimarySectors;
  const mPrimary = next; next += ptPrimarySectors;
  const lJoliet = next; next += ptJolietSectors;
  const mJoliet = next; next += ptJolietSectors;
  const ceBlock = next; next += 1;
  for (const d of primaryDirs) { d.primaryExtent = next; next += d.primarySize / SECTOR; }
  for (const d of jolietDirs) { d.jolietExtent = next; next += d.jolietSize / SECTOR; }
  const files: Node[] = [];
  const walk = (d: Node) => { for (const c of sortedChildren(d, (n) => n.primaryId)) (c.isDir ? walk(c) : files.push(c)); };
  walk(root);
  for (const f of files) { f.dataExtent = next; next += sectorsFor(f.dataSize); }
  const totalSectors = next + PADDING_SECTORS;

  // Pass 3: bytes.
  const img = new Uint8Array(totalSectors * SECTOR);
  const at = (sector: number) => sector * SECTOR;

  const descriptor = (type: 1 | 2, rootRec: Uint8Array, ptSize: number, l: number, m: number) => {
    const b = new Uint8Array(SECTOR);
    b[0] = type;
    ascii(b, 1, 5, 'CD001');
    b[6] = 1;
    if (type === 1) {
      ascii(b, 8, 32, opts.systemId ?? 'LINUX');
      ascii(b, 40, 32, opts.volumeId);
      ascii(b, 190, 128, '');
      ascii(b, 318, 128, '');
      ascii(b, 446, 128, '');
      ascii(b, 574, 128, opts.applicationId ?? 'QVIRT');
      ascii(b, 702, 37 * 3, '');
    } else {
      ucs2Field(b, 8, 32, opts.systemId ?? 'LINUX');
      ucs2Field(b, 40, 32, opts.volumeId);
      b[88] = 0x25; b[89] = 0x2f; b[90] = 0x45; // "%/E": UCS-2 level 3
      ucs2Field(b, 190, 128, '');
      ucs2Field(b, 318, 128, '');
      ucs2Field(b, 446, 128, '');
      ucs2Field(b, 574, 128, opts.applicationId ?? 'QVIRT');
      ucs2Field(b, 702, 36, ''); ucs2Field(b, 739, 36, ''); ucs2Field(b, 776, 36, '');
    }
    both32(b, 80, totalSectors);
    both16(b, 120, 1);
    both16(b, 124, 1);
    both16(b, 128, SECTOR);
    both32(b, 132, ptSize);
    le32(b, 140, l);
    be32(b, 148, m);
    b.set(rootRec, 156);
    descriptorDate(b, 813, t);
    descriptorDate(b, 830, t);
    descriptorDate(b, 847, undefined);
    descriptorDate(b, 864, t);
    b[881] = 1;
    return b;
  };
  const rootRecord = (extent: number, size: number) => directoryRecord({ id: new Uint8Array([0]), extent, size, isDir: true, systemUse: new Uint8Array(0) }, t);
  img.set(descriptor(1, rootRecord(root.primaryExtent, root.primarySize), ptPrimary.length, lPrimary, mPrimary), at(16));
  img.set(descriptor(2, rootRecord(root.jolietExtent, root.jolietSize), ptJoliet.length, lJoliet, mJoliet), at(17));
  const term = new Uint8Array(SECTOR);
  term[0] = 255; ascii(term, 1, 5, 'CD001'); term[6] = 1;
  img.set(term, at(18));

  img.set(pathTable(primaryDirs, (n) => n.dirNumber, (n) => n.primaryId, (n) => n.primaryExtent, false), at(lPrimary));
  img.set(pathTable(primaryDirs, (n) => n.dirNumber, (n) => n.primaryId, (n) => n.primaryExtent, true), at(mPrimary));
  img.set(pathTable(jolietDirs, (n) => n.jolietDirNumber, (n) => n.jolietId, (n) => n.jolietExtent, false), at(lJoliet));
  img.set(pathTable(jolietDirs, (n) => n.jolietDirNumber, (n) => n.jolietId, (n) => n.jolietExtent, true), at(mJoliet));
  img.set(erEntry(), at(ceBlock));

  for (const d of primaryDirs) img.set(packRecords(primaryRecords(d, ceBlock)), at(d.primaryExtent));
  for (const d of jolietDirs) img.set(packRecords(jolietRecords(d)), at(d.jolietExtent));
  for (const f of files) {
    const e = f.entry;
    if (e?.kind === 'file') img.set(e.data, at(f.dataExtent));
  }
  return img;
}
