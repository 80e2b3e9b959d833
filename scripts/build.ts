// Builds the launcher bundle: dist/launcher/launcher.bundle.cjs (every module the launcher needs,
// minified, in one file) plus its .proto files, and a tiny loader dist/launcher/qvirt-launcher.cjs
// that turns on V8's compile cache before loading the bundle. Beside it a copy of launcher/virt-tail.sh
// (`qvirt tail`, the guest-console-log container of every launcher pod: a shell script). A launcher pod then starts from one
// pre-built file instead of resolving and type-stripping hundreds of modules (≈450 ms → ≈100 ms),
// and without Node's TypeScript stripper in memory. The launcher's bundle and loader are CommonJS: Node
// runs a CommonJS main module without its ES module loader's asynchronous file reads, which load
// node:fs/promises and with it readline and the REPL's history (0.7 MiB of RSS in every launcher,
// bench/launcher-memory.md).
import { build, type BuildOptions, type Plugin } from 'esbuild';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { descriptorFileName, protoDescriptorJson } from '../src/proto/descriptor.ts';
import { LAUNCHER_BUNDLE, LAUNCHER_LOADER } from '../src/local/launcher-command.ts';

const root = new URL('..', import.meta.url).pathname;
/** When a launcher writes its compile cache, ms after it started: by then it has usually started its VM. */
const COMPILE_CACHE_FLUSH_MS = 5000;

/**
 * pino's own destinations (sonic-boom) and transports (thread-stream, on worker_threads), which qvirt does
 * not use — its components log through src/log/fd-destination.ts or a stream they pass — left out of a
 * bundle: pino requires them as it loads, and with them node:assert and worker_threads (in a launcher,
 * ~1 MiB of RSS: bench/launcher-memory.md). In their place modules that fail if anything calls them, and
 * for pino's `isMainThread` (read only to set up a sonic-boom destination) the main thread's value.
 */
const LEFT_OUT_OF_PINO: Record<string, string> = {
  'sonic-boom': "module.exports = class SonicBoom { constructor() { throw new Error('pino.destination (sonic-boom) is not in this bundle: log through src/log/fd-destination.ts'); } };",
  'thread-stream': "module.exports = function ThreadStream() { throw new Error('pino transports (thread-stream) are not in this bundle'); };",
  worker_threads: 'module.exports = { isMainThread: true };',
};
const withoutPinoStreams: Plugin = {
  name: 'without-pino-streams',
  setup(b) {
    b.onResolve({ filter: /^(sonic-boom|thread-stream|worker_threads)$/ }, (a) =>
      (/[\\/]node_modules[\\/]pino[\\/]/.test(a.importer) ? { path: a.path, namespace: 'without-pino-streams' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'without-pino-streams' }, (a) => ({ loader: 'js', contents: LEFT_OUT_OF_PINO[a.path]! }));
  },
};

/** What every bundle built here shares: ESM for Node 22+, minified, with `require` for CommonJS dependencies. */
const NODE_BUNDLE = {
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  // QVIRT_BUNDLE_MINIFY=0 keeps names readable in CPU profiles (node --cpu-prof) of launchers.
  minify: process.env.QVIRT_BUNDLE_MINIFY !== '0',
  legalComments: 'none',
  // grpc-js requires @grpc/proto-loader (and with it protobufjs) only inside its channelz and ORCA
  // services, which nothing here serves: left out, the bundle is ~110 KB smaller (src/proto/codec.ts
  // encodes qvirt's own messages; bench/launcher-memory.md).
  external: ['@grpc/proto-loader'],
  // CommonJS dependencies (grpc-js) call require().
  banner: { js: "import{createRequire as __qvirtRequire}from'node:module';const require=__qvirtRequire(import.meta.url);" },
  logLevel: 'warning',
} as const satisfies BuildOptions;

/**
 * A CommonJS bundle instead (no top-level await in its modules): `require` is CommonJS's own, and
 * `import.meta.url` (src/proto/service.ts finds the .proto files beside it) the bundle file's URL.
 */
const COMMONJS = {
  format: 'cjs',
  define: { 'import.meta.url': '__qvirtModuleUrl' },
  banner: { js: "const __qvirtModuleUrl=require('node:url').pathToFileURL(__filename).href;" },
} as const satisfies BuildOptions;

/**
 * Bundles one entry point into `<outDir>/<outName>` (ESM for Node, or CommonJS with `commonJs`; minified)
 * with the .proto files beside it, after emptying `outDir`. The launcher bundle and the images' CLI bundle both come from here.
 */
export async function bundleEntry(entry: string, outDir: string, outName: string, opts: { keepOutDir?: boolean; withoutPinoStreams?: boolean; commonJs?: boolean } = {}): Promise<void> {
  if (!opts.keepOutDir) rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  await build({
    ...NODE_BUNDLE,
    ...(opts.commonJs ? COMMONJS : {}),
    entryPoints: [join(root, entry)],
    outfile: join(outDir, outName),
    plugins: opts.withoutPinoStreams ? [withoutPinoStreams] : [],
  });
  copyProtos(outDir);
}

/** The .proto files into `outDir`, and their descriptors for a bundle to load without parsing (src/proto/descriptor.ts). */
function copyProtos(outDir: string): void {
  const protoDir = join(root, 'src/proto');
  for (const f of readdirSync(protoDir)) {
    if (!f.endsWith('.proto')) continue;
    copyFileSync(join(protoDir, f), join(outDir, f));
    writeFileSync(join(outDir, descriptorFileName(f)), protoDescriptorJson(protoDir, f));
  }
}

/** Builds the launcher bundle into `out` (default dist/launcher; scripts/images.ts builds its own copy). */
export async function buildLauncherBundle(out = join(root, 'dist/launcher')): Promise<string> {
  await bundleEntry('launcher/entry.ts', out, LAUNCHER_BUNDLE, { withoutPinoStreams: true, commonJs: true });
  writeFileSync(join(out, LAUNCHER_LOADER), `// Generated by scripts/build.ts: enable V8's compile cache, then run the launcher bundle.
const nodeModule = require('node:module');
try { nodeModule.enableCompileCache(process.env.QVIRT_COMPILE_CACHE); } catch {}
// Node writes the cache when the process exits, but a launcher lives as long as its VM (and may end by
// SIGKILL): until one exits, every launcher started after a new build compiles the bundle again (≈20 ms
// of CPU each). Write it once this one has started its VM; later flushes skip an unchanged cache.
setTimeout(() => { try { nodeModule.flushCompileCache?.(); } catch {} }, ${COMPILE_CACHE_FLUSH_MS}).unref();
require('./${LAUNCHER_BUNDLE}');
`);
  copyFileSync(join(root, 'launcher/virt-tail.sh'), join(out, 'virt-tail.sh'));
  return out;
}

/**
 * Builds the CLI into `out` (default dist/cli): src/cli/main.ts and a chunk per command it imports when
 * it runs (esbuild's code splitting), the .proto files beside them, and a loader qvirt.mjs that turns
 * on V8's compile cache first. bin/qvirt and the local pod runner run it while it is at least as new
 * as the sources. A short command then loads a few pre-built files instead of type-stripping its
 * modules: Node's TypeScript stripper alone (a WebAssembly module compiled at every start) costs a
 * process ~0.12 s of CPU and 17 MB of RSS, and `qvirt create vm` took 0.34 s of CPU from the sources.
 */
export async function buildCliBundle(out = join(root, 'dist/cli')): Promise<string> {
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  await build({
    // Every file directly in `out`, as src/cli/main.ts is two levels below the checkout: the modules'
    // paths relative to their own location (../../bin/qvirt, ../../package.json, ../../deploy/crds/, the
    // .proto files beside src/proto/service.ts) resolve the same from the bundle.
    ...NODE_BUNDLE,
    entryPoints: { main: join(root, 'src/cli/main.ts') },
    splitting: true,
    outdir: out,
    chunkNames: '[name]-[hash]',
  });
  copyProtos(out);
  writeFileSync(join(out, 'qvirt.mjs'), `// Generated by scripts/build.ts: enable V8's compile cache, then run the CLI bundle.
import * as module from 'node:module';
try { module.enableCompileCache(process.env.QVIRT_COMPILE_CACHE); } catch {}
await import('./main.js');
`);
  return out;
}

if (process.argv[1] === new URL(import.meta.url).pathname) {
  console.log(`built ${await buildLauncherBundle()}`);
  console.log(`built ${await buildCliBundle()}`);
}
