// Installer packages as ZIP archives. At upload, anything a Windows extractor could be led astray by is
// refused: names that leave the target folder (zip-slip), links, duplicates that overwrite each other,
// and data we could not repack. At download the package is rewritten entry by entry into a new
// archive with rmm-agent.json added, streamed with one entry open at a time, so memory stays bounded
// however large the package is. Every header of the download is written fresh by yazl from the checked
// names, so nothing from the uploaded headers (local-header names, Unicode path fields) reaches a device.
import { Writable, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type Options as ZipReadOptions, type ZipFile } from 'yauzl';
import yazl from 'yazl';
import { AppError } from '../../platform/errors.js';

/** More entries than any installer needs; the whole directory is held in memory while repacking. */
export const MAX_ENTRIES = 10_000;
/** Total size once extracted: bounds what one download can cost (a "zip bomb" inflates without limit). */
export const MAX_UNPACKED_BYTES = 4 * 1024 * 1024 * 1024;

/** The file the download adds at the top level (contract §9); an uploaded one is replaced. */
export const AGENT_CONFIG_FILE = 'rmm-agent.json';

const STORED = 0;
const DEFLATED = 8;
const UNIX_MADE_BY = 3;
const FILE_TYPE_MASK = 0o170000;
const SYMLINK_TYPE = 0o120000;

// Names are decoded and checked here rather than by yauzl, so the refusal can say what is wrong.
const OPEN_OPTIONS: ZipReadOptions = { lazyEntries: true, autoClose: false, decodeStrings: false, validateEntrySizes: true };

export interface PackageFile {
  name: string;
  content: Buffer;
  mtime: Date;
}

interface NamedEntry {
  entry: Entry;
  /** Decoded, checked, `/`-separated; directories end with `/`. */
  name: string;
}

const refused = (message: string, cause?: unknown) => new AppError('VALIDATION_ERROR', message, { cause });

/**
 * Refuses (400 VALIDATION_ERROR) a file that is not a ZIP we can hand to devices safely. Reads every
 * entry once, checking its CRC-32, so a damaged archive is refused now rather than at every download.
 */
export async function checkInstallerZip(file: string): Promise<void> {
  let zip: ZipFile;
  try {
    zip = await yauzl.openPromise(file, OPEN_OPTIONS);
  } catch (err) {
    throw refused(`The body is not a ZIP archive (${messageOf(err)})`, err);
  }
  try {
    const entries = await readEntries(zip);
    if (!entries.some(({ name }) => !name.endsWith('/'))) throw refused('The ZIP archive holds no files');
    for (const { entry, name } of entries) {
      if (!name.endsWith('/')) await verifyData(zip, entry, name);
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw refused(`The ZIP archive is damaged (${messageOf(err)})`, err);
  } finally {
    zip.close();
  }
}

/**
 * The archive in `file` with `added` put in at the top level, replacing an entry of that name (in any
 * letter case, as Windows would). Stored entries stay stored; deflated ones are inflated and deflated
 * again, because yazl cannot take an entry's compressed bytes as they are.
 */
export async function repackWith(file: string, added: PackageFile | undefined): Promise<Readable> {
  const source = await yauzl.openPromise(file, OPEN_OPTIONS);
  let entries: NamedEntry[];
  try {
    entries = await readEntries(source);
  } catch (err) {
    source.close();
    throw err;
  }
  const target = new yazl.ZipFile();
  const output = target.outputStream as Readable; // a PassThrough, typed loosely by @types/yazl
  let current: Readable | undefined;
  // A failed entry ends the download with an error (the client sees a cut-off archive), never a crash.
  const fail = (err: Error) => output.destroy(err);
  target.on('error', fail);
  output.on('close', () => {
    current?.destroy();
    source.close();
  });

  for (const { entry, name } of entries) {
    if (added && sameName(name, added.name)) continue;
    const mtime = entry.getLastModDate();
    const mode = unixMode(entry);
    if (name.endsWith('/')) {
      target.addEmptyDirectory(name, { mtime, ...(mode ? { mode } : {}) });
      continue;
    }
    const options = { mtime, compress: entry.compressionMethod === DEFLATED, size: entry.uncompressedSize, ...(mode ? { mode } : {}) };
    // Lazy: yazl asks for each entry's data only when the previous one is written, one open at a time.
    target.addReadStreamLazy(name, options, (done) => {
      source.openReadStream(entry, (err, stream) => {
        if (err) return done(err, undefined as never);
        current = stream;
        stream.on('error', fail);
        done(null, stream);
      });
    });
  }
  if (added) target.addBuffer(added.content, added.name, { mtime: added.mtime });
  target.end();
  return output;
}

/** The central directory with every entry checked; any problem is a refusal naming the entry. */
async function readEntries(zip: ZipFile): Promise<NamedEntry[]> {
  if (zip.entryCount > MAX_ENTRIES) {
    throw refused(`The ZIP archive has ${zip.entryCount} entries; at most ${MAX_ENTRIES} are accepted`);
  }
  const entries: NamedEntry[] = [];
  const seen = new Set<string>();
  let unpacked = 0;
  for await (const entry of zip.eachEntry()) {
    const name = yauzl.getFileNameLowLevel(entry.generalPurposeBitFlag, entry.fileNameRaw, entry.extraFields, true);
    const unsafe = unsafeNameReason(name);
    if (unsafe) throw refused(`Entry "${printable(name)}" could be extracted outside its folder: ${unsafe}`);
    const key = name.replace(/\/$/, '').toLowerCase();
    if (seen.has(key)) throw refused(`Entry "${printable(name)}" appears twice (letter case aside), so one would overwrite the other`);
    seen.add(key);
    if (key.startsWith(`${AGENT_CONFIG_FILE}/`)) throw refused(`Entry "${printable(name)}" is inside a folder named ${AGENT_CONFIG_FILE}, which the server adds as a file`);
    if (isSymlink(entry)) throw refused(`Entry "${printable(name)}" is a symbolic link, which could point outside its folder`);
    if (entry.isEncrypted()) throw refused(`Entry "${printable(name)}" is encrypted; upload an archive without a password`);
    if (entry.compressionMethod !== STORED && entry.compressionMethod !== DEFLATED) {
      throw refused(`Entry "${printable(name)}" uses compression method ${entry.compressionMethod}; only stored and deflate are supported`);
    }
    unpacked += entry.uncompressedSize;
    if (unpacked > MAX_UNPACKED_BYTES) throw refused(`The ZIP archive unpacks to more than ${MAX_UNPACKED_BYTES} bytes`);
    entries.push({ entry, name });
  }
  return entries;
}

/**
 * Why a name could escape the folder it is extracted into, or undefined. Beyond yauzl's own check
 * (absolute paths, drive letters, `..`, backslashes), Windows drops trailing dots and spaces from a
 * segment (so `.. ` is `..`) and reads `:` as a drive or an alternate data stream.
 */
export function unsafeNameReason(name: string): string | undefined {
  if (name === '') return 'an empty name';
  if (name.includes('\\')) return 'a backslash, which Windows reads as a folder separator';
  if (name.startsWith('/') || /^[a-z]:/i.test(name)) return 'an absolute path';
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f:]/.test(name)) return 'a colon or a control character';
  if (name.replace(/\/$/, '').split('/').some((segment) => /^[. ]+$/.test(segment))) return 'a segment made only of dots and spaces, such as ..';
  // yauzl's own rule as the last word, should it ever learn more than the rules above.
  return yauzl.validateFileName(name) ?? undefined;
}

function sameName(a: string, b: string): boolean {
  return a.replace(/\/$/, '').toLowerCase() === b.toLowerCase();
}

/** Permissions recorded by a Unix zip tool, kept for Unix extractors; other makers' attributes mean nothing to yazl. */
function unixMode(entry: Entry): number | undefined {
  return entry.versionMadeBy >> 8 === UNIX_MADE_BY ? entry.externalFileAttributes >>> 16 || undefined : undefined;
}

function isSymlink(entry: Entry): boolean {
  return entry.versionMadeBy >> 8 === UNIX_MADE_BY && ((entry.externalFileAttributes >>> 16) & FILE_TYPE_MASK) === SYMLINK_TYPE;
}

/** Inflates one entry (yauzl checks its length) and compares the CRC-32 its headers claim. */
async function verifyData(zip: ZipFile, entry: Entry, name: string): Promise<void> {
  let crc = 0;
  await pipeline(
    await zip.openReadStreamPromise(entry),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        crc = crc32(chunk, crc);
        done();
      },
    }),
  );
  if (crc !== entry.crc32) throw refused(`Entry "${printable(name)}" is damaged (CRC-32 mismatch)`);
}

/** Entry names go into error messages: keep them short and free of control characters. */
function printable(name: string): string {
  // eslint-disable-next-line no-control-regex -- replacing control characters is the point
  const clean = name.replace(/[\u0000-\u001f\u007f]/g, '?');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
