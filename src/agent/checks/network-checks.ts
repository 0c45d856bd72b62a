// The built-in network checks: tcp, http(s), dns and ping. Each answers with a Nagios-style outcome and
// never throws: a failure to connect or resolve is the check's CRITICAL, not an agent error. Each ends
// at the check's signal (its timeout or its removal) and leaves no socket behind.
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { z } from 'zod';
import type { checkParams } from '../../modules/checks/check-protocol.js';
import { runTool } from '../device/run-tool.js';
import { CRITICAL, OK, UNKNOWN, type CheckOutcome } from './nagios-output.js';
import { parsePingOutput, pingArgs } from './ping-output.js';
import { levelAbove, levelBelow, msToS, outcome, perf, seconds, worst } from './thresholds.js';

export interface CheckContext {
  timeoutMs: number;
  /** Aborted at the check's timeout, at its removal and when the agent stops. */
  signal: AbortSignal;
}

type Params<K extends keyof typeof checkParams> = z.infer<(typeof checkParams)[K]>;

/** The most of a body searched for body_contains: a check must not download a large file each minute. */
export const HTTP_BODY_LIMIT = 1024 * 1024;

export function tcpCheck(p: Params<'tcp'>, ctx: CheckContext): Promise<CheckOutcome> {
  const started = performance.now();
  const where = `${p.host.includes(':') ? `[${p.host}]` : p.host}:${p.port}`;
  return new Promise((resolve) => {
    const socket = net.connect({ host: p.host, port: p.port });
    const done = (result: CheckOutcome) => {
      ctx.signal.removeEventListener('abort', onAbort);
      socket.destroy();
      resolve(result);
    };
    const onAbort = () => done(outcome('TCP', CRITICAL, `no connection to ${where} within ${seconds(ctx.timeoutMs)} s`));
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      const ms = performance.now() - started;
      const state = levelAbove(ms, p.warn_ms, p.crit_ms);
      done(outcome('TCP', state, `${seconds(ms)} s to ${where}`, [perf('time', ms / 1000, 's', { warn: msToS(p.warn_ms), crit: msToS(p.crit_ms), min: 0 })]));
    });
    socket.once('error', (err: NodeJS.ErrnoException) => done(outcome('TCP', CRITICAL, `${errorText(err)} (${where})`)));
  });
}

export function httpCheck(p: Params<'http'>, ctx: CheckContext): Promise<CheckOutcome> {
  const started = performance.now();
  const url = new URL(p.url);
  const secure = url.protocol === 'https:';
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: CheckOutcome) => {
      if (settled) return;
      settled = true;
      ctx.signal.removeEventListener('abort', onAbort);
      request.destroy();
      resolve(result);
    };
    const onAbort = () => done(outcome('HTTP', CRITICAL, `no answer from ${url.host} within ${seconds(ctx.timeoutMs)} s`));
    // agent:false: a fresh connection each run, so the time measured includes connecting (and TLS).
    const options = { method: 'GET', agent: false, headers: { 'user-agent': 'rmm-agent-check', accept: '*/*' } } as const;
    const request = secure ? https.request(url, { ...options, rejectUnauthorized: !p.insecure }) : http.request(url, options);
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    request.once('error', (err: NodeJS.ErrnoException) => done(outcome('HTTP', CRITICAL, `${errorText(err)} (${url.host})`)));
    request.once('response', (res) => {
      const status = res.statusCode ?? 0;
      const certDays = secure ? daysLeft(res.socket as TLSSocket) : null;
      const chunks: Buffer[] = [];
      let size = 0;
      let cut = false;
      const judge = () => {
        const ms = performance.now() - started;
        const body = Buffer.concat(chunks).toString('utf8');
        resolve(httpOutcome(p, { status, statusText: res.statusMessage ?? '', ms, size, cut, body, certDays }));
      };
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        const room = HTTP_BODY_LIMIT - size;
        chunks.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
        size += Math.min(chunk.length, room);
        if (size >= HTTP_BODY_LIMIT) {
          cut = true;
          settled = true;
          ctx.signal.removeEventListener('abort', onAbort);
          request.destroy();
          judge();
        }
      });
      res.once('end', () => {
        if (settled) return;
        settled = true;
        ctx.signal.removeEventListener('abort', onAbort);
        judge();
      });
      res.once('error', (err) => done(outcome('HTTP', CRITICAL, `the answer broke off: ${err.message}`)));
    });
    request.end();
  });
}

interface HttpAnswer {
  status: number;
  statusText: string;
  ms: number;
  size: number;
  cut: boolean;
  body: string;
  certDays: number | null;
}

function httpOutcome(p: Params<'http'>, a: HttpAnswer): CheckOutcome {
  const perfdata = [perf('time', a.ms / 1000, 's', { warn: msToS(p.warn_ms), crit: msToS(p.crit_ms), min: 0 }), perf('size', a.size, 'B', { min: 0 })];
  const problems: string[] = [];
  const statusOk = p.expect_status ? p.expect_status.includes(a.status) : a.status >= 200 && a.status < 400;
  if (!statusOk) problems.push(`status ${a.status} not ${p.expect_status ? p.expect_status.join(' or ') : '2xx or 3xx'}`);
  if (p.body_contains !== undefined && !a.body.includes(p.body_contains)) problems.push(`body lacks ${JSON.stringify(p.body_contains.slice(0, 100))}${a.cut ? ' in its first MiB' : ''}`);
  let state = problems.length > 0 ? CRITICAL : levelAbove(a.ms, p.warn_ms, p.crit_ms);
  let cert = '';
  if (a.certDays !== null) {
    perfdata.push(perf('cert_days', a.certDays, '', { warn: p.cert_warn_days, crit: p.cert_crit_days }));
    state = worst(state, levelBelow(a.certDays, p.cert_warn_days, p.cert_crit_days));
    cert = a.certDays < 0 ? ', certificate expired' : `, certificate valid for ${a.certDays} days`;
  }
  const text = `${a.status} ${a.statusText} - ${a.size}${a.cut ? '+' : ''} bytes in ${seconds(a.ms)} s${cert}${problems.length ? `: ${problems.join('; ')}` : ''}`;
  return outcome('HTTP', state, text, perfdata);
}

/** Whole days until the peer's certificate expires (negative once it has). */
function daysLeft(socket: TLSSocket): number | null {
  const validTo = socket.getPeerCertificate?.()?.valid_to;
  const at = validTo ? Date.parse(validTo) : NaN;
  return Number.isFinite(at) ? Math.floor((at - Date.now()) / 86_400_000) : null;
}

export async function dnsCheck(p: Params<'dns'>, ctx: CheckContext): Promise<CheckOutcome> {
  const started = performance.now();
  const aborted = new Promise<'aborted'>((resolve) => ctx.signal.addEventListener('abort', () => resolve('aborted'), { once: true }));
  try {
    const answer = await Promise.race([dns.promises.lookup(p.name, { all: true, verbatim: true }), aborted]);
    if (answer === 'aborted') return outcome('DNS', CRITICAL, `${p.name} not resolved within ${seconds(ctx.timeoutMs)} s`);
    const ms = performance.now() - started;
    const addresses = answer.map((a) => a.address);
    const perfdata = [perf('time', ms / 1000, 's', { min: 0 })];
    const list = addresses.join(', ');
    if (p.expect_address !== undefined && !addresses.some((a) => sameAddress(a, p.expect_address!))) {
      return outcome('DNS', CRITICAL, `${p.name} resolves to ${list}, not ${p.expect_address}`, perfdata);
    }
    return outcome('DNS', OK, `${p.name} resolves to ${list} in ${seconds(ms)} s`, perfdata);
  } catch (err) {
    return outcome('DNS', CRITICAL, `${p.name}: ${errorText(err as NodeJS.ErrnoException)}`);
  }
}

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.trim().toLowerCase();

export async function pingCheck(p: Params<'ping'>, ctx: CheckContext): Promise<CheckOutcome> {
  // A host beginning with '-' would be read by ping as an option.
  if (p.host.startsWith('-') || /\s/.test(p.host)) return outcome('PING', UNKNOWN, `invalid host ${JSON.stringify(p.host)}`);
  const waitS = Math.max(1, Math.min(10, Math.floor(ctx.timeoutMs / 1000 / p.count)));
  let result;
  try {
    result = await runTool(process.platform === 'win32' ? 'ping.exe' : 'ping', pingArgs(process.platform, p.host, p.count, waitS), { timeoutMs: ctx.timeoutMs, signal: ctx.signal });
  } catch (err) {
    return outcome('PING', UNKNOWN, (err as Error).message);
  }
  const { lossPercent, rttMs } = parsePingOutput(result.stdout);
  if (lossPercent === null) {
    const why = (result.stderr || result.stdout).trim().split('\n')[0]?.slice(0, 300) || `ping ended with code ${result.code}`;
    return outcome('PING', result.timedOut ? CRITICAL : UNKNOWN, `${p.host}: ${why}`);
  }
  const perfdata = [perf('pl', lossPercent, '%', { warn: p.warn_loss_percent, crit: p.crit_loss_percent, min: 0, max: 100 })];
  let state = levelAbove(lossPercent, p.warn_loss_percent, p.crit_loss_percent);
  if (rttMs !== null) {
    perfdata.unshift(perf('rta', rttMs, 'ms', { warn: p.warn_rtt_ms, crit: p.crit_rtt_ms, min: 0 }));
    state = worst(state, levelAbove(rttMs, p.warn_rtt_ms, p.crit_rtt_ms));
  }
  const rta = rttMs !== null ? `, rta ${rttMs.toFixed(3)} ms` : '';
  return outcome('PING', state, `${p.host}: ${lossPercent}% packet loss${rta}`, perfdata);
}

function errorText(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ENOTFOUND':
      return 'name not found';
    case 'EHOSTUNREACH':
      return 'host unreachable';
    case 'ETIMEDOUT':
      return 'timed out';
    default:
      return err.message;
  }
}
