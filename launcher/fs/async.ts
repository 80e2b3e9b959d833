// The promise-returning file-system calls of the launcher (launcher/fs: it imports nothing else of the launcher), on node:fs's callback API: the same arguments,
// results and errors as node:fs/promises. The launcher does not load node:fs/promises, because loading it
// also loads readline, the REPL's history and recursive fs.watch, about 0.7 MiB of RSS in every launcher
// (bench/launcher-memory.md). test/architecture keeps node:fs/promises out of the launcher's import closure.
// A file is opened for its descriptor (openFd): the launcher only creates, truncates and probes files.
import * as fs from 'node:fs';

type Callback<T> = (err: NodeJS.ErrnoException | null, value: T) => void;

/** `f(...args, callback)` as a promise of the callback's value. */
function promised<F extends (...args: never[]) => Promise<unknown>>(f: (...args: never[]) => void): F {
  return ((...args: unknown[]) => new Promise((resolve, reject) => {
    (f as (...a: unknown[]) => void)(...args, ((err, value) => (err ? reject(err) : resolve(value))) as Callback<unknown>);
  })) as unknown as F;
}

type Promises = typeof fs.promises;

export const constants = fs.constants;
export const access = promised<Promises['access']>(fs.access);
export const chmod = promised<Promises['chmod']>(fs.chmod);
export const chown = promised<Promises['chown']>(fs.chown);
export const copyFile = promised<Promises['copyFile']>(fs.copyFile);
export const mkdir = promised<Promises['mkdir']>(fs.mkdir);
export const mkdtemp = promised<Promises['mkdtemp']>(fs.mkdtemp);
export const readdir = promised<Promises['readdir']>(fs.readdir);
export const readFile = promised<Promises['readFile']>(fs.readFile);
/** realpath(3), as node:fs/promises' realpath (not node:fs's JavaScript walk of the path). */
export const realpath = promised<Promises['realpath']>(fs.realpath.native);
export const rename = promised<Promises['rename']>(fs.rename);
export const rm = promised<Promises['rm']>(fs.rm);
export const stat = promised<Promises['stat']>(fs.stat);
export const statfs = promised<Promises['statfs']>(fs.statfs);
export const truncate = promised<Promises['truncate']>(fs.truncate);
export const writeFile = promised<Promises['writeFile']>(fs.writeFile);

/** open(2): the new descriptor. */
export const openFd = promised<(path: fs.PathLike, flags: fs.OpenMode, mode?: fs.Mode) => Promise<number>>(fs.open);
/** ftruncate(2). */
export const ftruncate = promised<(fd: number, length: number) => Promise<void>>(fs.ftruncate);
/** close(2). */
export const closeFd = promised<(fd: number) => Promise<void>>(fs.close);
