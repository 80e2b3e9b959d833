// `spec.domain.clock`: the RTC base (utc, utc + offset, timezone) and the timers, mapped the way
// libvirt maps <clock>/<timer> onto QEMU (qemuBuildClockArgStr and friends).
import type { VirtualMachineInstance } from '../../src/api/types.ts';
import type { PlanBuilder } from './builder.ts';
import { ConversionError, type ConvertContext } from './plan.ts';

const CLOCK = 'spec.domain.clock';

const pad = (n: number): string => String(n).padStart(2, '0');

/** libvirt's "variable" RTC base: now + offset, as YYYY-MM-DDTHH:MM:SS in UTC. */
export function rtcBase(now: Date, offsetSeconds: number): string {
  const t = new Date(Math.floor(now.getTime() / 1000) * 1000 + offsetSeconds * 1000);
  return `${t.getUTCFullYear()}-${pad(t.getUTCMonth() + 1)}-${pad(t.getUTCDate())}T${pad(t.getUTCHours())}:${pad(t.getUTCMinutes())}:${pad(t.getUTCSeconds())}`;
}

export function configureClock(vmi: VirtualMachineInstance, ctx: ConvertContext, b: PlanBuilder): void {
  const clock = vmi.spec.domain.clock;
  const kvm = ctx.accelerator === 'kvm';
  const rtc: string[] = [];
  if (clock?.timezone !== undefined) {
    if (!/^[A-Za-z0-9_+\-/]+$/.test(clock.timezone)) throw new ConversionError(`${CLOCK}.timezone`, `"${clock.timezone}" is not a timezone name`);
    rtc.push('base=localtime');
    b.env['TZ'] = clock.timezone;
  } else if (clock?.utc?.offsetSeconds !== undefined && clock.utc.offsetSeconds !== 0) {
    rtc.push(`base=${rtcBase(ctx.now, clock.utc.offsetSeconds)}`);
  } else {
    rtc.push('base=utc');
  }

  const timer = clock?.timer;
  if (timer?.rtc) {
    const t = timer.rtc;
    if (t.present === false) b.warn(`${CLOCK}.timer.rtc.present=false: the RTC cannot be removed from q35; ignored`);
    if (t.tickPolicy === 'catchup') rtc.push('driftfix=slew');
    if (t.track === 'guest') rtc.push('clock=vm');
    else if (t.track === 'wall') rtc.push('clock=host');
  }
  b.arg('-rtc', rtc.join(','));

  if (timer?.pit) {
    const t = timer.pit;
    if (t.present === false) b.warn(`${CLOCK}.timer.pit.present=false: libvirt keeps the PIT; ignored`);
    if (t.tickPolicy === 'delay' || t.tickPolicy === 'discard') {
      if (kvm) b.global(`kvm-pit.lost_tick_policy=${t.tickPolicy}`);
      else b.warn(`${CLOCK}.timer.pit.tickPolicy=${t.tickPolicy}: applies to the in-kernel PIT only; ignored under TCG`);
    } else if (t.tickPolicy === 'catchup') {
      b.warn(`${CLOCK}.timer.pit.tickPolicy=catchup: QEMU's default PIT behaviour; nothing to set`);
    }
  }
  if (timer?.hpet) {
    if (timer.hpet.present === false) b.machine('hpet', 'off');
    if (timer.hpet.tickPolicy) b.warn(`${CLOCK}.timer.hpet.tickPolicy: QEMU has no HPET tick policy; ignored`);
  }
  if (timer?.kvm && timer.kvm.present === false) b.cpu('kvmclock=off');
  if (timer?.hyperv && timer.hyperv.present !== false) {
    if (kvm) b.cpu('hv-time=on');
    else b.warn(`${CLOCK}.timer.hyperv: the Hyper-V clock needs KVM; ignored under TCG`);
  }
}
