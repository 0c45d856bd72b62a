// Remote desktop (issue 60): frames per second of a changing Xvfb screen as an RFB viewer gets them
// through the product's tunnel (WebSocket `/api/v1/proxy/{tunnel_id}?token=…` → the server → the agent's
// WebSocket → the reference agent in its own process → x11vnc), against noVNC's usual path on the same
// machine: the same viewer through Debian's `websockify` to the same x11vnc. Also MiB/s, and the relay's
// CPU per MiB: the server process's (/proc/<pid>/stat), against websockify's (its connection processes
// counted once reaped).
//
// The viewer (test/helpers/rfb-viewer.ts) is what noVNC would be without a browser: RFB 3.8, security
// None, Raw encoding only (the one every server and both paths do alike, and the heaviest on the relay),
// one incremental FramebufferUpdateRequest for the whole screen outstanding at a time, as noVNC does.
// The screen: Xvfb at 1024×768×24 whose root window alternates two colours every BENCH_DESKTOP_CHANGE_MS,
// so every frame is the whole screen (3 MiB raw) and the frame rate is the screen's own rate at most.
// x11vnc serves on BENCH_DESKTOP_VNC_PORT (a free port by default), set as the agent's VNC address.
// BENCH_DESKTOP_ROUTE=tunnel opens a plain tunnel to x11vnc instead of the desktop route (the same relay
// without the desktop's session watch; the setting says so).
//
// Rounds interleave (websockify, product, direct TCP to x11vnc as the ceiling; BENCH_DESKTOP_ROUNDS of
// each, BENCH_DESKTOP_S seconds each, after a full frame); ratios are the medians of the per-round ones.
// CPU is counted from before the viewer connects until after it closed, over every byte it received.
// No target: the issue asks for the figures. Every failed start-up or round is in the table.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import type { ChildProcess } from 'node:child_process';
import { RfbViewer, type Update } from '../test/helpers/rfb-viewer.js';
import { SERVER_NODE_ENV, SERVER_NODE_FLAGS } from '../src/platform/node-flags.js';
import { backendsFrom, positiveNumber } from './lib/backends.js';
import { forkRpc } from './lib/child-rpc.js';
import { pidCpuMs } from './lib/cluster-processes.js';
import type { CommandServer } from './lib/command-server-child.js';
import { startAgentProcess, stop } from './lib/relay-processes.js';
import { median, medianRatio } from './lib/stats.js';
import { runWhenMain, type BenchRow } from './lib/table.js';
import { startXDesktop, type XDesktop } from './lib/x-desktop.js';

export const name = 'remote-desktop';
const log = (line: string) => process.stderr.write(`[${name}] ${line}\n`);
const MiB = 1024 * 1024;
const SERVER_FILE = fileURLToPath(new URL('./lib/command-server-child.ts', import.meta.url));
const message = (err: unknown) => (err instanceof Error ? err.message.split('\n')[0]! : String(err));

/** One way for the viewer to reach x11vnc: a fresh connection per round, and the relay's CPU so far. */
interface Path {
  connect(): Promise<RfbViewer>;
  cpuMs?: () => Promise<number>;
  close(): Promise<void>;
}

/** `desktop`: the remote desktop's own route (its session watch included); `tunnel`: a plain tunnel to x11vnc, the same relay without it. */
type Route = 'desktop' | 'tunnel';

interface Round {
  fps: number;
  mibPerS: number;
  /** CPU ms of the relay per MiB received; NaN without a relay. */
  cpuMsPerMiB: number;
  failure?: string;
}

/** The next update, or an error when none comes within 5 s (the screen stopped changing, a relay hung). */
function nextUpdate(viewer: RfbViewer): Promise<Update> {
  return Promise.race([viewer.nextUpdate(), sleep(5000).then(() => Promise.reject(new Error('no update within 5 s')))]);
}

async function measure(way: Path, seconds: number): Promise<Round> {
  let viewer: RfbViewer | undefined;
  try {
    const c0 = await way.cpuMs?.();
    viewer = await way.connect();
    const screen = await viewer.handshake();
    viewer.request(false, screen);
    let bytes = (await nextUpdate(viewer)).bytes;
    let frames = 0;
    const started = performance.now();
    while (performance.now() - started < seconds * 1000) {
      viewer.request(true, screen);
      bytes += (await nextUpdate(viewer)).bytes;
      frames++;
    }
    const elapsed = (performance.now() - started) / 1000;
    viewer.close();
    viewer = undefined;
    const c1 = await way.cpuMs?.();
    const cpuMsPerMiB = c0 === undefined || c1 === undefined ? Number.NaN : (c1 - c0) / (bytes / MiB);
    return { fps: frames / elapsed, mibPerS: bytes / MiB / elapsed, cpuMsPerMiB };
  } catch (err) {
    viewer?.close();
    return { fps: Number.NaN, mibPerS: Number.NaN, cpuMsPerMiB: Number.NaN, failure: message(err) };
  }
}

/** The real server (its own process, production log level), a reference agent process, and a technician's token. */
async function startProduct(backend: string, route: Route, vncPort: number): Promise<Path> {
  const agentDir = await mkdtemp(path.join(os.tmpdir(), 'rmm-bench-desktop-'));
  const server = forkRpc(SERVER_FILE, [...SERVER_NODE_FLAGS], SERVER_NODE_ENV);
  let agent: ChildProcess | undefined;
  const close = async () => {
    if (agent) await stop(agent);
    await server.close();
    await rm(agentDir, { recursive: true, force: true });
  };
  try {
    const started = await server.call<CommandServer>('start', { kind: 'rmm', backend, technician: true });
    const running = await startAgentProcess(started.url, started.agentKey, started.operatorKey, path.join(agentDir, 'state.json'), 'bench-desktop');
    agent = running.child;
    const login = await fetch(`${started.url}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(started.technician) });
    if (!login.ok) throw new Error(`POST /auth/login: HTTP ${login.status} ${await login.text()}`);
    const { token } = (await login.json()) as { token: string };
    // The desktop's tunnel goes to the agent's VNC address (127.0.0.1:5900 by default): here, x11vnc's port.
    const targets = await fetch(`${started.url}/api/v1/agents/${running.agentId}/remote-access`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ vnc_host: '127.0.0.1', vnc_port: vncPort }),
    });
    if (route === 'desktop' && !targets.ok) throw new Error(`PUT /agents/{id}/remote-access: HTTP ${targets.status} ${(await targets.text()).slice(0, 200)}`);
    return {
      async connect() {
        const body = route === 'desktop' ? {} : { target_host: '127.0.0.1', target_port: vncPort };
        const res = await fetch(`${started.url}/api/v1/agents/${running.agentId}/${route}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status !== 201 && res.status !== 200) throw new Error(`POST /agents/{id}/${route}: HTTP ${res.status} ${(await res.text()).slice(0, 200)}`);
        const desktop = (await res.json()) as { tunnel_id: string; websocket_path?: string };
        const proxyPath = desktop.websocket_path ?? `/api/v1/proxy/${desktop.tunnel_id}`;
        return RfbViewer.websocket(`${started.url.replace(/^http/, 'ws')}${proxyPath}?token=${encodeURIComponent(token)}`);
      },
      cpuMs: () => pidCpuMs(server.pid!),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

export async function run(env: NodeJS.ProcessEnv = process.env): Promise<BenchRow[]> {
  const seconds = positiveNumber(env, 'BENCH_DESKTOP_S', 10);
  const rounds = Math.round(positiveNumber(env, 'BENCH_DESKTOP_ROUNDS', 3));
  const changeMs = positiveNumber(env, 'BENCH_DESKTOP_CHANGE_MS', 50);
  const vncPort = env.BENCH_DESKTOP_VNC_PORT ? Math.round(positiveNumber(env, 'BENCH_DESKTOP_VNC_PORT', 5900)) : 0;
  const route: Route = env.BENCH_DESKTOP_ROUTE === 'tunnel' ? 'tunnel' : 'desktop';
  const backend = (await backendsFrom(env))[0]!;
  const setting = `1024×768 Raw, a new colour every ${changeMs} ms, ${seconds} s × ${rounds}${route === 'tunnel' ? ', plain tunnel' : ''}`;
  const fpsRow = { benchmark: name, backend, setting, unit: 'frames/s', baselineLabel: 'websockify → x11vnc frames/s', better: 'higher' as const };
  const cpuRow = { benchmark: name, backend, setting, unit: 'server CPU ms/MiB', baselineLabel: 'websockify CPU ms/MiB', better: 'lower' as const };
  const notMeasured = (note: string): BenchRow[] => (log(note), [fpsRow, cpuRow].map((r) => ({ ...r, figure: Number.NaN, baseline: Number.NaN, note })));

  let desktop: XDesktop;
  try {
    desktop = await startXDesktop({ changeMs, vncPort, size: '1024x768' });
  } catch (err) {
    return notMeasured(`not measured: the desktop failed to start: ${message(err)}`);
  }
  const product = await startProduct(backend, route, desktop.vncPort).catch((err: unknown) => message(err));
  try {
    const paths: Record<'websockify' | 'product' | 'direct', Path | string> = {
      websockify: { connect: () => RfbViewer.websocket(`ws://127.0.0.1:${desktop.websockifyPort}/`), cpuMs: () => desktop.websockifyCpuMs(), close: async () => undefined },
      product: typeof product === 'string' ? `the product failed to start: ${product}` : product,
      direct: { connect: () => RfbViewer.tcp('127.0.0.1', desktop.vncPort), close: async () => undefined },
    };
    const results = { websockify: [] as Round[], product: [] as Round[], direct: [] as Round[] };
    // Interleaved, so a noisy minute of the shared cores hits every path alike.
    for (let i = 0; i < rounds; i++) {
      for (const key of ['websockify', 'product', 'direct'] as const) {
        const way = paths[key];
        results[key].push(typeof way === 'string' ? { fps: Number.NaN, mibPerS: Number.NaN, cpuMsPerMiB: Number.NaN, failure: way } : await measure(way, seconds));
      }
    }
    const list = (rs: Round[], pick: (r: Round) => number, digits = 1) => rs.map((r) => (r.failure ? 'failed' : pick(r).toFixed(digits))).join(', ');
    const ok = (rs: Round[], pick: (r: Round) => number) => rs.map(pick).filter(Number.isFinite);
    const pairRatio = (a: Round[], b: Round[], pick: (r: Round) => number) => {
      const pairs = a.map((r, i) => [pick(r), b[i] ? pick(b[i]) : Number.NaN]).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
      return medianRatio(pairs.map(([x]) => x!), pairs.map(([, y]) => y!));
    };
    const failures = [...results.websockify, ...results.product, ...results.direct].filter((r) => r.failure);
    const trouble = failures.length ? ` Failed rounds: ${failures.length} (first: ${failures[0]!.failure}).` : '';
    const { product: p, websockify: w, direct: d } = results;
    log(`product ${list(p, (r) => r.fps)} frames/s at ${list(p, (r) => r.cpuMsPerMiB, 2)} CPU ms/MiB; websockify ${list(w, (r) => r.fps)} at ${list(w, (r) => r.cpuMsPerMiB, 2)}; direct ${list(d, (r) => r.fps)}`);
    return [
      {
        ...fpsRow,
        figure: median(ok(p, (r) => r.fps)),
        baseline: median(ok(w, (r) => r.fps)),
        ratio: pairRatio(p, w, (r) => r.fps),
        errors: failures.length,
        note:
          `median of the per-round ratios; frames/s product ${list(p, (r) => r.fps)}, websockify ${list(w, (r) => r.fps)}, direct TCP ${list(d, (r) => r.fps)}; ` +
          `MiB/s product ${list(p, (r) => r.mibPerS)}, websockify ${list(w, (r) => r.mibPerS)}, direct ${list(d, (r) => r.mibPerS)}.` +
          trouble,
      },
      {
        ...cpuRow,
        figure: median(ok(p, (r) => r.cpuMsPerMiB)),
        baseline: median(ok(w, (r) => r.cpuMsPerMiB)),
        ratio: pairRatio(p, w, (r) => r.cpuMsPerMiB),
        errors: failures.length,
        note: `the server process's user + system CPU per MiB the viewer received, against websockify's (its connection process counted); runs ${list(p, (r) => r.cpuMsPerMiB, 2)} vs ${list(w, (r) => r.cpuMsPerMiB, 2)}.${trouble}`,
      },
    ];
  } finally {
    if (typeof product !== 'string') await product.close();
    await desktop.close();
  }
}

runWhenMain(import.meta.url, () => run());
