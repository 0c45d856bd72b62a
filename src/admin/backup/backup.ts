// `rmm backup --out FILE` and `rmm restore FILE` (issue 34): one ZIP file with the database (PGlite: its
// data directory dump; PostgreSQL: pg_dump's custom format, or without pg_dump the CLI's own COPY dump of
// the RMM tables), DATA_DIR/blobs (firmware and installer
// files) and the server's secrets (in clear with a warning, or sealed with a passphrase). A restore goes
// only onto an empty place unless --force; the server it starts migrates forward from an older backup.
import { execFile } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { buffer } from 'node:stream/consumers';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import yauzl from 'yauzl';
import yazl from 'yazl';
import type { Config } from '../../config/env.js';
import { acquireDataDirLock } from '../../db/data-dir-lock.js';
import { pgliteArtifacts } from '../../db/pglite-artifacts.js';
import { productVersion } from '../../platform/version.js';
import { currentSecrets, open, seal, type BackupSecrets } from './backup-secrets.js';
import { dumpLogical, restoreLogical, type LogicalManifest } from './logical-dump.js';

const run = promisify(execFile);
const FORMAT = 'rmm-backup';
const PG_DUMP_ENTRY = 'database/postgres.dump';
const PGLITE_ENTRY = 'database/pglite.tar.gz';
const LOGICAL_ENTRY = 'database/logical.json';

export interface Manifest {
  format: typeof FORMAT;
  version: 1;
  product_version: string;
  created_at: string;
  database: 'postgres' | 'pglite';
  blobs: number;
  secrets: 'clear' | 'sealed';
  /** PostgreSQL only: pg_dump's custom format, or the CLI's own COPY dump (no pg_dump installed, or --logical). */
  postgres_format?: 'pg_dump' | 'logical';
}

const blobDir = (config: Config) => path.join(config.dataDir, 'blobs');

/** Writes the backup; returns what it holds. `passphrase` seals the secrets; without, they are in clear. */
export async function backup(config: Config, outFile: string, options: { passphrase: string | undefined; logical: boolean }, warn: (line: string) => void): Promise<Manifest> {
  const { passphrase } = options;
  const zip = new yazl.ZipFile();
  // Written as entries come: a table's rows stream from PostgreSQL straight into the file.
  const written = pipeline(zip.outputStream, createWriteStream(outFile, { mode: 0o600 }));
  const work = await mkdtemp(path.join(os.tmpdir(), 'rmm-backup-'));
  try {
    const database = config.databaseUrl ? 'postgres' : 'pglite';
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
      if (postgresFormat === 'pg_dump') zip.addFile(dump, PG_DUMP_ENTRY);
      else {
        const logical = await dumpLogical(config.databaseUrl, (entry, rows) => new Promise<void>((resolve, reject) => {
          rows.once('end', resolve).once('error', reject);
          zip.addReadStream(rows, entry);
        }));
        zip.addBuffer(Buffer.from(JSON.stringify(logical)), LOGICAL_ENTRY);
      }
    } else {
      zip.addBuffer(await dumpPglite(config), PGLITE_ENTRY);
    }
    const blobs = await readdir(blobDir(config)).catch(() => [] as string[]);
    const files = blobs.filter((name) => /^[0-9a-f]{64}$/.test(name));
    for (const name of files) zip.addFile(path.join(blobDir(config), name), `blobs/${name}`);
    const secrets = await currentSecrets(config);
    if (passphrase) zip.addBuffer(Buffer.from(JSON.stringify(seal(secrets, passphrase))), 'secrets.sealed.json');
    else {
      warn("warning: the backup holds the server's encryption key and JWT secret in clear: keep it as safe as the database, or give a passphrase (--passphrase-stdin)");
      zip.addBuffer(Buffer.from(JSON.stringify(secrets)), 'secrets.json');
    }
    const manifest: Manifest = {
      format: FORMAT,
      version: 1,
      product_version: productVersion(),
      created_at: new Date().toISOString(),
      database,
      blobs: files.length,
      secrets: passphrase ? 'sealed' : 'clear',
      ...(postgresFormat ? { postgres_format: postgresFormat } : {}),
    };
    zip.addBuffer(Buffer.from(JSON.stringify(manifest, null, 2)), 'manifest.json');
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

/** Restores a backup into the configured place; refuses a place with data unless `force`. */
export async function restore(config: Config, file: string, options: { force: boolean; passphrase: string | undefined }, warn: (line: string) => void): Promise<Manifest> {
  const entries = await readEntries(file);
  const manifest = JSON.parse(entries.get('manifest.json')?.toString('utf8') ?? 'null') as Manifest | null;
  if (manifest?.format !== FORMAT) throw new Error(`${file} is not an RMM backup`);
  const target = config.databaseUrl ? 'postgres' : 'pglite';
  if (manifest.database !== target) throw new Error(`the backup holds a ${manifest.database} database; this configuration uses ${target} (set or unset DATABASE_URL)`);
  const secrets = readSecrets(entries, options.passphrase);

  if (config.databaseUrl) await restorePostgres(config.databaseUrl, entries, options.force);
  else await restorePglite(config, entries.get(PGLITE_ENTRY)!, options.force);

  await mkdir(blobDir(config), { recursive: true, mode: 0o700 });
  for (const [name, content] of entries) if (name.startsWith('blobs/')) await writeFile(path.join(blobDir(config), path.basename(name)), content, { mode: 0o600 });
  await restoreSecrets(config, secrets, warn);
  return manifest;
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

async function restorePglite(config: Config, dump: Buffer, force: boolean): Promise<void> {
  const dir = path.join(config.dataDir, 'pglite');
  const existing = await readdir(dir).catch(() => [] as string[]);
  if (existing.length > 0 && !force) throw new Error(`${dir} already holds a database: restore into an empty DATA_DIR, or give --force to replace it`);
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const lock = await acquireDataDirLock(config.dataDir);
  try {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const db = await PGlite.create({ ...(await pgliteArtifacts()), dataDir: dir, loadDataDir: new Blob([dump]) });
    await db.close();
  } finally {
    await lock.release();
  }
}

async function restorePostgres(url: string, entries: Map<string, Buffer>, force: boolean): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("select count(*) as n from information_schema.tables where table_schema = 'public'");
    if (Number(rows[0]?.n ?? 0) > 0 && !force) throw new Error('the database already holds tables: restore into an empty database, or give --force to replace them');
    // The CLI's own dump loads into an empty schema only: --force empties it first.
    if (entries.has(LOGICAL_ENTRY) && force) await client.query('drop schema public cascade; create schema public');
  } finally {
    await client.end();
  }
  const logical = entries.get(LOGICAL_ENTRY);
  if (logical) {
    await restoreLogical(url, JSON.parse(logical.toString('utf8')) as LogicalManifest, (table) => entries.get(`database/tables/${table}.copy`));
    return;
  }
  const dump = entries.get(PG_DUMP_ENTRY)!;
  const work = await mkdtemp(path.join(os.tmpdir(), 'rmm-restore-'));
  try {
    const file = path.join(work, 'postgres.dump');
    await writeFile(file, dump, { mode: 0o600 });
    await pgTool('pg_restore', ['--no-owner', '--no-privileges', '--exit-on-error', ...(force ? ['--clean', '--if-exists'] : []), `--dbname=${url}`, file]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

function readSecrets(entries: Map<string, Buffer>, passphrase: string | undefined): BackupSecrets {
  const sealed = entries.get('secrets.sealed.json');
  if (sealed) {
    if (!passphrase) throw new Error('the backup\'s secrets are sealed: give the passphrase (--passphrase-stdin)');
    return open(JSON.parse(sealed.toString('utf8')) as Parameters<typeof open>[0], passphrase);
  }
  return JSON.parse(entries.get('secrets.json')?.toString('utf8') ?? 'null') as BackupSecrets;
}

/** Writes the secrets into DATA_DIR, where the server reads them unless the environment gives them. */
async function restoreSecrets(config: Config, secrets: BackupSecrets, warn: (line: string) => void): Promise<void> {
  for (const [file, value, fromEnv, variable] of [
    ['encryption-key', secrets.encryption_key, config.encryptionKey, 'ENCRYPTION_KEY'],
    ['jwt-secret', secrets.jwt_secret, config.jwtSecret, 'JWT_SECRET'],
  ] as const) {
    if (fromEnv !== undefined && fromEnv !== value) warn(`warning: ${variable} is set and differs from the backup's; the server uses the variable${variable === 'ENCRYPTION_KEY' ? ', and cannot read the encrypted settings of the backup with it' : ''}`);
    await writeFile(path.join(config.dataDir, file), `${value}\n`, { mode: 0o600 });
  }
}

async function readEntries(file: string): Promise<Map<string, Buffer>> {
  await stat(file);
  const zip = await yauzl.openPromise(file, { lazyEntries: true });
  const entries = new Map<string, Buffer>();
  try {
    for await (const entry of zip.eachEntry()) {
      // Only the names a backup writes: nothing can land outside DATA_DIR.
      if (!/^(manifest\.json|secrets(\.sealed)?\.json|database\/(postgres\.dump|pglite\.tar\.gz|logical\.json|tables\/[a-z0-9_]+\.copy)|blobs\/[0-9a-f]{64})$/.test(entry.fileName)) continue;
      entries.set(entry.fileName, await buffer(await zip.openReadStreamPromise(entry)));
    }
  } finally {
    zip.close();
  }
  return entries;
}

class MissingTool extends Error {}

/** Runs pg_dump or pg_restore; a clear error when the PostgreSQL client tools are not installed. */
async function pgTool(tool: 'pg_dump' | 'pg_restore', args: string[]): Promise<void> {
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
