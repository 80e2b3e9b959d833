// Who may import whom (docs/architecture.md's table), checked over the source tree: every static and
// dynamic import and re-export of every .ts file, and the launcher's whole import closure (what its
// bundle is made of), which must stay clear of @kubernetes/client-node, controller/ and handler/, and of
// grpc-js and node:http2/tls/http (the launcher speaks gRPC over src/proto/h2 on node:net).
//   qmp/                 node:* only, nothing else in the repo
//   launcher/            qmp/, src/api, src/proto, src/log, src/net, src/flags, src/process, pino/protobufjs
//   handler/             shared modules; never controller/, launcher/ or a room of src/
//   controller/          shared modules; never handler/, launcher/, qmp/ or a room of src/
//   src/api              nothing with I/O (pure: node:crypto for hashes, node:path for path arithmetic)
//   shared               src/{api,kube,proto,log,net,pki,metrics,flags,version,process}: one another only
//   src/apiserver        shared modules only (a stand-in for kube-apiserver: no KubeVirt component)
//   src/virt-api, src/admission  shared modules and each other
//   src/local, src/cli, src/deploy  anything (they assemble the rooms)
//   nothing shipped imports test/ or bench/
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { importSpecifiers, root, staticValueImports, target, tsFiles } from './import-graph.ts';
import { COMPONENTS, SHARED, SRC_ROOMS, under } from './rooms.ts';

interface Rule { readonly dir: string; allowed(t: string): boolean; readonly says: string }

const NODE_IO = ['node:fs', 'node:fs/promises', 'node:net', 'node:http', 'node:https', 'node:child_process', 'node:dgram', 'node:tls', 'node:os', 'node:worker_threads', 'node:process'];

const external = (t: string) => t.startsWith('node:') || t.startsWith('pkg:');
const shared = (t: string) => SHARED.some((d) => under(t, d));
const inRoom = (dirs: readonly string[]) => (t: string) => dirs.some((d) => under(t, d));
const noRoomOfSrc = (t: string) => !SRC_ROOMS.some((r) => under(t, r));
const notTests = (t: string) => !under(t, 'test') && !under(t, 'bench');

const rules: Rule[] = [
  { dir: 'qmp', says: 'node:* and qmp/ only', allowed: (t) => t.startsWith('node:') || under(t, 'qmp') },
  {
    dir: 'launcher', says: 'qmp/, src/api, src/proto, src/log, src/net, src/flags, src/process, node:*, pino/protobufjs',
    allowed: (t) => t.startsWith('node:') || ['pkg:pino', 'pkg:protobufjs'].includes(t) ||
      ['launcher', 'qmp', 'src/api', 'src/proto', 'src/log', 'src/net', 'src/flags', 'src/process'].some((d) => under(t, d)),
  },
  { dir: 'handler', says: 'never controller/ or launcher/', allowed: (t) => !under(t, 'controller') && !under(t, 'launcher') },
  { dir: 'controller', says: 'never handler/, launcher/ or qmp/', allowed: (t) => !['handler', 'launcher', 'qmp'].some((d) => under(t, d)) },
  ...COMPONENTS.map((dir): Rule => ({ dir, says: 'no room of src/', allowed: noRoomOfSrc })),
  { dir: 'src/api', says: 'src/api and I/O-free node modules only', allowed: (t) => under(t, 'src/api') || (t.startsWith('node:') && !NODE_IO.includes(t)) },
  ...SHARED.filter((d) => d !== 'src/api').map((dir): Rule => ({ dir, says: 'shared modules, node:* and packages only', allowed: (t) => external(t) || shared(t) })),
  { dir: 'src/apiserver', says: 'itself and the shared modules only', allowed: (t) => external(t) || shared(t) || under(t, 'src/apiserver') },
  ...['src/virt-api', 'src/admission'].map((dir): Rule => ({
    dir, says: 'the shared modules, virt-api and its admission only', allowed: (t) => external(t) || shared(t) || inRoom(['src/virt-api', 'src/admission'])(t) || t === 'package.json',
  })),
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

// node:crypto: ~2.4 MiB of RSS in every launcher for a few hashes (bench/launcher-memory.md); the paths that
// need it (a migration's short socket link, a cloud-init UUID without firmware) load it with process.getBuiltinModule.
// node:util: an ES import of it builds its namespace from every export, loading parseArgs, styleText, diff and
// worker_threads.
// node:fs/promises: it loads readline, the REPL's history and recursive fs.watch; launcher/fs/async.ts serves
// the same calls on node:fs.
const NOT_IN_LAUNCHER = ['pkg:@kubernetes/client-node', 'pkg:@grpc/grpc-js', 'node:http2', 'node:tls', 'node:http', 'node:https', 'node:crypto', 'node:util', 'node:fs/promises'];

test("the launcher's import closure (its bundle) reaches no client-node, grpc-js, node:http2/tls/http, node:crypto, node:util, node:fs/promises, controller/ or handler/", () => {
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
      if (NOT_IN_LAUNCHER.includes(t) || under(t, 'controller') || under(t, 'handler')) {
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

// @kubernetes/client-node's KubeConfig imports its whole generated API (250 ms of CPU, 26 MB of heap, ~80 MB
// of RSS): the node agent, the controllers and the local mode read kubeconfigs with src/kube/kubeconfig.ts,
// which imports client-node only for an exec plugin or an auth provider (a dynamic import, when used).
test('the node agent, the controllers and the local mode load no @kubernetes/client-node as they start', () => {
  for (const entry of ['src/cli/handler.ts', 'src/cli/controller.ts', 'src/local/up.ts']) {
    const seen = new Set<string>();
    const via: Record<string, string> = {};
    const queue = [entry];
    let bad: string | undefined;
    while (queue.length && !bad) {
      const f = queue.shift()!;
      if (seen.has(f)) continue;
      seen.add(f);
      for (const spec of staticValueImports(readFileSync(join(root, f), 'utf8'))) {
        const t = target(f, spec);
        if (t === 'pkg:@kubernetes/client-node') {
          const chain = [t, f];
          for (let p = via[f]; p; p = via[p]) chain.push(p);
          bad = chain.reverse().join(' → ');
          break;
        }
        if (!t.startsWith('pkg:') && !t.startsWith('node:') && t.endsWith('.ts') && !seen.has(t)) { via[t] ??= f; queue.push(t); }
      }
    }
    assert.is(bad, undefined, bad);
    assert.ok(seen.size > 20, `the closure from ${entry} has only ${seen.size} files`);
  }
  assert.equal(staticValueImports("import type { A } from 'a';\nimport { type B, c } from 'b';\nexport { d } from './d.ts';\nconst m = await import('e');"), ['b', './d.ts']);
});

test.run();
