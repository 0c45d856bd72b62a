// The built web console, read into memory once at start: a few hundred kilobytes of hashed files, so
// every request is a map lookup, with gzip and brotli variants compressed once, on zlib's thread pool
// when a file is first asked for in that encoding, instead of per request, or all at start-up on the
// event loop (brotli 11 over the whole console costs about 1.5 s of CPU; it held up every start).
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';

export interface StaticFile {
  readonly body: Buffer;
  /** The gzip variant (made on first use), or null when the file is not worth compressing. */
  gzip(): Promise<Buffer | null>;
  /** The brotli variant (made on first use), or null when the file is not worth compressing. */
  brotli(): Promise<Buffer | null>;
  readonly contentType: string;
  readonly etag: string;
  /** Vite's content-hashed output under /assets/: cacheable for good. */
  readonly immutable: boolean;
}

export interface StaticSite {
  /** By URL path ("/index.html", "/assets/index-3f2a.js"). */
  readonly files: ReadonlyMap<string, StaticFile>;
  readonly index: StaticFile;
}

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.svg', '.txt', '.map']);
/** A console build is well under this; more means the directory is not what we think it is. */
const MAX_SITE_BYTES = 64 * 1024 * 1024;

/** Null when the directory has no index.html (the console was not built). */
export async function loadStaticSite(dir: string): Promise<StaticSite | null> {
  let names: string[];
  try {
    names = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
  } catch {
    return null;
  }
  const files = new Map<string, StaticFile>();
  let total = 0;
  for (const file of names) {
    const body = await readFile(file);
    total += body.length;
    if (total > MAX_SITE_BYTES) throw new Error(`web console directory ${dir} holds more than ${MAX_SITE_BYTES} bytes`);
    const urlPath = '/' + path.relative(dir, file).split(path.sep).join('/');
    files.set(urlPath, toStaticFile(urlPath, body));
  }
  const index = files.get('/index.html');
  return index ? { files, index } : null;
}

/** Compressed variants by content hash, shared by every app the process builds (the tests build hundreds). */
const compressed = new Map<string, { gzip?: Promise<Buffer>; brotli?: Promise<Buffer> }>();
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

function toStaticFile(urlPath: string, body: Buffer): StaticFile {
  const ext = path.extname(urlPath).toLowerCase();
  const hash = createHash('sha256').update(body).digest('base64url');
  const worthIt = COMPRESSIBLE.has(ext) && body.length > 1024;
  const variants = () => {
    let v = compressed.get(hash);
    if (!v) compressed.set(hash, (v = {}));
    return v;
  };
  return {
    body,
    gzip: async () => (worthIt ? (variants().gzip ??= gzipAsync(body, { level: 9 })) : null),
    brotli: async () => (worthIt ? (variants().brotli ??= brotliAsync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } })) : null),
    contentType: CONTENT_TYPES[ext] ?? 'application/octet-stream',
    etag: `"${hash.slice(0, 22)}"`,
    immutable: urlPath.startsWith('/assets/'),
  };
}
