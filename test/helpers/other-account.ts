// A TCP client run as another account of this machine (`nobody`), for tests of what a second local
// account can reach. Switching accounts needs root and setpriv (util-linux); CI runs as root, so these
// tests run there, and elsewhere they are skipped with the reason.
import { execFile, execFileSync } from 'node:child_process';

export interface OtherAccount {
  uid: number;
  gid: number;
}

/** The `nobody` account, or why a client cannot be run as it here. */
export function otherAccount(): OtherAccount | string {
  if (process.platform !== 'linux') return 'not Linux';
  if (process.getuid?.() !== 0) return 'not running as root, so a client cannot be started as another account';
  try {
    execFileSync('setpriv', ['--version'], { stdio: 'ignore' });
    const id = (flag: string) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return 'setpriv (util-linux) or the account nobody is missing';
  }
}

/**
 * Connects as `account` to host:port (from `localAddress` if given), sends a line and says how it went:
 * 'echoed' when bytes came back, otherwise the error code ('ECONNRESET' for a reset) or 'EOF'.
 */
export function tryAs(account: OtherAccount, port: number, host = '127.0.0.1', localAddress?: string): Promise<string> {
  const script = `
    const s = require('node:net').connect(${JSON.stringify({ port, host, localAddress })});
    let done = false;
    const report = (r) => { if (!done) { done = true; process.stdout.write(r); s.destroy(); } };
    s.on('connect', () => s.write('hello from another account\\n'));
    s.on('data', () => report('echoed'));
    s.on('error', (e) => report(e.code || e.message));
    s.on('end', () => report('EOF'));`;
  const argv = [`--reuid=${account.uid}`, `--regid=${account.gid}`, '--clear-groups', process.execPath, '-e', script];
  return new Promise((resolve, reject) => {
    execFile('setpriv', argv, { cwd: '/', encoding: 'utf8' }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout)));
  });
}
