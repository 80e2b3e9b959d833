// A failure a qvirt verb reports to its user (what failed, why, what to do) with an exit code.
// main.ts prints it as kubectl does, `Error: <message>`, with no stack trace. Kept free of imports:
// main.ts loads it for every command, the per-VM launcher included.
export class UserError extends Error {
  override name = 'UserError';
  readonly exitCode: number;
  constructor(message: string, exitCode = 1) {
    super(message);
    this.exitCode = exitCode;
  }
}
