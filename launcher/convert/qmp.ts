// The QMP monitors: the launcher's main one (an inherited fd — a connected socketpair end or an
// already-listening socket — or a path), plus a second, path-based monitor for debugging and
// passthrough clients (QEMU serves one client per monitor socket).
import { opt, type PlanBuilder } from './builder.ts';
import type { ConvertContext, LaunchPlan } from './plan.ts';
import { PrivateFile, QemuId } from './constants.ts';

export function configureMonitors(ctx: ConvertContext, b: PlanBuilder): Pick<LaunchPlan, 'qmp' | 'qmpSocket' | 'qmpDebugSocket' | 'inheritedFds'> {
  const debug = `${ctx.paths.privateDir}/${PrivateFile.QmpDebug}`;
  let qmp: LaunchPlan['qmp'];
  let qmpSocket: string;
  const inheritedFds: number[] = [];
  if (ctx.monitorFd) {
    const listening = ctx.monitorFd.listening === true;
    const opts = ['socket', `id=${QemuId.MonitorChardev}`, `fd=${ctx.monitorFd.fd}`];
    if (listening) opts.push('server=on', 'wait=off');
    b.backend('-chardev', opts.join(','));
    qmp = { fd: ctx.monitorFd.fd, listening };
    qmpSocket = debug;
    inheritedFds.push(ctx.monitorFd.fd);
  } else {
    qmpSocket = `${ctx.paths.privateDir}/${PrivateFile.Qmp}`;
    b.backend('-chardev', `socket,id=${QemuId.MonitorChardev},path=${opt(qmpSocket)},server=on,wait=off`);
    qmp = { path: qmpSocket };
  }
  b.backend('-mon', `chardev=${QemuId.MonitorChardev},id=${QemuId.Monitor},mode=control`);
  b.backend('-chardev', `socket,id=${QemuId.DebugMonitorChardev},path=${opt(debug)},server=on,wait=off`);
  b.backend('-mon', `chardev=${QemuId.DebugMonitorChardev},id=${QemuId.DebugMonitor},mode=control`);
  return { qmp, qmpSocket, qmpDebugSocket: debug, inheritedFds };
}
