// The reference agent's checks (issue 61), one run at a time, against real things the test starts and
// stops: a TCP listener, an HTTP server, a self-signed HTTPS server, the Monitoring Plugins, plugins
// that hang or print without end. Nothing about speed is asserted here (bench/ measures that).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCheck } from '../src/agent/checks/run-check.js';
import { checkResultSchema, MAX_CHECK_OUTPUT_CHARS, type AgentCheck, type CheckKind, type CheckResult } from '../src/modules/checks/check-protocol.js';
import { selfSignedCertificate } from './helpers/self-signed.js';

const PLUGINS = '/usr/lib/nagios/plugins';
const hasPlugins = existsSync(`${PLUGINS}/check_tcp`) && existsSync(`${PLUGINS}/check_http`) && existsSync(`${PLUGINS}/check_disk`);
const hasPing = ['/usr/bin/ping', '/bin/ping', '/sbin/ping'].some((p) => existsSync(p));
const posix = process.platform !== 'win32';

function check(kind: CheckKind, params: Record<string, unknown>, timeout = 10): AgentCheck {
  return { id: randomUUID(), name: `${kind} check`, kind, params, interval_seconds: 60, timeout_seconds: timeout };
}

/** One run, whose result must be what the server accepts in a check_results frame. */
async function run(c: AgentCheck): Promise<CheckResult> {
  const result = await runCheck(c);
  expect(checkResultSchema.safeParse(result).success, JSON.stringify(result).slice(0, 500)).toBe(true);
  return result;
}

const listening = (server: net.Server) => new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
const closed = (server: net.Server) => new Promise<void>((resolve) => server.close(() => resolve()));

/** Gone, or a zombie waiting for a parent that does not reap (PID 1 in a container may not). */
async function processGone(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => null);
  if (stat !== null) return / Z /.test(stat.slice(stat.lastIndexOf(')')));
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

let tmp: string;
let web: http.Server;
let webPort: number;
let tls: https.Server;
let tlsPort: number;
let certDir: string;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'agent-checks-'));
  web = http.createServer((req, res) => {
    if (req.url === '/broken') res.writeHead(500).end('broken');
    else if (req.url === '/moved') res.writeHead(302, { location: '/' }).end();
    else res.writeHead(200, { 'content-type': 'text/plain' }).end('hello from the test server');
  });
  webPort = await listening(web);
  const cert = await selfSignedCertificate('agent-checks-tls-');
  certDir = cert.dir;
  tls = https.createServer({ cert: await readFile(cert.cert), key: await readFile(cert.key) }, (_req, res) => res.end('secure hello'));
  tlsPort = await listening(tls);
});

afterAll(async () => {
  await Promise.all([closed(web), closed(tls)]);
  await rm(tmp, { recursive: true, force: true });
  await rm(certDir, { recursive: true, force: true });
});

describe('tcp', () => {
  it('is OK while a listener accepts and CRITICAL once it is gone', async () => {
    const server = net.createServer((socket) => socket.end());
    const port = await listening(server);
    const tcp = check('tcp', { host: '127.0.0.1', port });
    const up = await run(tcp);
    expect(up).toMatchObject({ check_id: tcp.id, state: 0 });
    expect(up.output).toMatch(new RegExp(`^TCP OK - \\d+\\.\\d{3} s to 127\\.0\\.0\\.1:${port}$`));
    expect(up.perfdata).toEqual([expect.objectContaining({ label: 'time', uom: 's', min: 0 })]);
    await closed(server);
    const down = await run(tcp);
    expect(down.state).toBe(2);
    expect(down.output).toBe(`TCP CRITICAL - connection refused (127.0.0.1:${port})`);
  });

  it('carries its thresholds into perfdata, in seconds', async () => {
    const result = await run(check('tcp', { host: '127.0.0.1', port: webPort, warn_ms: 600_000 }));
    expect(result.state).toBe(0);
    expect(result.perfdata[0]).toMatchObject({ label: 'time', warn: '600' });
  });
});

describe('http and https', () => {
  it('is OK on 200 with the expected text, with time and size', async () => {
    const result = await run(check('http', { url: `http://127.0.0.1:${webPort}/`, body_contains: 'from the test' }));
    expect(result.state).toBe(0);
    expect(result.output).toMatch(/^HTTP OK - 200 OK - 26 bytes in \d+\.\d{3} s$/);
    expect(result.perfdata.map((p) => [p.label, p.uom])).toEqual([['time', 's'], ['size', 'B']]);
    expect(result.perfdata[1]!.value).toBe(26);
  });

  it('is CRITICAL on a 500, on a missing text, and on a redirect it was told not to accept', async () => {
    const broken = await run(check('http', { url: `http://127.0.0.1:${webPort}/broken` }));
    expect(broken.state).toBe(2);
    expect(broken.output).toContain('status 500 not 2xx or 3xx');
    const lacking = await run(check('http', { url: `http://127.0.0.1:${webPort}/`, body_contains: 'absent words' }));
    expect(lacking.state).toBe(2);
    expect(lacking.output).toContain('body lacks "absent words"');
    const moved = await run(check('http', { url: `http://127.0.0.1:${webPort}/moved` }));
    expect(moved.state).toBe(0); // 3xx is fine by default, and not followed
    const strict = await run(check('http', { url: `http://127.0.0.1:${webPort}/moved`, expect_status: [200] }));
    expect(strict.state).toBe(2);
  });

  it('is CRITICAL when nothing listens', async () => {
    const server = net.createServer();
    const port = await listening(server);
    await closed(server);
    const result = await run(check('http', { url: `http://127.0.0.1:${port}/` }));
    expect(result).toMatchObject({ state: 2, output: `HTTP CRITICAL - connection refused (127.0.0.1:${port})` });
  });

  it('refuses a self-signed certificate unless insecure, and judges its days left either way', async () => {
    const url = `https://127.0.0.1:${tlsPort}/`;
    const refused = await run(check('http', { url }));
    expect(refused.state).toBe(2);
    expect(refused.output).toMatch(/self.signed/i);
    const accepted = await run(check('http', { url, insecure: true }));
    expect(accepted.state).toBe(0);
    expect(accepted.perfdata.find((p) => p.label === 'cert_days')).toMatchObject({ value: 0 });
    // The certificate is valid for a day: 0 whole days left is below a 30-day warning and a 1-day critical.
    const expiring = await run(check('http', { url, insecure: true, cert_warn_days: 30 }));
    expect(expiring.state).toBe(1);
    expect(expiring.output).toContain('certificate valid for 0 days');
    const critical = await run(check('http', { url, insecure: true, cert_warn_days: 30, cert_crit_days: 1 }));
    expect(critical.state).toBe(2);
  });
});

describe('dns and ping', () => {
  it('resolves localhost, and is CRITICAL on an unexpected address or an unknown name', async () => {
    const ok = await run(check('dns', { name: 'localhost' }));
    expect(ok.state).toBe(0);
    expect(ok.output).toMatch(/^DNS OK - localhost resolves to .*(127\.0\.0\.1|::1)/);
    const wrong = await run(check('dns', { name: 'localhost', expect_address: '192.0.2.7' }));
    expect(wrong.state).toBe(2);
    const unknown = await run(check('dns', { name: 'no-such-host.invalid' }));
    expect(unknown.state).toBe(2);
  });

  it.skipIf(!hasPing)('pings 127.0.0.1 with the device ping: round trip and loss as perfdata', async () => {
    const result = await run(check('ping', { host: '127.0.0.1', count: 2 }));
    expect(result.output).toMatch(/^PING OK - 127\.0\.0\.1: 0% packet loss, rta \d+\.\d{3} ms$/);
    expect(result.perfdata.map((p) => `${p.label}:${p.uom}`)).toEqual(['rta:ms', 'pl:%']);
  });
});

describe('the device', () => {
  it('disk, memory and cpu report used percent with thresholds', async () => {
    const disk = await run(check('disk', { mount: '/', warn_percent: 100, crit_percent: 100 }));
    expect(disk.output).toMatch(/^DISK (OK|CRITICAL) - \/ \d+% used/);
    expect(disk.perfdata[0]).toMatchObject({ label: '/', uom: '%', warn: '100', crit: '100', min: 0, max: 100 });
    const full = await run(check('disk', { mount: '/', crit_percent: 0 }));
    expect(full.state).toBe(2);
    const memory = await run(check('memory', { warn_percent: 0 }));
    expect(memory.state).toBe(1);
    expect(memory.output).toMatch(/^MEMORY WARNING - [\d.]+% used/);
    const cpu = await run(check('cpu', {}));
    expect([0, 3]).toContain(cpu.state); // no thresholds: OK (UNKNOWN only if the counters stood still)
    const missing = await run(check('disk', { mount: path.join(tmp, 'no-such-mount') }));
    expect(missing.state).toBe(3);
  });

  it('counts processes by name or command line against min and max', async () => {
    const node = await run(check('process', { pattern: 'node' }));
    expect(node.state).toBe(0);
    expect(node.perfdata[0]!.value).toBeGreaterThanOrEqual(1);
    const none = await run(check('process', { pattern: `absent-${randomUUID()}`, match: 'command' }));
    expect(none.state).toBe(2);
    expect(none.output).toMatch(/^PROCS CRITICAL - 0 processes with command matching/);
    const tooMany = await run(check('process', { pattern: 'node', min: 0, max: 0 }));
    expect(tooMany.state).toBe(2);
  });

  it('a service that does not exist is not OK', async () => {
    const result = await run(check('service', { name: `no-such-service-${process.pid}` }));
    expect(result.state).not.toBe(0);
    expect(result.output).toMatch(/^SERVICE (CRITICAL|UNKNOWN) - /);
  });
});

describe.skipIf(!posix)('plugins and scripts', () => {
  it('runs a command with args and reads its state, text and perfdata', async () => {
    const result = await run(check('script', { command: '/bin/sh', args: ['-c', 'echo "APP WARNING - queue long|queue=17;10;20;0"; exit 1'] }));
    expect(result).toMatchObject({ state: 1, output: 'APP WARNING - queue long', perfdata: [{ label: 'queue', value: 17, uom: '', warn: '10', crit: '20', min: 0 }] });
  });

  it('runs a library script from a temporary file with its interpreter, and removes the file', async () => {
    const body = 'echo "SCRIPT CRITICAL - $0 $1"\nexit 2\n';
    const result = await run(check('script', { script: { shell: 'sh', body }, args: ['first'] }));
    expect(result.state).toBe(2);
    const file = /^SCRIPT CRITICAL - (\S+) first$/.exec(result.output)?.[1];
    expect(file).toMatch(/rmm-check-.*check\.sh$/);
    expect(existsSync(file!)).toBe(false);
  });

  it('a missing executable is UNKNOWN with a clear text; an exit code beyond 3 is UNKNOWN', async () => {
    const missing = await run(check('script', { command: path.join(tmp, 'check_nothing') }));
    expect(missing).toMatchObject({ state: 3, output: `UNKNOWN - plugin not found: ${path.join(tmp, 'check_nothing')} does not exist on this device` });
    const bare = await run(check('script', { command: 'check_nothing' }));
    expect(bare).toMatchObject({ state: 3, output: 'CHECK UNKNOWN - the command must be an absolute path, not "check_nothing"' });
    const odd = await run(check('script', { command: '/bin/sh', args: ['-c', 'echo odd; exit 7'] }));
    expect(odd).toMatchObject({ state: 3, output: 'odd' });
    const invalid = await run(check('script', {}));
    expect(invalid).toMatchObject({ state: 3, output: 'CHECK UNKNOWN - a script check needs a command or a script' });
    const badParams = await run(check('tcp', { host: '127.0.0.1' }));
    expect(badParams.state).toBe(3);
    expect(badParams.output).toContain('invalid params for a tcp check: port');
  });

  it('kills a hanging plugin and everything it started at the timeout, and reports UNKNOWN', async () => {
    const pids = path.join(tmp, 'hang.pids');
    const body = `echo $$ > '${pids}'\nsleep 300 &\necho $! >> '${pids}'\nwait\n`;
    const result = await run(check('script', { script: { shell: 'sh', body } }, 1));
    expect(result).toMatchObject({ state: 3, output: 'UNKNOWN - plugin timed out after 1 s', perfdata: [] });
    const started = (await readFile(pids, 'utf8')).trim().split('\n').map(Number);
    expect(started).toHaveLength(2);
    await vi.waitFor(async () => expect(await Promise.all(started.map(processGone))).toEqual([true, true]), { timeout: 10_000, interval: 100 });
  });

  it('does not wait for a child the plugin left behind holding its output, and ends that child', async () => {
    const pids = path.join(tmp, 'left.pids');
    const body = `sleep 300 &\necho $! > '${pids}'\necho "OK - left a child|children=1"\nexit 0\n`;
    const result = await run(check('script', { script: { shell: 'sh', body } }, 60));
    expect(result).toMatchObject({ state: 0, output: 'OK - left a child', perfdata: [{ label: 'children', value: 1, uom: '' }] });
    const child = Number((await readFile(pids, 'utf8')).trim());
    await vi.waitFor(async () => expect(await processGone(child)).toBe(true), { timeout: 10_000, interval: 100 });
  });

  it('a cmd script outside Windows is UNKNOWN with the reason', async () => {
    const result = await run(check('script', { script: { shell: 'cmd', body: 'echo OK' } }));
    expect(result).toMatchObject({ state: 3, output: `UNKNOWN - a cmd script runs on Windows only, not on ${process.platform}` });
  });

  it('reads at most the limit of a plugin that prints 10 MiB, says so, and the run still finishes', async () => {
    const body = "head -c 10485760 /dev/zero | tr '\\0' 'x'\necho\necho second line\nexit 0\n";
    const result = await run(check('script', { script: { shell: 'sh', body } }, 60));
    expect(result.state).toBe(0);
    expect(result.output.length).toBeLessThanOrEqual(MAX_CHECK_OUTPUT_CHARS);
    expect(result.output).toMatch(/^x+/);
    expect(result.output).toContain('plugin output cut at 65536 bytes');
  });
});

describe.skipIf(!hasPlugins)('Monitoring Plugins as script checks', () => {
  it('check_tcp is OK against a listener and CRITICAL once it is gone', async () => {
    const server = net.createServer((socket) => socket.end());
    const port = await listening(server);
    const tcp = check('script', { command: `${PLUGINS}/check_tcp`, args: ['-H', '127.0.0.1', '-p', String(port)] });
    const up = await run(tcp);
    expect(up.state).toBe(0);
    expect(up.output).toMatch(new RegExp(`^TCP OK - [\\d.]+ second response time on 127\\.0\\.0\\.1 port ${port}$`));
    expect(up.perfdata[0]).toMatchObject({ label: 'time', uom: 's', min: 0, max: 10 });
    await closed(server);
    const down = await run(tcp);
    expect(down.state).toBe(2);
    expect(down.output).toMatch(/Connection refused/);
  });

  it('check_http is OK against the test server, with time and size', async () => {
    const result = await run(check('script', { command: `${PLUGINS}/check_http`, args: ['-H', '127.0.0.1', '-p', String(webPort)] }));
    expect(result.state).toBe(0);
    expect(result.output).toMatch(/^HTTP OK: HTTP\/1\.1 200 OK - \d+ bytes in/);
    expect(result.perfdata.map((p) => p.label)).toEqual(['time', 'size']);
  });

  it('check_disk -w 99% -c 100% on /: thresholds of free space, so always CRITICAL, with the mount as perfdata', async () => {
    // check_disk's thresholds are free space: less than 100 % free is critical on any disk holding a byte.
    const result = await run(check('script', { command: `${PLUGINS}/check_disk`, args: ['-w', '99%', '-c', '100%', '-p', '/'] }));
    expect(result.state).toBe(2);
    expect(result.output).toMatch(/^DISK CRITICAL - free space: \/ /);
    expect(result.perfdata[0]).toMatchObject({ label: '/', uom: 'B', min: 0 });
  });
});

describe.skipIf(hasPlugins)('Monitoring Plugins as script checks', () => {
  it.skip(`skipped: the Monitoring Plugins are not installed in ${PLUGINS} (CI installs monitoring-plugins-basic)`, () => undefined);
});
