// `npm run images` end to end, into a temp dir: both OCI archives are written, their tags are the
// content hash and come out the same on a second build, skopeo (Debian's) reads and copies them
// (checking every blob's digest), and the launcher image's root filesystem works: QEMU and qemu-img
// run `--version` inside it via chroot, QEMU starts a q35 machine with TCG, a virtio-vga and a
// virtio-net NIC (modules, BIOS and option ROMs all found) and answers QMP, `qvirt launcher` and
// `qvirt tail` run from the bundles, the container-disk helper is static, and nothing of libvirt is there.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildImages, buildRootfs, libvirtPaths } from '../../scripts/images/build.ts';
import { parseLdd, listTree } from '../../scripts/images/rootfs.ts';
import { contentTag, imageConfigJson } from '../../scripts/images/oci.ts';
import { qvirtScript } from '../../scripts/images/spec.ts';
import { ImageNames, parseBuiltImages, imageRefsFrom, defaultImageRefs, IMAGES_INDEX_FILE } from '../../src/deploy/images.ts';
import { LAUNCHER_NODE_FLAGS } from '../../src/local/launcher-command.ts';
import { tempDir } from '../lib/tmp.ts';
import { ensureBuiltPasst } from '../net/lib.ts';

const cleanEnv = { PATH: '/usr/bin:/usr/sbin:/bin:/sbin', HOME: '/root' };

test('ldd output, libvirt detection, tags and the image qvirt script (pure)', () => {
  const ldd = '\tlinux-vdso.so.1 (0x00007ffd)\n\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f)\n\t/lib64/ld-linux-x86-64.so.2 (0x00007f)\n';
  assert.equal(parseLdd(ldd), ['/lib/x86_64-linux-gnu/libz.so.1', '/lib64/ld-linux-x86-64.so.2']);
  assert.throws(() => parseLdd('\tlibfoo.so.1 => not found\n'), /libfoo\.so\.1/);
  assert.equal(libvirtPaths(['usr/bin/qemu-system-x86_64', 'usr/lib/x86_64-linux-gnu/libvirt.so.0', 'usr/sbin/virtqemud', 'usr/sbin/virtlogd', 'usr/bin/virt-what']), ['usr/lib/x86_64-linux-gnu/libvirt.so.0', 'usr/sbin/virtqemud', 'usr/sbin/virtlogd']);
  assert.is(contentTag('0123456789abcdef'), '0123456789ab');
  const cfg = JSON.parse(imageConfigJson({ Env: ['A=1'], Entrypoint: ['/x'], WorkingDir: '/', Labels: {} }, 'ff'));
  assert.equal(cfg.rootfs, { type: 'layers', diff_ids: ['sha256:ff'] });
  assert.is(cfg.created, undefined, 'no creation date: reproducible');
  assert.ok(qvirtScript(true).includes(`exec /usr/bin/node ${LAUNCHER_NODE_FLAGS.join(' ')} `));
  assert.not.ok(qvirtScript(false).includes('launcher)'));
  assert.ok(qvirtScript(true).includes('exec /bin/sh /usr/lib/qvirt/launcher/virt-tail.sh "$@"'), 'guest-console-log runs virt-tail, a shell script');
  assert.throws(() => parseBuiltImages([{ name: 'qvirt/launcher', ref: 'other:1' }]), /images\.json\[0\]\.ref/);
  assert.equal(imageRefsFrom([]), defaultImageRefs);
});

test('npm run images: two reproducible OCI archives with content tags; the launcher root filesystem runs QEMU', async () => {
  const out = tempDir('qvimg');
  const work = tempDir('qvimw');
  try {
    const built = await buildImages({ outDir: out.path, workDir: work.path, log: () => {} });
    assert.equal(built.map((b) => b.name), [ImageNames.Launcher, ImageNames.Virt]);
    const index = parseBuiltImages(JSON.parse(readFileSync(join(out.path, IMAGES_INDEX_FILE), 'utf8')));
    assert.equal(index, built);
    for (const b of built) {
      assert.ok(existsSync(b.archive), b.archive);
      assert.match(b.ref, new RegExp(`^${b.name}:[0-9a-f]{12}$`));
      // skopeo reads the archive like podman/containerd would and verifies every blob on copy.
      const inspect = JSON.parse(execFileSync('skopeo', ['inspect', `oci-archive:${b.archive}`], { encoding: 'utf8' })) as { Architecture: string; Layers: string[] };
      assert.is(inspect.Architecture, 'amd64');
      assert.is(inspect.Layers.length, 1);
      execFileSync('skopeo', ['copy', '-q', `oci-archive:${b.archive}`, `dir:${join(work.path, 'copy-' + b.name.replace('/', '-'))}`]);
      const layout = JSON.parse(execFileSync('tar', ['-xOf', b.archive, 'index.json'], { encoding: 'utf8' })) as { manifests: { annotations: Record<string, string> }[] };
      assert.is(layout.manifests[0]!.annotations['io.containerd.image.name'], `docker.io/${b.ref}`);
    }
    // The same inputs give the same tag.
    const again = await buildImages({ outDir: join(out.path, 'again'), workDir: work.path, log: () => {}, only: [ImageNames.Virt] });
    assert.is(again.find((b) => b.name === ImageNames.Virt)!.ref, built[1]!.ref);
    assert.is(again.find((b) => b.name === ImageNames.Virt)!.manifestDigest, built[1]!.manifestDigest);

    const root = join(work.path, 'rootfs', 'qvirt-launcher');
    assert.equal(libvirtPaths(listTree(root)), []);
    const run = (cmd: string[], input?: string) => spawnSync('chroot', [root, ...cmd], { encoding: 'utf8', env: cleanEnv, timeout: 60_000, ...(input !== undefined ? { input } : {}) });
    const qemu = run(['/usr/bin/qemu-system-x86_64', '--version']);
    assert.is(qemu.status, 0, qemu.stderr);
    assert.match(qemu.stdout, /QEMU emulator version 7\.2/);
    assert.match(run(['/usr/bin/qemu-img', '--version']).stdout, /qemu-img version 7\.2/);
    const qmp = run(['/usr/bin/qemu-system-x86_64', '-machine', 'q35,accel=tcg', '-nodefaults', '-display', 'none', '-device', 'virtio-vga', '-netdev', 'user,id=n0', '-device', 'virtio-net-pci,netdev=n0', '-S', '-qmp', 'stdio'],
      '{"execute":"qmp_capabilities"}\n{"execute":"query-status"}\n{"execute":"quit"}\n');
    assert.is(qmp.status, 0, qmp.stderr);
    assert.match(qmp.stdout, /"status": "prelaunch"/);
    // The launcher starts QEMU through setpriv's parent-death signal and a dash check (src/process/parent-death.ts).
    const guarded = run(['/usr/bin/setpriv', '--pdeathsig', 'KILL', '--', '/usr/bin/sh', '-c', 'exec "$@"', 'check', '/usr/bin/qemu-system-x86_64', '--version']);
    assert.is(guarded.status, 0, guarded.stderr);
    assert.match(guarded.stdout, /QEMU emulator version/);
    const launcher = run(['/usr/bin/qvirt', 'launcher', '--help']);
    assert.is(launcher.status, 0, launcher.stderr);
    assert.match(launcher.stdout, /--qemu-timeout/);
    assert.match(run(['/usr/bin/qvirt', 'tail', '--help']).stdout, /--logfile/);
    assert.match(run(['/usr/bin/tail', '--version']).stdout, /coreutils/, 'virt-tail\'s tail is in the image');
    assert.is(run(['/usr/bin/container-disk', '--no-op']).status, 0);
    assert.match(execFileSync('file', ['-b', join(root, 'usr/bin/container-disk')], { encoding: 'utf8' }), /statically linked/);
    // The components' image runs the controller and the handler.
    const virtRoot = join(work.path, 'rootfs', 'qvirt-virt');
    const ctl = spawnSync('chroot', [virtRoot, '/usr/bin/qvirt', 'controller', '--help'], { encoding: 'utf8', env: cleanEnv });
    assert.is(ctl.status, 0, ctl.stderr);
    assert.match(spawnSync('chroot', [virtRoot, '/usr/bin/qvirt', 'handler', '--help'], { encoding: 'utf8', env: cleanEnv }).stdout, /--device-plugins-dir/);
    assert.not.ok(existsSync(join(virtRoot, 'usr/bin/qemu-system-x86_64')));
    // The tools virt-handler runs to plumb launcher pods' networks and to relay migrations, and passt for the launcher.
    for (const cmd of [['/usr/sbin/ip', '-V'], ['/usr/sbin/nft', '--version'], ['/usr/bin/nsenter', '--version'], ['/usr/sbin/sysctl', '--version'], ['/usr/sbin/bridge', '-V'], ['/usr/bin/socat', '-V'], ['/usr/bin/setpriv', '--version']]) {
      const r = spawnSync('chroot', [virtRoot, ...cmd], { encoding: 'utf8', env: cleanEnv });
      assert.is(r.status, 0, `${cmd.join(' ')}: ${r.stderr}`);
    }
    // passt reads /proc/self/exe, which a bare chroot lacks: check it is there (its libraries came with it).
    assert.ok(existsSync(join(root, 'usr/bin/passt')));
    // ... and it is the passt scripts/passt/build.sh built, not Debian 12's (which breaks TCP).
    const passtDir = ensureBuiltPasst();
    for (const f of ['passt', 'passt.avx2']) assert.ok(readFileSync(join(root, 'usr/bin', f)).equals(readFileSync(join(passtDir, f))), `the image's /usr/bin/${f} is the built one`);
  } finally {
    out.cleanup();
    work.cleanup();
  }
});

test('a missing host file is named with its package hint', async () => {
  const work = tempDir('qvimr');
  try {
    const spec = { name: ImageNames.Virt, rootfs: { hostPaths: ['/usr/bin/definitely-not-here'], files: [], symlinks: [], dirs: [] }, config: { Env: [], Entrypoint: [], WorkingDir: '/', Labels: {} } };
    assert.throws(() => buildRootfs(spec, work.path), /\/usr\/bin\/definitely-not-here is not on this machine/);
  } finally {
    work.cleanup();
  }
});

test.run();
