// tunnel-throughput's CPU baseline is one socat hop. When socat is missing the bench installs Debian's
// package the way .ci/run installs its tools: try the install, and on failure refresh the package lists
// and try once more. If that fails too, the reason is returned for the socat rows' note (never a crash).
import { spawnSync } from 'node:child_process';

const hasSocat = () => spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;

function aptGet(args: string[]): string | undefined {
  const result = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (result.error) return `apt-get: ${result.error.message}`;
  if (result.status !== 0) return `apt-get ${args.join(' ')} exited ${result.status}: ${(result.stderr || result.stdout).trim().split('\n').slice(-1)[0] ?? ''}`;
  return undefined;
}

let checked: Promise<string | undefined> | undefined;

/** Undefined once socat runs (installed now if needed); else why it cannot. */
export function ensureSocat(log: (m: string) => void): Promise<string | undefined> {
  checked ??= Promise.resolve().then(() => {
    if (hasSocat()) return undefined;
    log('socat is missing: apt-get install -y socat');
    const install = ['install', '-y', '-q', '--no-install-recommends', 'socat'];
    let failure = aptGet(install);
    if (failure) failure = aptGet(['update', '-q']) ?? aptGet(install);
    if (failure) return `socat is not installed and could not be (${failure})`;
    return hasSocat() ? undefined : 'socat was installed but does not run';
  });
  return checked;
}
