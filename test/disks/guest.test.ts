// The seed and config disks as a Linux guest sees them: one boot of the test guest (TCG) with a
// NoCloud seed, a ConfigDrive and two configMap disks attached as virtio disks. The guest finds
// the seed by label (busybox findfs), runs its shell user-data, which mounts every other disk with
// the kernel's isofs and prints label, names and sha256 of each file; the host compares them with
// what it put in.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { prepareCloudInit } from '../../launcher/disks/cloud-init.ts';
import { prepareConfigVolume } from '../../launcher/disks/config-volumes.ts';
import { configMapSource, diskDirsUnder } from '../../launcher/disks/paths.ts';
import { ensureGuest, kernelBootArgs, kernelCmdline } from '../../src/local/guest/guest.ts';
import { tempDir } from '../lib/tmp.ts';
import { vmiWith } from './lib.ts';

const tmp = tempDir('qv-gst');
test.after(() => tmp.cleanup());
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

const userData = `#!/bin/sh
for dev in vdb vdc vdd; do
  mkdir -p /mnt/$dev
  if mount -t iso9660 -o ro /dev/$dev /mnt/$dev; then
    for l in config-2 cm-builtin cm-xorriso; do [ "$(findfs LABEL=$l 2>/dev/null)" = /dev/$dev ] && echo "QVIRT-T-LABEL $dev $l"; done
    (cd /mnt/$dev && find . -type f | sort | while read -r f; do echo "QVIRT-T-FILE $dev $f $(sha256sum < "$f" | cut -c1-64)"; done)
  else
    echo "QVIRT-T-MOUNTFAIL $dev"
  fi
done
echo QVIRT-T-DONE
`;

test('a Linux guest reads both writers\' images: labels, exact names (Rock Ridge), exact bytes', async () => {
  const guest = await ensureGuest();

  const d = diskDirsUnder(join(tmp.path, 'r'));
  const seedVmi = vmiWith({ volumes: [{ name: 'ci', cloudInitNoCloud: { userData, networkData: 'version: 2\n' } }] }, { name: 'seed', namespace: 'g' });
  const seed = await prepareCloudInit(seedVmi, d, { writer: 'builtin' });
  const cdVmi = vmiWith({ volumes: [{ name: 'cd', cloudInitConfigDrive: { userData: '#cloud-config\n', networkData: '{"links":[]}' } }], hostname: 'drive' }, { name: 'cdrive', namespace: 'g' });
  const cd = await prepareCloudInit(cdVmi, d, { writer: 'builtin' });

  const src = configMapSource(d, 'cm');
  const ts = '..2026_11_21_17_00_00.000000001';
  const cmFiles: Record<string, string> = { 'app.properties': 'color=blue\n', 'Mixed-Case.Name.json': '{"a":1}\n' };
  mkdirSync(join(src, ts), { recursive: true });
  for (const [k, v] of Object.entries(cmFiles)) {
    writeFileSync(join(src, ts, k), v);
    symlinkSync(join('..data', k), join(src, k));
  }
  symlinkSync(ts, join(src, '..data'));
  const cmBuiltin = await prepareConfigVolume({ name: 'cm', configMap: { name: 'cm', volumeLabel: 'cm-builtin' } }, d, { writer: 'builtin' });
  // a second configMap volume over the same mounted data, written by xorrisofs
  symlinkSync(src, configMapSource(d, 'cm2'));
  const cmXorriso = await prepareConfigVolume({ name: 'cm2', configMap: { name: 'cm', volumeLabel: 'cm-xorriso' } }, d, { writer: 'xorrisofs' });

  const args = [
    '-accel', 'tcg', '-m', '256', '-nodefaults', '-no-user-config', '-display', 'none', '-serial', 'stdio', '-no-reboot',
    ...kernelBootArgs(guest, `${kernelCmdline} qvirt.dhcp=0 qvirt.ga=0 qvirt.shell=0`),
    ...[seed!.path, cd!.path, cmBuiltin.path, cmXorriso.path].flatMap((p) => ['-drive', `file=${p},if=virtio,format=raw,readonly=on`]),
  ];
  const qemu = spawn('qemu-system-x86_64', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let serial = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`guest did not finish within 180 s; console:\n${serial.slice(-3000)}`)), 180_000);
      qemu.stdout.on('data', (b: Buffer) => {
        serial += b.toString('latin1');
        if (serial.includes('QVIRT-GUEST-READY')) { clearTimeout(timer); resolve(); }
      });
      qemu.stderr.on('data', (b: Buffer) => { serial += b.toString('latin1'); });
      qemu.on('exit', (code) => { clearTimeout(timer); reject(new Error(`qemu exited (${code}) early; console:\n${serial.slice(-3000)}`)); });
    });
  } finally {
    if (qemu.exitCode === null && qemu.signalCode === null) {
      const gone = new Promise((r) => qemu.once('exit', r));
      qemu.kill('SIGKILL');
      await gone;
    }
  }
  const lines = serial.split(/\r?\n/).filter((l) => l.startsWith('QVIRT-'));
  const got = lines.filter((l) => l.startsWith('QVIRT-T-') || l.startsWith('QVIRT-CIDATA') || l.startsWith('QVIRT-USERDATA'));

  if (process.env.QVIRT_DEBUG) process.stderr.write(lines.join('\n') + '\n');
  // the guest found the seed by label and ran its user-data
  assert.ok(got.includes('QVIRT-CIDATA instance-id=5d307ca9-b3ef-428c-8861-06e72d69f223 source=nocloud dev=vda hostname=seed'), got.join('\n'));
  assert.ok(got.includes('QVIRT-USERDATA-EXIT code=0'), got.join('\n'));

  const cdMeta = '{"instance_id":"cdrive.g","hostname":"drive","uuid":"5d307ca9-b3ef-428c-8861-06e72d69f223"}';
  const cmExpect = (dev: string) => Object.entries(cmFiles).flatMap(([k, v]) => [`./${ts}/${k}`, `./..data/${k}`, `./${k}`].map((p) => `QVIRT-T-FILE ${dev} ${p} ${sha(v)}`));
  const want = [
    'QVIRT-T-LABEL vdb config-2',
    `QVIRT-T-FILE vdb ./openstack/latest/meta_data.json ${sha(cdMeta)}`,
    `QVIRT-T-FILE vdb ./openstack/latest/network_data.json ${sha('{"links":[]}')}`,
    `QVIRT-T-FILE vdb ./openstack/latest/user_data ${sha('#cloud-config\n')}`,
    'QVIRT-T-LABEL vdc cm-builtin',
    ...cmExpect('vdc'),
    'QVIRT-T-LABEL vdd cm-xorriso',
    ...cmExpect('vdd'),
  ].sort();
  const t = got.filter((l) => l.startsWith('QVIRT-T-') && l !== 'QVIRT-T-DONE').sort();
  assert.equal(t, want);
});

test.run();
