// capacity.ts's storage figures of an embedded database that the running server holds: PGlite is one
// process's, so nothing else may open it while the server runs, and they are read from its files
// instead. The metric tables' sizes are their files' (what pg_total_relation_size adds up: every fork
// of the tables, their TOAST and indexes), the database's the files of its directory (as
// pg_database_size), the WAL position the end of the last page written in pg_wal (PGlite runs with fsync
// off, but a commit still writes its WAL to the file), and a checkpoint shows as a new checkpoint
// location in global/pg_control. Which files are whose is read once, with the server stopped.
import { open, readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type { DbHandle } from '../../src/db/create-db.js';
import type { Storage } from './capacity-probes.js';

export interface PgliteFileMap {
  /** base/<oid of the database>, relative to the PGlite directory. */
  databaseDir: string;
  /** Relation file nodes of the metric tables, their TOAST tables and all their indexes. */
  metricNodes: Set<string>;
}

/** Which files hold the metric tables: read from the database itself while no server holds it. */
export async function pgliteFileMap(handle: DbHandle): Promise<PgliteFileMap> {
  const { rows } = await sql<{ path: string }>`
    with tables as (select oid, reltoastrelid from pg_class where oid in (to_regclass('metric_points'), to_regclass('metric_layouts'), to_regclass('metric_hours'))),
         rels as (select oid from tables
                  union select reltoastrelid from tables where reltoastrelid <> 0
                  union select indexrelid from pg_index where indrelid in (select oid from tables union select reltoastrelid from tables))
    select pg_relation_filepath(oid) as path from rels`.execute(handle.db);
  const paths = rows.map((r) => r.path).filter(Boolean);
  if (paths.length === 0) throw new Error('no metric tables in the embedded database');
  return { databaseDir: path.dirname(paths[0]!), metricNodes: new Set(paths.map((p) => path.basename(p))) };
}

/** A file of relation node `node`: the main fork's segments (16384, 16384.1, …) and the other forks (_fsm, _vm, _init). */
const nodeOf = (file: string) => /^(\d+)(?:_(?:fsm|vm|init))?(?:\.\d+)?$/.exec(file)?.[1];

/** The storage figures from the files of the PGlite directory `dir`; samples are unknown from outside (NaN). */
export async function readPgliteFiles(dir: string, map: PgliteFileMap): Promise<Storage> {
  let metricBytes = 0;
  let databaseBytes = 0;
  const base = path.join(dir, map.databaseDir);
  for (const file of await readdir(base)) {
    const size = (await stat(path.join(base, file)).catch(() => undefined))?.size ?? 0;
    databaseBytes += size;
    const node = nodeOf(file);
    if (node && map.metricNodes.has(node)) metricBytes += size;
  }
  return { metricBytes, databaseBytes, samples: Number.NaN, walBytes: await walPosition(path.join(dir, 'pg_wal')), checkpoints: await checkpointsSoFar(dir), otherCommits: [] };
}

const PAGE = 8192;
/** XLogPageHeaderData: xlp_magic (2), xlp_info (2), xlp_tli (4), xlp_pageaddr (8), xlp_rem_len (4). */
const PAGE_ADDR_AT = 8;

/** The LSN a segment file's name stands for (timeline, log, segment: 8 hex digits each). */
function segmentStart(name: string, segmentBytes: number): bigint {
  return BigInt(`0x${name.slice(8, 16)}`) * 2n ** 32n + BigInt(`0x${name.slice(16, 24)}`) * BigInt(segmentBytes);
}

/**
 * The WAL written so far, in bytes from 0/0. Old segments are recycled under later names and keep their
 * old pages until overwritten, so a page counts only when the address in its header is its own: the
 * last such page of the latest segment in use is the one being filled, and the WAL ends at its last
 * byte that is not zero (a page is written whole from a zeroed buffer).
 */
async function walPosition(walDir: string): Promise<number> {
  const names = (await readdir(walDir)).filter((f) => /^[0-9A-F]{24}$/.test(f)).sort().reverse();
  for (const name of names) {
    const file = await open(path.join(walDir, name), 'r');
    try {
      const { size } = await file.stat();
      const start = segmentStart(name, size);
      const segment = Buffer.alloc(size);
      await file.read(segment, 0, size, 0);
      if (segment.readBigUInt64LE(PAGE_ADDR_AT) !== start) continue;
      let page = 0;
      while (page + PAGE < size && segment.readBigUInt64LE(page + PAGE + PAGE_ADDR_AT) === start + BigInt(page + PAGE)) page += PAGE;
      let end = page + PAGE;
      while (end > page && segment[end - 1] === 0) end--;
      return Number(start) + end;
    } finally {
      await file.close();
    }
  }
  return Number.NaN;
}

/**
 * Checkpoints seen so far, per directory: one each time the checkpoint location in global/pg_control
 * (ControlFileData.checkPoint, at byte 32) moved since the previous read. The file tells that
 * checkpoints happened between two reads, not how many: a window counts at most one.
 */
const checkpointsSeen = new Map<string, { location: bigint; count: number }>();
async function checkpointsSoFar(dir: string): Promise<number> {
  const location = (await readFile(path.join(dir, 'global/pg_control'))).readBigUInt64LE(32);
  const seen = checkpointsSeen.get(dir) ?? { location, count: 0 };
  if (seen.location !== location) seen.count++;
  checkpointsSeen.set(dir, { location, count: seen.count });
  return seen.count;
}
