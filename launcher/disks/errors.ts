// Errors of disk preparation. Every one names the VMI volume it is about, so the launcher can report
// "volume X: why" as the VMI's failure reason without guessing.

/** A volume could not be prepared: which volume, which source, and why. */
export class VolumePreparationError extends Error {
  override name = 'VolumePreparationError';
  readonly volume: string;
  readonly source: string;
  constructor(volume: string, source: string, reason: string, options?: { cause?: unknown }) {
    super(`volume "${volume}" (${source}): ${reason}`, options);
    this.volume = volume;
    this.source = source;
  }
}

/** An external tool (qemu-img, xorrisofs) failed: its argv, exit, and stderr. */
export class DiskToolError extends Error {
  override name = 'DiskToolError';
  readonly tool: string;
  readonly args: readonly string[];
  readonly stderr: string;
  readonly exitCode: number | undefined;
  readonly timedOut: boolean;
  constructor(tool: string, args: readonly string[], detail: { stderr: string; exitCode?: number | undefined; timedOut?: boolean; reason: string }) {
    const stderr = detail.stderr.trim();
    super(`${tool} ${args.join(' ')}: ${detail.reason}${stderr ? `: ${stderr}` : ''}`);
    this.tool = tool;
    this.args = args;
    this.stderr = stderr;
    this.exitCode = detail.exitCode;
    this.timedOut = detail.timedOut ?? false;
  }
}

export const errorMessage = (err: unknown): string => (err instanceof Error ? err.message : String(err));
