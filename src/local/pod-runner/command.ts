// What a container's image and command mean on a machine without a container runtime. The runner
// knows qvirt's own images (their commands are `/usr/bin/qvirt <subcommand>`, run here from this
// checkout) and KubeVirt's containerDisk containers (`/usr/bin/container-disk`, served by the local
// image store); everything else cannot run and waits with an ErrImagePull-like reason.
import { join } from 'node:path';
import { cliScript, launcherArgv, VIRT_TAIL_SCRIPT } from '../launcher-command.ts';
import { CONTAINER_DISK_BINARY, QVIRT_BINARY } from './constants.ts';
import type { Container } from './pod.ts';

export type ContainerCommand =
  /** A node process: argv after the node binary. `translatePaths`: absolute args under a mount get the root prefix. */
  | { readonly kind: 'process'; readonly argv: readonly string[]; readonly translatePaths: boolean }
  /** A program run as it is (argv[0] is the program), `translatePaths` as for a process. */
  | { readonly kind: 'exec'; readonly argv: readonly string[]; readonly translatePaths: boolean }
  /** A containerDisk container: make the image's disk visible at `<copyPath>.img` (or kernel-boot files under `<copyPath>/`). */
  | { readonly kind: 'containerDisk'; readonly image: string; readonly copyPath: string }
  /** A container whose work the local mode needs no process for (`container-disk --no-op`, copying the container-disk binary). */
  | { readonly kind: 'noop' }
  | { readonly kind: 'unsupported'; readonly message: string };

const isQvirtImage = (image: string | undefined) => !!image && /(^|\/)qvirt\/(launcher|qvirt)(:|@|$)/.test(image);

/** Decides how the container runs locally. */
export function containerCommand(c: Container): ContainerCommand {
  const command = c.command?.length ? c.command : isQvirtImage(c.image) ? [QVIRT_BINARY, 'launcher'] : undefined;
  const args = c.args ?? [];
  if (!command) return { kind: 'unsupported', message: `image "${c.image ?? ''}" has no command the local pod runner knows: only qvirt's images and commands (/usr/bin/qvirt ...) and containerDisk images run without a container runtime` };
  const [bin, ...rest] = command;
  if (bin === QVIRT_BINARY || bin === 'qvirt') {
    const all = [...rest, ...args];
    if (all[0] === 'launcher') return { kind: 'process', argv: [...launcherArgv(), ...all.slice(1)], translatePaths: false };
    if (all[0] === 'tail') return { kind: 'exec', argv: ['/bin/sh', VIRT_TAIL_SCRIPT, ...all.slice(1)], translatePaths: true };
    return { kind: 'process', argv: [cliScript(), ...all], translatePaths: true };
  }
  if (bin === CONTAINER_DISK_BINARY) {
    const all = [...rest, ...args];
    if (all.includes('--no-op')) return { kind: 'noop' };
    const i = all.indexOf('--copy-path');
    const p = i >= 0 ? all[i + 1] : undefined;
    if (!p) return { kind: 'unsupported', message: `container "${c.name}": ${CONTAINER_DISK_BINARY} needs --copy-path PATH or --no-op` };
    if (!c.image) return { kind: 'unsupported', message: `container "${c.name}": a containerDisk container needs an image` };
    return { kind: 'containerDisk', image: c.image, copyPath: p };
  }
  if ((bin === '/usr/bin/cp' || bin === 'cp') && [...rest, ...args].includes(CONTAINER_DISK_BINARY)) return { kind: 'noop' };
  return { kind: 'unsupported', message: `image "${c.image ?? ''}": command ${JSON.stringify([...command, ...args].slice(0, 4))} cannot run on this node: the local pod runner runs only qvirt's own commands (/usr/bin/qvirt ...) and containerDisk images` };
}

/**
 * Absolute arguments under one of the container's mountPaths, prefixed with its root, for qvirt
 * subcommands that do not read QVIRT_CONTAINER_ROOT themselves (the launcher does).
 */
export function translateArgs(args: readonly string[], root: string, mountPaths: readonly string[]): string[] {
  return args.map((a) => (a.startsWith('/') && mountPaths.some((m) => a === m || a.startsWith(m.endsWith('/') ? m : `${m}/`)) ? join(root, a) : a));
}
