// The reference agent's plain file commands (issue 59): fs_list (a page of a directory, sorted by name,
// read with opendir so a directory of 50,000 entries costs names only and lstat per entry of the page),
// fs_stat, fs_mkdir (recursive), fs_rename (no overwrite unless asked) and fs_delete (a non-empty
// directory only with recursive). Paths are checked by fs-paths.ts; errors carry its stable prefixes.
import type { Stats } from 'node:fs';
import { link, lstat, mkdir, opendir, readlink, rename, rm, rmdir, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { CommandParams } from '../../modules/agent-hub/agent-protocol.js';
import type { FileEntry } from '../../modules/agent-hub/device-protocol.js';
import { CommandError } from '../commands/command-error.js';
import { checkedPath, FS_ERROR_PREFIXES, fsError } from './fs-paths.js';

const DEFAULT_LIMIT = 1000;
const windows = process.platform === 'win32';

/** Byte-wise (UTF-16 code unit) order: the same on every device, and what the cursor resumes after. */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const encodeCursor = (name: string) => Buffer.from(name, 'utf8').toString('base64url');

function decodeCursor(cursor: string): string {
  if (!/^[A-Za-z0-9_-]*$/.test(cursor)) throw new CommandError(`${FS_ERROR_PREFIXES.invalid} the cursor is not one this agent gave`);
  return Buffer.from(cursor, 'base64url').toString('utf8');
}

function typeOf(stats: Stats): FileEntry['type'] {
  if (stats.isFile()) return 'file';
  if (stats.isDirectory()) return 'dir';
  if (stats.isSymbolicLink()) return 'link';
  return 'other';
}

/** One entry as the protocol describes it, from its lstat (a link is described, not followed). */
export async function describe(full: string, name: string, stats: Stats): Promise<FileEntry> {
  const link_target = stats.isSymbolicLink() ? await readlink(full).catch(() => null) : null;
  return {
    name,
    type: typeOf(stats),
    size: stats.isFile() ? stats.size : 0,
    modified_at: stats.mtime.toISOString(),
    mode: windows ? null : (stats.mode & 0o7777).toString(8).padStart(4, '0'),
    link_target,
  };
}

export async function fsList(params: CommandParams<'fs_list'>) {
  const dir = checkedPath(params.path);
  const limit = params.limit ?? DEFAULT_LIMIT;
  const after = params.cursor ? decodeCursor(params.cursor) : null;
  // Only the names after the cursor are kept; all are counted, which gives `total` for free.
  const names: string[] = [];
  let total = 0;
  try {
    for await (const dirent of await opendir(dir, { bufferSize: 256 })) {
      total++;
      if (after === null || dirent.name > after) names.push(dirent.name);
    }
  } catch (err) {
    throw fsError(err, dir);
  }
  names.sort(byName);
  const page = names.slice(0, limit);
  const entries: FileEntry[] = [];
  for (const name of page) {
    const full = path.join(dir, name);
    // An entry removed between the listing and its lstat is left out, not an error.
    const stats = await lstat(full).catch(() => null);
    if (stats) entries.push(await describe(full, name, stats));
  }
  const more = names.length > limit;
  return { path: dir, entries, next_cursor: more ? encodeCursor(page[page.length - 1]!) : null, total };
}

export async function fsStat(params: CommandParams<'fs_stat'>) {
  const target = checkedPath(params.path);
  const stats = await lstat(target).catch((err: unknown) => {
    throw fsError(err, target);
  });
  return { path: target, ...(await describe(target, path.basename(target) || target, stats)) };
}

export async function fsMkdir(params: CommandParams<'fs_mkdir'>) {
  const target = checkedPath(params.path);
  try {
    await mkdir(target, { recursive: true });
  } catch (err) {
    throw fsError(err, target);
  }
  const stats = await lstat(target);
  if (!stats.isDirectory()) throw new CommandError(`${FS_ERROR_PREFIXES.exists} ${target} (not a directory)`);
  return { path: target };
}

export async function fsRename(params: CommandParams<'fs_rename'>) {
  const from = checkedPath(params.from);
  const to = checkedPath(params.to);
  try {
    const source = await lstat(from);
    if (params.overwrite) {
      await rename(from, to);
    } else if (source.isFile()) {
      // A hard link fails when `to` exists: no window in which another writer's file is replaced.
      await noClobberMove(from, to);
    } else {
      if (await lstat(to).then(() => true, () => false)) throw new CommandError(`${FS_ERROR_PREFIXES.exists} ${to}`);
      await rename(from, to);
    }
  } catch (err) {
    throw fsError(err, `${from} → ${to}`);
  }
  return { from, to };
}

/** Moves a file to `to` only if nothing is there; falls back to check-then-rename where hard links are not possible. */
export async function noClobberMove(from: string, to: string): Promise<void> {
  try {
    await link(from, to);
    await unlink(from);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new CommandError(`${FS_ERROR_PREFIXES.exists} ${to}`);
    if (code === 'ENOENT') throw err;
  }
  if (await lstat(to).then(() => true, () => false)) throw new CommandError(`${FS_ERROR_PREFIXES.exists} ${to}`);
  await rename(from, to);
}

export async function fsDelete(params: CommandParams<'fs_delete'>) {
  const target = checkedPath(params.path);
  if (path.dirname(target) === target) throw new CommandError(`${FS_ERROR_PREFIXES.invalid} refusing to delete the root ${target}`);
  try {
    const stats = await lstat(target);
    if (!stats.isDirectory()) await unlink(target);
    else if (params.recursive) await rm(target, { recursive: true });
    else await rmdir(target);
  } catch (err) {
    throw fsError(err, target);
  }
  return { path: target };
}
