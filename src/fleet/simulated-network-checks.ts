// The simulated network and plugin checks of the fleet's agents (simulated-checks.ts): http, tcp, ping,
// dns and script answer in the words and perfdata of the real ones (agent/checks/network-checks.ts),
// without a packet sent: healthy most of the time with a few milliseconds' answer, and while a failure
// spell lasts slow or lost (WARNING) or down (CRITICAL).
import { CRITICAL, OK, UNKNOWN, WARNING, type CheckOutcome } from '../agent/checks/nagios-output.js';
import { msToS, outcome, perf, seconds } from '../agent/checks/thresholds.js';
import type { CheckKind, CheckStateCode } from '../modules/checks/check-protocol.js';

/** A check failing for a few runs. */
export interface Spell {
  state: CheckStateCode;
  runsLeft: number;
}

type Params = Record<string, unknown>;
type Simulated = { outcome: CheckOutcome; ms: number };
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** A LAN answer time in ms: mostly a few, now and then a few dozen. */
const quick = (random: () => number) => 2 + random() * 18 + (random() < 0.05 ? random() * 60 : 0);
/** Slow enough for WARNING: past warn_ms when the check has one, else a sluggish 1.5–3 s. */
const slow = (warnMs: number | undefined, random: () => number) => (warnMs ?? 1500) * (1.05 + random());

function host(p: Params, fallback: string): string {
  if (p.url) return new URL(str(p.url)).host;
  return str(p.host) || fallback;
}

function http(p: Params, spell: Spell | undefined, random: () => number): Simulated {
  const where = host(p, 'localhost');
  const timing = { warn: msToS(num(p.warn_ms)), crit: msToS(num(p.crit_ms)), min: 0 };
  if (spell?.state === CRITICAL) {
    const ms = 5 + random() * 40;
    return { outcome: outcome('HTTP', CRITICAL, `503 Service Unavailable - 162 bytes in ${seconds(ms)} s: status 503 not 2xx or 3xx`, [perf('time', ms / 1000, 's', timing), perf('size', 162, 'B', { min: 0 })]), ms };
  }
  const ms = spell ? slow(num(p.warn_ms), random) : quick(random);
  const size = 512 + Math.floor(random() * 64);
  const perfdata = [perf('time', ms / 1000, 's', timing), perf('size', size, 'B', { min: 0 })];
  let cert = '';
  if (str(p.url).startsWith('https:')) {
    const days = 60; // a certificate renewed every 90 days, a month after its renewal
    perfdata.push(perf('cert_days', days, '', { warn: num(p.cert_warn_days), crit: num(p.cert_crit_days) }));
    cert = `, certificate valid for ${days} days`;
  }
  return { outcome: outcome('HTTP', spell ? WARNING : OK, `200 OK - ${size} bytes in ${seconds(ms)} s${cert} (${where})`, perfdata), ms };
}

function tcp(p: Params, spell: Spell | undefined, random: () => number): Simulated {
  const where = `${host(p, 'localhost')}:${num(p.port) ?? 0}`;
  if (spell?.state === CRITICAL) return { outcome: outcome('TCP', CRITICAL, `connection refused (${where})`), ms: 1 };
  const ms = spell ? slow(num(p.warn_ms), random) : quick(random) / 4;
  const timing = { warn: msToS(num(p.warn_ms)), crit: msToS(num(p.crit_ms)), min: 0 };
  return { outcome: outcome('TCP', spell ? WARNING : OK, `${seconds(ms)} s to ${where}`, [perf('time', ms / 1000, 's', timing)]), ms };
}

function ping(p: Params, spell: Spell | undefined, random: () => number): Simulated {
  const target = host(p, 'localhost');
  const count = num(p.count) ?? 3;
  const loss = spell?.state === CRITICAL ? 100 : spell ? Math.round(100 / count) : 0;
  const rtt = quick(random) / 2;
  const perfdata = [perf('pl', loss, '%', { warn: num(p.warn_loss_percent), crit: num(p.crit_loss_percent), min: 0, max: 100 })];
  if (loss < 100) perfdata.unshift(perf('rta', rtt, 'ms', { warn: num(p.warn_rtt_ms), crit: num(p.crit_rtt_ms), min: 0 }));
  const rta = loss < 100 ? `, rta ${rtt.toFixed(3)} ms` : '';
  return { outcome: outcome('PING', spell?.state ?? OK, `${target}: ${loss}% packet loss${rta}`, perfdata), ms: count * 1000 };
}

function dns(p: Params, spell: Spell | undefined, random: () => number): Simulated {
  const name = str(p.name);
  const ms = quick(random) / 2;
  // A name resolves or it does not: DNS has no WARNING, so every spell is a failure to resolve.
  if (spell) return { outcome: outcome('DNS', CRITICAL, `${name}: not found (ENOTFOUND)`), ms };
  const address = str(p.expect_address) || '10.20.30.40';
  return { outcome: outcome('DNS', OK, `${name} resolves to ${address} in ${seconds(ms)} s`, [perf('time', ms / 1000, 's', { min: 0 })]), ms };
}

function script(p: Params, spell: Spell | undefined, random: () => number): Simulated {
  const ms = 20 + random() * 80;
  const plugin = str(p.command).split('/').pop() || 'script';
  const state = spell?.state ?? OK;
  const text = state === OK ? 'all good' : state === WARNING ? 'degraded' : 'failed';
  return { outcome: outcome(plugin.toUpperCase(), state, text, [perf('time', ms / 1000, 's', { min: 0 })]), ms };
}

const NETWORK: Partial<Record<CheckKind, (p: Params, spell: Spell | undefined, random: () => number) => Simulated>> = { http, tcp, ping, dns, script };

/** The outcome of a network or plugin check in its spell (none: healthy), and how long it "took". */
export function networkOutcome(kind: CheckKind, params: Params, spell: Spell | undefined, random: () => number): Simulated {
  const simulate = NETWORK[kind];
  if (!simulate) return { outcome: outcome('CHECK', UNKNOWN, `the simulator has no ${kind} check`), ms: 0 };
  return simulate(params, spell, random);
}
