// winget-autoupdate (WAU) reading a customer's lists the way it really does (issue 30, items 6 and 9).
// Upstream WAU 2.10.0 trims the configured ListPath (Winget-Upgrade.ps1: `TrimEnd(" ", "\", "/")`), and
// Test-ListPath.ps1 requests `"$ListPath/included_apps.txt"`; when the ListPath has a `?`, it splits there
// and puts the file name before the query: `"$($parts[0])/included_apps.txt?$($parts[1])"`. It sends no
// headers of its own (System.Net.WebClient), and downloads again only when the list's Last-Modified,
// formatted to the second, is later than its local copy's write time. These tests build the URL from
// the guide's ListPath (docs/wau.md) exactly so, request it over a real socket, and follow WAU's decision.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminToken, bearer, createCustomer, createKey } from './helpers/identity.js';
import { startLiveServer, type LiveServer } from './helpers/live-agent.js';

/**
 * The guide's ListPath line (docs/wau.md), placeholders and all: the line in the page's code block that
 * starts with https:// and names `/wau?api_key=`, read from the page itself, so the line operators copy
 * is the line tested.
 */
const GUIDE_LIST_PATH = guideListPath();

function guideListPath(): string {
  const guide = readFileSync(path.join(import.meta.dirname, '..', 'docs', 'wau.md'), 'utf8');
  const lines = guide.split('\n').filter((line) => /^https:\/\/.+\/wau\?api_key=.+$/.test(line));
  if (lines.length !== 1) throw new Error(`docs/wau.md should have exactly one ListPath line, found ${lines.length}`);
  return lines[0]!;
}

/** The URL WAU 2.10.0 requests for one list, built from a ListPath as Winget-Upgrade.ps1 and Test-ListPath.ps1 do. */
function wauListUrl(listPath: string, useWhiteList: boolean): string {
  const clean = listPath.replace(/[ \\/]+$/, '');
  const listType = useWhiteList ? 'included_apps.txt' : 'excluded_apps.txt';
  let external = `${clean}/${listType}`;
  if (clean.includes('?')) {
    const parts = clean.split('?');
    external = `${parts[0]}/${listType}?${parts[1]}`;
  }
  return external;
}

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/** One GET of exactly this URL's path and query (no normalisation), with no headers but Host and Connection, as WebClient sends. */
function wauGet(url: string, extraHeaders: Record<string, string> = {}): Promise<RawResponse> {
  const { host, origin } = new URL(url);
  const [hostname, port] = host.split(':');
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname, port, path: url.slice(origin.length), method: 'GET', headers: extraHeaders }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** WAU's `([DateTime]$LastModified).ToString("yyyy-MM-dd HH:mm:ss")`, in UTC here (both sides use one zone). */
const wauDate = (httpDate: string) => new Date(Date.parse(httpDate)).toISOString().slice(0, 19).replace('T', ' ');

let live: LiveServer;
let admin: Record<string, string>;
let customer: number;
let otherCustomer: number;
let key: string;
let otherKey: string;
let listPath: string;

beforeAll(async () => {
  live = await startLiveServer(); // the real clock: Date and Last-Modified as a PC meets them
  const token = await adminToken(live);
  admin = bearer(token);
  customer = (await createCustomer(live.app, token, 'WAU-1')).id;
  otherCustomer = (await createCustomer(live.app, token, 'WAU-2')).id;
  key = (await createKey(live.app, admin, 'agent', customer)).key;
  otherKey = (await createKey(live.app, admin, 'agent', otherCustomer)).key;
  listPath = GUIDE_LIST_PATH.replace('https://rmm.example.net', live.url).replace('<customer id>', String(customer)).replace('<agent key>', key);
});
afterAll(() => live.close());

const addRule = async (customerId: number, action: 'allow' | 'block', packageId: string) => {
  const res = await live.app.inject({ method: 'POST', url: `/api/v1/customers/${customerId}/wau/rules`, headers: admin, payload: { action, package_id: packageId } });
  expect(res.statusCode, res.body).toBe(201);
};

describe('the lists at the URLs winget-autoupdate builds from the ListPath of docs/wau.md', () => {
  it('reads the ListPath line of docs/wau.md, the one operators copy', () => {
    expect(GUIDE_LIST_PATH).toBe('https://rmm.example.net/api/v1/customers/<customer id>/wau?api_key=<agent key>');
  });

  it('puts the file name before the query, and both lists answer there byte for byte', async () => {
    await addRule(customer, 'allow', 'VideoLAN.VLC');
    await addRule(customer, 'allow', 'Mozilla.Firefox*');
    await addRule(customer, 'block', 'Google.Chrome');
    await addRule(otherCustomer, 'allow', 'Other.Customer');

    const included = wauListUrl(listPath, true);
    const excluded = wauListUrl(listPath, false);
    expect(included).toBe(`${live.url}/api/v1/customers/${customer}/wau/included_apps.txt?api_key=${key}`);
    expect(excluded).toBe(`${live.url}/api/v1/customers/${customer}/wau/excluded_apps.txt?api_key=${key}`);
    // A trailing slash in the configured value changes nothing: WAU trims it.
    expect(wauListUrl(`${listPath}/`, true)).toBe(included);

    const white = await wauGet(included);
    expect(white.status, white.body.toString()).toBe(200);
    expect(white.body.equals(Buffer.from('Mozilla.Firefox*\nVideoLAN.VLC\n', 'utf8'))).toBe(true);
    expect(white.headers['content-type']).toBe('text/plain; charset=utf-8');
    const black = await wauGet(excluded);
    expect(black.status).toBe(200);
    expect(black.body.equals(Buffer.from('Google.Chrome\n', 'utf8'))).toBe(true);

    // The same content and validators as the contract's /wau/included.
    const spec = await wauGet(`${live.url}/api/v1/customers/${customer}/wau/included?api_key=${key}`);
    expect(spec.body.equals(white.body)).toBe(true);
    expect([spec.headers.etag, spec.headers['last-modified']]).toEqual([white.headers.etag, white.headers['last-modified']]);
  });

  it('answers 304 to If-Modified-Since at Last-Modified; WAU itself compares Last-Modified with its copy', async () => {
    const url = wauListUrl(listPath, true);
    const first = await wauGet(url);
    // The same Last-Modified in a later second: it comes from the stored change time alone.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 100));
    const later = await wauGet(url);
    expect([later.headers['last-modified'], later.headers.etag]).toEqual([first.headers['last-modified'], first.headers.etag]);
    expect(later.headers.date).not.toBe(first.headers.date);
    const lastModified = first.headers['last-modified']!;
    expect(lastModified).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/);
    const again = await wauGet(url, { 'if-modified-since': lastModified });
    expect([again.status, again.body.length, again.headers['last-modified']]).toEqual([304, 0, lastModified]);
    const older = await wauGet(url, { 'if-modified-since': new Date(Date.parse(lastModified) - 1000).toUTCString() });
    expect(older.status).toBe(200);
  });

  it("reads only the key's own customer: another customer's key is 404, no key 401", async () => {
    const foreign = listPath.replace(key, otherKey);
    for (const white of [true, false]) {
      const res = await wauGet(wauListUrl(foreign, white));
      expect(res.status).toBe(404);
      expect(JSON.parse(res.body.toString())).toMatchObject({ code: 'NOT_FOUND' });
      expect(res.body.toString()).not.toContain('Mozilla');
      expect((await wauGet(wauListUrl(listPath.replace(/\?.*$/, ''), white))).status).toBe(401);
    }
    // The other customer's own key reads its own list at its own ListPath.
    const own = listPath.replace(key, otherKey).replace(`/customers/${customer}/`, `/customers/${otherCustomer}/`);
    expect((await wauGet(wauListUrl(own, true))).body.toString()).toBe('Other.Customer\n');
  });
});

describe('Last-Modified of the lists', () => {
  // Each answer asked for within a change's second waits for it to end, so five changes take up to 5 s.
  it('is never after Date, through quick rule changes, and each change moves it past the Date of the copy before', async () => {
    const url = wauListUrl(listPath, false);
    let previous = await wauGet(url);
    for (let i = 0; i < 5; i++) {
      await addRule(customer, 'block', `Quick.Change${i}`);
      const res = await wauGet(url);
      expect(res.status).toBe(200);
      expect(res.body.toString()).toContain(`Quick.Change${i}\n`);
      const [lastModified, date] = [Date.parse(res.headers['last-modified']!), Date.parse(res.headers.date!)];
      expect(lastModified, `${res.headers['last-modified']} ≤ ${res.headers.date}`).toBeLessThanOrEqual(date);
      // WAU, holding the previous copy (written at its Date), downloads again.
      expect(wauDate(res.headers['last-modified']!) > wauDate(previous.headers.date!), `${res.headers['last-modified']} after ${previous.headers.date}`).toBe(true);
      // A cache holding the previous answer learns that it changed, whatever second this is.
      const revalidated = await wauGet(url, { 'if-none-match': previous.headers.etag!, 'if-modified-since': previous.headers['last-modified']! });
      expect(revalidated.status).toBe(200);
      expect(res.headers.etag).not.toBe(previous.headers.etag);
      expect((await wauGet(url, { 'if-none-match': res.headers.etag! })).status).toBe(304);
      expect((await wauGet(url, { 'if-modified-since': res.headers['last-modified']! })).status).toBe(304);
      previous = res;
    }
  });

  it('makes WAU download again after a change made in the same second as its last download', async () => {
    const url = wauListUrl(listPath, true);
    const downloaded = await wauGet(url);
    // WAU's copy is written when the download ends: its time is the download's second (the PC's clock = Date).
    const localCopy = wauDate(downloaded.headers.date!);
    await addRule(customer, 'allow', 'Same.Second');
    // WAU runs again later (hourly at the soonest); a second later is enough for the rule to show.
    await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 1100));
    const check = await wauGet(url);
    expect(wauDate(check.headers['last-modified']!) > localCopy, `${check.headers['last-modified']} after ${downloaded.headers.date}`).toBe(true);
    expect(check.body.toString()).toContain('Same.Second\n');
  });
});
