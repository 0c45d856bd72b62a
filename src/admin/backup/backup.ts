// `rmm backup --out FILE` and `rmm restore FILE` (issue 34): one ZIP file with the database (PGlite: its
// data directory dump; PostgreSQL: pg_dump's custom format, or without pg_dump the CLI's own COPY dump of
// the RMM tables), DATA_DIR/blobs (firmware and installer
// files) and the server's secrets (in clear with a warning, or sealed with a passphrase), and a manifest
// with every part's SHA-256 (issue 57). The restore is restore.ts.
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import yazl from 'yazl';
import type { Config } from '../../config/env.js';
import { acquireDataDirLock } from '../../db/data-dir-lock.js';
import { pgliteArtifacts } from '../../db/pglite-artifacts.js';
import { productVersion } from '../../platform/version.js';
import { MANIFEST_ENTRY, measureBuffer, measureFile, measuring, SEALED_ENTRY, sha256, type Part } from './archive.js';
import { currentSecrets, seal } from './backup-secrets.js';
import { dumpLogical } from './logical-dump.js';

const run = promisify(execFile);
export const FORMAT = 'rmm-backup';
export const PG_DUMP_ENTRY = 'database/postgres.dump';
export const PGLITE_ENTRY = 'database/pglite.tar.gz';
export const LOGICAL_ENTRY = 'database/logical.json';

export interface Manifest {
  format: typeof FORMAT;
  /** 2 since issue 57 (`parts`); 1 had no checksums of its own. */
  version: 1 | 2;
  product_version: string;
  created_at: string;
  database: 'postgres' | 'pglite';
  blobs: number;
  secrets: 'clear' | 'sealed';
  /** PostgreSQL only: pg_dump's custom format, or the CLI's own COPY dump (no pg_dump installed, or --logical). */
  postgres_format?: 'pg_dump' | 'logical';
  /** Every part but the manifest and the sealed secrets (which carry the manifest's SHA-256): SHA-256 and size. */
  parts?: Record<string, Part>;
}

export const blobDir = (config: Config) => path.join(config.dataDir, 'blobs');

/** Writes the backup; returns what it holds. `passphrase` seals the secrets; without, they are in clear. */
export async function backup(config: Config, outFile: string, options: { passphrase: string | undefined; logical: boolean }, warn: (line: string) => void): Promise<Manifest> {
  const { passphrase } = options;
  const zip = new yazl.ZipFile();
  // Written as entries come: a table's rows stream from PostgreSQL straight into the file.
  const written = pipeline(zip.outputStream, createWriteStream(outFile, { mode: 0o600 }));
  const work = await mkdtemp(path.join(os.tmpdir(), 'rmm-backup-'));
  try {
    const database = config.databaseUrl ? 'postgres' : 'pglite';
    const parts: Record<string, Part> = {};
    const addBuffer = (data: Buffer, name: string) => {
      parts[name] = measureBuffer(data);
      zip.addBuffer(data, name);
    };
    const addFile = async (file: string, name: string) => {
      parts[name] = await measureFile(file);
      zip.addFile(file, name);
    };
    let postgresFormat: Manifest['postgres_format'];
    if (config.databaseUrl) {
      const dump = path.join(work, 'postgres.dump');
      postgresFormat = options.logical ? 'logical' : await pgTool('pg_dump', ['--format=custom', '--no-owner', '--no-privileges', `--file=${dump}`, `--dbname=${config.databaseUrl}`]).then(
        () => 'pg_dump' as const,
        (err: unknown) => {
          if (!(err instanceof MissingTool)) throw err;
          warn('pg_dump is not installed: the backup uses the CLI\'s own dump of the RMM tables (COPY)');
          return 'logical' as const;
        },
      );
      if (postgresFormat === 'pg_dump') await addFile(dump, PG_DUMP_ENTRY);
      else {
        const logical = await dumpLogical(config.databaseUrl, (entry, rows) => new Promise<void>((resolve, reject) => {
          // Measured as the rows stream into the archive.
          const { stream, part } = measuring();
          stream.once('end', () => {
            parts[entry] = part();
            resolve();
          });
          pipeline(rows, stream).catch(reject);
          zip.addReadStream(stream, entry);
        }));
        addBuffer(Buffer.from(JSON.stringify(logical)), LOGICAL_ENTRY);
      }
    } else {
      addBuffer(await dumpPglite(config), PGLITE_ENTRY);
    }
    const blobs = await readdir(blobDir(config)).catch(() => [] as string[]);
    const files = blobs.filter((name) => /^[0-9a-f]{64}$/.test(name));
    for (const name of files) await addFile(path.join(blobDir(config), name), `blobs/${name}`);
    const secrets = await currentSecrets(config);
    if (!passphrase) {
      warn("warning: the backup holds the server's encryption key and JWT secret in clear: keep it as safe as the database, or give a passphrase (--passphrase-stdin)");
      addBuffer(Buffer.from(JSON.stringify(secrets)), 'secrets.json');
    }
    const manifest: Manifest = {
      format: FORMAT,
      version: 2,
      product_version: productVersion(),
      created_at: new Date().toISOString(),
      database,
      blobs: files.length,
      secrets: passphrase ? 'sealed' : 'clear',
      ...(postgresFormat ? { postgres_format: postgresFormat } : {}),
      parts,
    };
    const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2));
    // Sealed with the manifest's SHA-256: whoever has the passphrase can trust every part's checksum.
    if (passphrase) zip.addBuffer(Buffer.from(JSON.stringify(seal({ ...secrets, manifest_sha256: sha256(manifestBytes) }, passphrase))), SEALED_ENTRY);
    zip.addBuffer(manifestBytes, MANIFEST_ENTRY);
    zip.end();
    await written;
    return manifest;
  } catch (err) {
    zip.end();
    await written.catch(() => undefined);
    await rm(outFile, { force: true });
    throw err;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

async function dumpPglite(config: Config): Promise<Buffer> {
  // The lock refuses while the server holds the embedded database: stop it first.
  const lock = await acquireDataDirLock(config.dataDir);
  try {
    const db = await PGlite.create({ ...(await pgliteArtifacts()), dataDir: path.join(config.dataDir, 'pglite') });
    try {
      return Buffer.from(await (await db.dumpDataDir('gzip')).arrayBuffer());
    } finally {
      await db.close();
    }
  } finally {
    await lock.release();
  }
}

class MissingTool extends Error {}

/** Runs pg_dump or pg_restore; a clear error when the PostgreSQL client tools are not installed. */
export async function pgTool(tool: 'pg_dump' | 'pg_restore', args: string[]): Promise<void> {
  try {
    await run(tool, args, { maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new MissingTool(`${tool} is needed for this backup: install the PostgreSQL client tools (Debian: postgresql-client) of the server's major version`);
    throw new Error(`${tool} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

/** Reads a passphrase from the first line of standard input. */
export async function readPassphrase(): Promise<string> {
  const text = (await buffer(process.stdin)).toString('utf8');
  const line = text.split(/\r?\n/)[0] ?? '';
  if (line.length < 12) throw new Error('the passphrase must be at least 12 characters');
  return line;
}
