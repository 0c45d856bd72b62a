// Installer packages as ZIP archives. At upload, anything a Windows extractor could be led astray by is
// refused: names that leave the target folder (zip-slip) or that Windows reserves or changes (see
// entry-names.ts), links, duplicates that overwrite each other, and data we could not serve. At download
// the package's entries are copied as they are stored (compressed bytes, never inflated) into a new
// archive with rmm-agent.json added, one entry open at a time: the work is bounded by the package's size,
// not by what it unpacks to. Every header of the download is written fresh from the checked names, so
// nothing else from the uploaded headers (local-header names, Unicode path fields) reaches a device.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { crc32, deflateRawSync } from 'node:zlib';
import yauzl, { type Entry, type Options as ZipReadOptions, type ZipFile } from 'yauzl';
import { AppError } from '../../platform/errors.js';
import { nameKey, nameProblem } from './entry-names.js';
import { writeZip, type RawEntry, type ZipOutput } from './zip-writer.js';

/** More entries than any installer needs; the whole directory is held in memory while a download is written. */
export const MAX_ENTRIES = 10_000;
/** Total size once extracted: bounds what the upload's check and a device's extraction cost (a "zip bomb" inflates without limit). */
export const MAX_UNPACKED_BYTES = 4 * 1024 * 1024 * 1024;

/** The file the download adds at the top level (contract §9); an uploaded one is replaced. */
export const AGENT_CONFIG_FILE = 'rmm-agent.json';

const STORED = 0;
const DEFLATED = 8;
const UNIX_MADE_BY = 3;
const DEFAULT_FILE_MODE = 0o100644;
const DEFAULT_FOLDER_MODE = 0o040755;
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
 * letter case or Unicode form, as Windows would see it). Entries keep their stored bytes and compression.
 */
export async function packageWith(file: string, added: PackageFile | undefined): Promise<ZipOutput> {
  const source = await yauzl.openPromise(file, OPEN_OPTIONS);
  let entries: NamedEntry[];
  try {
    entries = await readEntries(source);
  } catch (err) {
    source.close();
    throw err;
  }
  const raw: RawEntry[] = [];
  for (const { entry, name } of entries) {
    if (added && nameKey(name) === nameKey(added.name)) continue;
    const folder = name.endsWith('/');
    raw.push({
      name,
      method: folder ? STORED : entry.compressionMethod,
      crc32: folder ? 0 : entry.crc32,
      compressedSize: folder ? 0 : entry.compressedSize,
      uncompressedSize: folder ? 0 : entry.uncompressedSize,
      dosTime: entry.lastModFileTime,
      dosDate: entry.lastModFileDate,
      mode: unixMode(entry) ?? (folder ? DEFAULT_FOLDER_MODE : DEFAULT_FILE_MODE),
      open: () => source.openReadStreamPromise(entry, { decodeFileData: false }),
    });
  }
  if (added) raw.push(fileEntry(added));
  const output = writeZip(raw);
  output.stream.on('close', () => source.close());
  return output;
}

/** A file made by the server (rmm-agent.json), deflated. */
function fileEntry(file: PackageFile): RawEntry {
  const data = deflateRawSync(file.content);
  const { dosTime, dosDate } = dosDateTime(file.mtime);
  return {
    name: file.name,
    method: DEFLATED,
    crc32: crc32(file.content),
    compressedSize: data.length,
    uncompressedSize: file.content.length,
    dosTime,
    dosDate,
    mode: DEFAULT_FILE_MODE,
    open: () => Promise.resolve(Readable.from([data])),
  };
}

/** MS-DOS local time fields, as ZIP headers carry them (2-second resolution, years 1980 to 2107). */
function dosDateTime(date: Date): { dosTime: number; dosDate: number } {
  const year = Math.min(Math.max(date.getFullYear(), 1980), 2107);
  return {
    dosTime: (date.getHours() << 11) | (date.getMinutes() << 5) | Math.floor(date.getSeconds() / 2),
    dosDate: ((year - 1980) << 9) | ((date.getMonth() + 1) << 5) | date.getDate(),
  };
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
    const problem = nameProblem(name);
    if (problem?.escapes) throw refused(`Entry "${printable(name)}" could be extracted outside its folder: ${problem.reason}`);
    if (problem) throw refused(`Entry "${printable(name)}" cannot be extracted safely on Windows: ${problem.reason}`);
    const key = nameKey(name);
    if (seen.has(key)) throw refused(`Entry "${printable(name)}" appears twice (letter case and Unicode form aside), so one would overwrite the other`);
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

/** Permissions recorded by a Unix zip tool, kept for Unix extractors; other makers' attributes are not carried over. */
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
