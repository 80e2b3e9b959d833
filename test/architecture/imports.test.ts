// Who may import whom (the design's table), checked over the source tree: every static and dynamic
// import of every .ts file under qmp/, launcher/, handler/, controller/ and src/api/, and the
// launcher's whole import closure (what its bundle is made of) must stay clear of
// @kubernetes/client-node, controller/ and handler/.
//   qmp/        node:* only, nothing else in the repo
//   launcher/   qmp/, src/api, src/proto, src/log — plus src/net (pure address arithmetic) and
//               src/flags (the dependency-free flag parser every qvirt command shares)
//   handler/    src/*, never controller/ or launcher/
//   controller/ src/*, never handler/, launcher/ or qmp/
//   src/api     nothing with I/O (pure: node:crypto for hashes, node:path for path arithmetic)
//   shared      src/{api,kube,proto,log,net,pki,metrics,flags,version}: one another only, never a room
//               (src/{apiserver,local,cli,admission,virt-api,deploy}) or a component
//   handler/, controller/, launcher/  no room but the local node's (src/local: the image-store seam, being cut)
//   nothing shipped imports test/ or bench/
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';

const root = normalize(join(import.meta.dirname, '../..'));

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) tsFiles(rel, out);
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** Import specifiers of a file: `import … from`, `export … from`, side-effect `import '…'`, `import('…')`. */
function importSpecifiers(source: string): string[] {
  const noComments = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const out: string[] = [];
  const re = /(?:^|[;\n])\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]|\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
  for (const m of noComments.matchAll(re)) out.push((m[1] ?? m[2])!);
  return out;
}

/** What an import points at: a repo path (relative to the root) or `pkg:<name>` / `node:<mod>`. */
function target(fromFile: string, spec: string): string {
  if (spec.startsWith('.')) return normalize(join(dirname(fromFile), spec));
  if (spec.startsWith('node:')) return spec;
  const parts = spec.split('/');
  return `pkg:${spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]}`;
}

const under = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

interface Rule { readonly dir: string; allowed(t: string): boolean; readonly says: string }

const NODE_IO = ['node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:child_process', 'node:dgram', 'node:tls', 'node:os', 'node:worker_threads', 'node:process'];

/** What every component may share: the contracts and plumbing, no component's room. */
const SHARED = ['src/api', 'src/kube', 'src/proto', 'src/log', 'src/net', 'src/pki', 'src/metrics', 'src/flags', 'src/version'];
/** The rooms under src/: components of their own (the embedded API server, the local node, the CLI, admission, virt-api, manifests). */
const ROOMS = ['src/apiserver', 'src/local', 'src/cli', 'src/admission', 'src/virt-api', 'src/deploy'];
const notARoom = (except: readonly string[]) => (t: string) => !ROOMS.filter((r) => !except.includes(r)).some((r) => under(t, r));
const notTests = (t: string) => !under(t, 'test') && !under(t, 'bench');

const rules: Rule[] = [
  { dir: 'qmp', says: 'node:* and qmp/ only', allowed: (t) => t.startsWith('node:') || under(t, 'qmp') },
  {
    dir: 'launcher', says: 'qmp/, src/api, src/proto, src/log, src/net, src/flags, node:*, grpc/pino/protobufjs',
    allowed: (t) => t.startsWith('node:') || ['pkg:@grpc/grpc-js', 'pkg:pino', 'pkg:protobufjs'].includes(t) ||
      ['launcher', 'qmp', 'src/api', 'src/proto', 'src/log', 'src/net', 'src/flags'].some((d) => under(t, d)),
  },
  { dir: 'handler', says: 'never controller/ or launcher/', allowed: (t) => !under(t, 'controller') && !under(t, 'launcher') },
  { dir: 'controller', says: 'never handler/, launcher/ or qmp/', allowed: (t) => !['handler', 'launcher', 'qmp'].some((d) => under(t, d)) },
  { dir: 'src/api', says: 'src/api and I/O-free node modules only', allowed: (t) => under(t, 'src/api') || (t.startsWith('node:') && !NODE_IO.includes(t)) },
  ...SHARED.filter((d) => d !== 'src/api').map((dir): Rule => ({
    dir, says: 'shared modules, node:* and packages only', allowed: (t) => t.startsWith('node:') || t.startsWith('pkg:') || SHARED.some((d) => under(t, d)),
  })),
  ...['handler', 'controller', 'launcher'].map((dir): Rule => ({ dir, says: 'no room of src/ but src/local', allowed: notARoom(['src/local']) })),
  ...['src', 'qmp', 'launcher', 'handler', 'controller', 'scripts'].map((dir): Rule => ({ dir, says: 'never test/ or bench/', allowed: notTests })),
];

test('the import specifier scan sees every form of import', () => {
  const src = [
    "import { a } from './a.ts';", "import type { B } from '../b.ts';", "export { c } from './c.ts';", "export * from 'pino';",
    "import './side.ts';", "const m = await import('node:fs');", '// import { x } from "./commented.ts";', "/* import y from './block.ts' */",
    "import {\n  multi,\n  line,\n} from '@grpc/grpc-js';",
  ].join('\n');
  assert.equal(importSpecifiers(src).sort(), ['../b.ts', './a.ts', './c.ts', './side.ts', '@grpc/grpc-js', 'node:fs', 'pino'].sort());
});

for (const rule of rules) {
  test(`${rule.dir}/ imports only what the design allows (${rule.says})`, () => {
    const bad: string[] = [];
    const files = tsFiles(rule.dir);
    assert.ok(files.length > 0, `no .ts files under ${rule.dir}`);
    for (const f of files) {
      for (const spec of importSpecifiers(readFileSync(join(root, f), 'utf8'))) {
        const t = target(f, spec);
        if (!rule.allowed(t)) bad.push(`${f} imports ${spec}`);
      }
    }
    assert.equal(bad, [], bad.join('\n'));
  });
}

test("the launcher's import closure (its bundle) reaches no client-node, controller/ or handler/", () => {
  const seen = new Set<string>();
  const path: Record<string, string> = {};
  const queue = ['launcher/main.ts'];
  const bad: string[] = [];
  while (queue.length) {
    const f = queue.shift()!;
    if (seen.has(f)) continue;
    seen.add(f);
    for (const spec of importSpecifiers(readFileSync(join(root, f), 'utf8'))) {
      const t = target(f, spec);
      if (t === 'pkg:@kubernetes/client-node' || under(t, 'controller') || under(t, 'handler')) {
        const chain = [t, f];
        for (let p = path[f]; p; p = path[p]) chain.push(p);
        bad.push(chain.reverse().join(' → '));
      } else if (!t.startsWith('pkg:') && !t.startsWith('node:') && t.endsWith('.ts') && !seen.has(t)) {
        path[t] ??= f;
        queue.push(t);
      }
    }
  }
  assert.ok(seen.size > 50, `the closure from launcher/main.ts has only ${seen.size} files`);
  assert.equal(bad, [], bad.join('\n'));
});

test.run();
