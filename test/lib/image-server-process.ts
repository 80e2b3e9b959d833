// startImageServer in a process of its own (`node test/lib/image-server-process.ts DIR`): prints
// {"httpUrl","httpsUrl"} on its first stdout line and serves until killed. For measurements, where
// a server in the measuring process would share its event loop with the client being measured.
import { startImageServer } from './image-server.ts';

const dir = process.argv[2];
if (!dir) { process.stderr.write('usage: image-server-process.ts DIR\n'); process.exit(2); }
const s = await startImageServer(dir);
process.stdout.write(`${JSON.stringify({ httpUrl: s.httpUrl, httpsUrl: s.httpsUrl })}\n`);
const stop = () => { void s.close().then(() => process.exit(0)); };
process.on('SIGTERM', stop).on('SIGINT', stop);
