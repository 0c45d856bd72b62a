// Where a task webhook may point (contract §10). The backend must not become a way to reach its own
// host or the cloud's instance metadata (credentials live there), so a URL is refused when its host is,
// or resolves to, a loopback, unspecified, link-local or metadata address. The check runs when the task
// is saved and again before every send, and the sender connects to the address checked here, so a name
// that changes its answer in between (DNS rebinding) cannot slip through.
//
// Private ranges (10/8, 172.16/12, 192.168/16, fc00::/7) and carrier-grade NAT (100.64/10, which
// Tailscale uses) are allowed on purpose: MSPs run their receivers on internal networks.
import { promises as dns } from 'node:dns';
import net from 'node:net';
import { AppError } from '../../platform/errors.js';

export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to every address it has (dns.lookup with `all: true`); injectable for tests. */
export type LookupFn = (hostname: string) => Promise<ResolvedAddress[]>;

export interface WebhookTargetOptions {
  /** WEBHOOK_ALLOW_LOOPBACK: exempts loopback only (local receivers and tests), never metadata or link-local. */
  allowLoopback: boolean;
  lookup?: LookupFn;
}

export interface WebhookTarget {
  url: URL;
  /** The URL's host name without brackets or trailing dot (used for the Host header and TLS name). */
  hostname: string;
  /** The checked address to connect to. */
  address: string;
  family: 4 | 6;
}

type Refusal = 'loopback' | 'unspecified' | 'link-local' | 'cloud metadata';

const systemLookup: LookupFn = (hostname) => dns.lookup(hostname, { all: true });

/** Metadata services reachable by name from inside the cloud (GCP; `metadata` is its short alias). */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata']);

/**
 * Metadata services on addresses outside the link-local range: AWS over IPv6 (fd00:ec2::254),
 * Alibaba (100.100.100.200) and the Azure host agent (168.63.129.16, reachable from every Azure VM).
 * 169.254.169.254 (AWS, GCP, Azure, OpenStack) is named here too, so the message says "metadata".
 */
const METADATA_V4 = new Set([ipv4ToInt('169.254.169.254'), ipv4ToInt('100.100.100.200'), ipv4ToInt('168.63.129.16')]);
const METADATA_V6 = new Set(['fd00:ec2:0:0:0:0:0:254']);

/** Checks a webhook URL for saving; throws VALIDATION_ERROR (path `webhook_url`) naming the reason. */
export async function checkWebhookUrl(url: string, options: WebhookTargetOptions): Promise<URL> {
  return (await inspect(url, options)).url;
}

/** Checks the URL again at send time and returns the address to connect to (the first one resolved). */
export async function resolveWebhookAddress(url: string, options: WebhookTargetOptions): Promise<WebhookTarget> {
  return inspect(url, options);
}

async function inspect(raw: string, options: WebhookTargetOptions): Promise<WebhookTarget> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('webhook_url is not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw invalid(`webhook_url must use http or https, not ${url.protocol.slice(0, -1)}`);
  // Credentials in the URL would be stored and shown with the task; the signature header is the way to authenticate.
  if (url.username !== '' || url.password !== '') throw invalid('webhook_url must not contain a user name or password');

  // The WHATWG parser has already turned decimal, octal and hex IPv4 forms (2130706433, 0x7f.1) into
  // dotted quads and compressed IPv6, so an IP literal is recognised here whatever its spelling.
  const hostname = url.hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
  if (METADATA_NAMES.has(hostname)) throw refused(hostname, hostname, 'cloud metadata');
  // "localhost" never needs DNS to mean this machine (RFC 6761), whatever the resolver says.
  if ((hostname === 'localhost' || hostname.endsWith('.localhost')) && !options.allowLoopback) throw refused(hostname, hostname, 'loopback');

  const family = net.isIP(hostname);
  const addresses = family !== 0 ? [{ address: hostname, family }] : await resolve(hostname, options.lookup ?? systemLookup);
  // Every address must pass: a connection may use any of them, so one bad answer refuses the name.
  for (const { address } of addresses) {
    const refusal = classify(address);
    if (refusal && !(refusal === 'loopback' && options.allowLoopback)) throw refused(hostname, address, refusal);
  }
  const address = stripZone(addresses[0]!.address);
  return { url, hostname, address, family: net.isIP(address) === 6 ? 6 : 4 };
}

async function resolve(hostname: string, lookup: LookupFn): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await lookup(hostname);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new UnresolvableHostError(`webhook_url host ${hostname} does not resolve (${code})`, err);
  }
  if (addresses.length === 0) throw new UnresolvableHostError(`webhook_url host ${hostname} does not resolve to any address`);
  return addresses;
}

/** Why an address is refused, or null when it may be used. */
export function classify(rawAddress: string): Refusal | null {
  const address = stripZone(rawAddress);
  const family = net.isIP(address);
  if (family === 4) return classifyV4(ipv4ToInt(address));
  if (family !== 6) return null;
  const words = ipv6Words(address);
  const embedded = embeddedIpv4(words);
  if (embedded !== null) return classifyV4(embedded);
  if (METADATA_V6.has(words.map((w) => w.toString(16)).join(':'))) return 'cloud metadata';
  if (words.every((w) => w === 0)) return 'unspecified';
  if (words.slice(0, 7).every((w) => w === 0) && words[7] === 1) return 'loopback';
  if ((words[0]! & 0xffc0) === 0xfe80) return 'link-local';
  return null;
}

function classifyV4(ip: number): Refusal | null {
  if (METADATA_V4.has(ip)) return 'cloud metadata';
  if (ip >>> 24 === 127) return 'loopback';
  if (ip >>> 24 === 0) return 'unspecified';
  if (ip >>> 16 === 0xa9fe) return 'link-local';
  return null;
}

/**
 * The IPv4 address carried inside an IPv6 one, which the kernel or a translator would actually reach:
 * IPv4-mapped ::ffff:a.b.c.d, the deprecated IPv4-compatible ::a.b.c.d, and NAT64 64:ff9b::a.b.c.d.
 */
function embeddedIpv4(words: number[]): number | null {
  const low = ((words[6]! << 16) | words[7]!) >>> 0;
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return low;
  if (zeros(0, 6) && low > 1) return low; // :: and ::1 are IPv6's own unspecified and loopback
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return low;
  return null;
}

/** The eight 16-bit words of a valid IPv6 address (net.isIP has already accepted it). */
function ipv6Words(address: string): number[] {
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const v4 = ipv4ToInt(dotted[1]!);
    text = `${text.slice(0, dotted.index)}${(v4 >>> 16).toString(16)}:${(v4 & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  return [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
}

function ipv4ToInt(address: string): number {
  return address.split('.').reduce((n, octet) => ((n << 8) | Number(octet)) >>> 0, 0);
}

/** Resolvers may return link-local IPv6 addresses with a zone (fe80::1%eth0). */
function stripZone(address: string): string {
  const zone = address.indexOf('%');
  return zone < 0 ? address : address.slice(0, zone);
}

function refused(hostname: string, address: string, reason: Refusal): AppError {
  const target = hostname === address ? address : `${hostname} (${address})`;
  // A receiver on the server itself is a legitimate choice on a test or demo install: say how.
  const hint = reason === 'loopback' ? ' (receivers on this server are allowed with WEBHOOK_ALLOW_LOOPBACK=true)' : '';
  return invalid(`webhook_url points to a ${reason} address: ${target}${hint}`);
}

function invalid(message: string): AppError {
  return new AppError('VALIDATION_ERROR', message, { details: [{ path: 'webhook_url', message }] });
}

/**
 * The host name did not resolve. A 400 like a refusal when the task is saved, but at send time a
 * failed try worth repeating (the resolver may be down for a moment), where a refusal is final.
 */
export class UnresolvableHostError extends AppError {
  constructor(message: string, cause?: unknown) {
    super('VALIDATION_ERROR', message, { details: [{ path: 'webhook_url', message }], cause });
  }
}
