// `rmm restore FILE [--force]` (issues 34 and 57). A restore first reads the whole backup into a staging
// directory in DATA_DIR and checks every part (the manifest's SHA-256 and the ZIP's CRC-32; with sealed
// secrets, the manifest's own SHA-256 inside them) before it touches anything. Then the database goes in
// atomically: PostgreSQL in one transaction (pg_restore --single-transaction, or the logical dump's one
// transaction), the clearing of --force included; PGlite into a new directory that replaces the old one
// only once it opened. Blob and secret files wait in the staging directory and are renamed into place
// after the database succeeded. On any failure the target stays as it was.
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createGunzip } from 'node:zlib';
import pg from 'pg';
import type { Config } from '../../config/env.js';
import { acquireDataDirLock } from '../../db/data-dir-lock.js';
import { DamagedBackupError, extractVerified, readIndex, SEALED_ENTRY, sha256 } from './archive.js';
import { open, type BackupSecrets } from './backup-secrets.js';
import { blobDir, FORMAT, LOGICAL_ENTRY, PG_DUMP_ENTRY, PGLITE_ENTRY, pgTool, type Manifest } from './backup.js';
import type { LogicalManifest } from './logical-dump.js';
import { restoreLogical } from './logical-dump.js';

const run = promisify(execFile);
const SECRET_FILES = [
  ['encryption-key', 'encryption_key', 'ENCRYPTION_KEY'],
  ['jwt-secret', 'jwt_secret', 'JWT_SECRET'],
] as const;

/** Restores a backup into the configured place; refuses a place with data unless `force`. */
export async function restore(config: Config, file: string, options: { force: boolean; passphrase: string | undefined }, warn: (line: string) => void): Promise<Manifest> {
  const index = await readIndex(file);
  const manifest = parseManifest(index.manifest, file);
  const target = config.databaseUrl ? 'postgres' : 'pglite';
  if (manifest.database !== target) throw new Error(`the backup holds a ${manifest.database} database; this configuration uses ${target} (set or unset DATABASE_URL)`);
  const sealed = index.sealed && openSealed(index.sealed, index.manifest!, options.passphrase);
  await refuseOccupied(config, options.force);

  const createdDataDir = !(await stat(config.dataDir).then(() => true, () => false));
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  let restored = false;
  // The embedded database: the server must not hold it while it is replaced; either: one restore at a time.
  const lock = await acquireDataDirLock(config.dataDir);
  let staging = '';
  try {
    await clearKilledRestores(config.dataDir, warn);
    // In DATA_DIR, so that its files reach their places by rename, on the same file system.
    staging = await mkdtemp(path.join(config.dataDir, '.restore-'));
    if (manifest.version === 1) warn("warning: this backup predates per-part checksums (SHA-256); each part was checked against the ZIP's CRC-32 only");
    const parts = await extractVerified(file, staging, manifest.parts);
    const database = databaseEntry(manifest);
    if (!parts.has(database)) throw new DamagedBackupError(`its database (${database}) is missing`);
    const secrets = sealed || (await readClearSecrets(staging));
    for (const [name, key] of SECRET_FILES) await writeFile(path.join(staging, name), `${secrets[key]}\n`, { mode: 0o600 });

    if (config.databaseUrl) await restorePostgres(config.databaseUrl, staging, parts, options.force);
    else await restorePglite(config, staging);

    // The database is in: the files follow, each by one rename.
    await mkdir(blobDir(config), { recursive: true, mode: 0o700 });
    for (const name of parts) if (name.startsWith('blobs/')) await rename(path.join(staging, name), path.join(blobDir(config), path.basename(name)));
    for (const [name, key, variable] of SECRET_FILES) {
      const fromEnv = variable === 'ENCRYPTION_KEY' ? config.encryptionKey : config.jwtSecret;
      if (fromEnv !== undefined && fromEnv !== secrets[key]) warn(`warning: ${variable} is set and differs from the backup's; the server uses the variable${variable === 'ENCRYPTION_KEY' ? ', and cannot read the encrypted settings of the backup with it' : ''}`);
      await rename(path.join(staging, name), path.join(config.dataDir, name));
    }
    restored = true;
    return manifest;
  } finally {
    if (staging) await rm(staging, { recursive: true, force: true });
    await lock.release();
    // A DATA_DIR this restore created goes again when nothing came of it.
    if (!restored && createdDataDir) await rmdir(config.dataDir).catch(() => undefined);
  }
}

function parseManifest(raw: Buffer | undefined, file: string): Manifest {
  let manifest: Manifest | null = null;
  try {
    manifest = JSON.parse(raw?.toString('utf8') ?? 'null') as Manifest | null;
  } catch {
    // said below
  }
  if (manifest?.format !== FORMAT) throw new Error(`${file} is not an RMM backup`);
  if (manifest.version !== 1 && manifest.version !== 2) throw new Error(`${file} is a backup of format version ${String(manifest.version)}, made by a newer version of the product: restore it with that version`);
  if (manifest.version === 2 && (typeof manifest.parts !== 'object' || manifest.parts === null)) throw new DamagedBackupError('its manifest lists no parts');
  return manifest;
}

function databaseEntry(manifest: Manifest): string {
  if (manifest.database === 'pglite') return PGLITE_ENTRY;
  return manifest.postgres_format === 'logical' ? LOGICAL_ENTRY : PG_DUMP_ENTRY;
}

async function refuseOccupied(config: Config, force: boolean): Promise<void> {
  if (force) return;
  if (!config.databaseUrl) {
    const dir = path.join(config.dataDir, 'pglite');
    if ((await readdir(dir).catch(() => [])).length > 0) throw new Error(`${dir} already holds a database: restore into an empty DATA_DIR, or give --force to replace it`);
    return;
  }
  const client = new pg.Client({ connectionString: config.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: string }>("select count(*) as n from information_schema.tables where table_schema = 'public'");
    if (Number(rows[0]?.n ?? 0) > 0) throw new Error('the database already holds tables: restore into an empty database, or give --force to replace them');
  } finally {
    await client.end();
  }
}

/** Sealed secrets, opened; they must name this manifest (else it was altered, its checksums with it). */
function openSealed(sealed: Buffer, manifest: Buffer, passphrase: string | undefined): BackupSecrets {
  if (!passphrase) throw new Error("the backup's secrets are sealed: give the passphrase (--passphrase-stdin)");
  let parsed: Parameters<typeof open>[0];
  try {
    parsed = JSON.parse(sealed.toString('utf8')) as Parameters<typeof open>[0];
  } catch {
    throw new DamagedBackupError(`${SEALED_ENTRY} is not JSON`);
  }
  const secrets = complete(open(parsed, passphrase));
  if (secrets.manifest_sha256 !== undefined && secrets.manifest_sha256 !== sha256(manifest)) throw new DamagedBackupError('manifest.json is not the manifest its sealed secrets were made with');
  return secrets;
}

/** Secrets in clear, from the staging directory (checked against the manifest there). */
async function readClearSecrets(staging: string): Promise<BackupSecrets> {
  const clear = await readFile(path.join(staging, 'secrets.json'), 'utf8').catch(() => undefined);
  if (clear === undefined) throw new DamagedBackupError('it holds no secrets');
  try {
    return complete(JSON.parse(clear) as BackupSecrets);
  } catch (err) {
    if (err instanceof DamagedBackupError) throw err;
    throw new DamagedBackupError('secrets.json is not JSON');
  }
}

function complete<T extends BackupSecrets>(secrets: T): T {
  if (typeof secrets?.encryption_key !== 'string' || typeof secrets.jwt_secret !== 'string') throw new DamagedBackupError('its secrets are incomplete');
  return secrets;
}

/** One transaction: a failure (or a damaged dump that got this far) leaves the database as it was. */
async function restorePostgres(url: string, staging: string, parts: Set<string>, force: boolean): Promise<void> {
  if (parts.has(LOGICAL_ENTRY)) {
    let logical: LogicalManifest;
    try {
      logical = JSON.parse(await readFile(path.join(staging, LOGICAL_ENTRY), 'utf8')) as LogicalManifest;
    } catch {
      throw new DamagedBackupError(`${LOGICAL_ENTRY} is not JSON`);
    }
    // Only parts that were extracted (their names are checked): a table name cannot point elsewhere.
    const rowsOf = (table: string) => (parts.has(`database/tables/${table}.copy`) ? createReadStream(path.join(staging, 'database', 'tables', `${table}.copy`)) : undefined);
    await restoreLogical(url, logical, rowsOf, force);
    return;
  }
  // --single-transaction: --clean's drops, the schema and every row commit together, or nothing does.
  const args = ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', ...(force ? ['--clean', '--if-exists'] : [])];
  await pgTool('pg_restore', [...args, `--dbname=${url}`, path.join(staging, PG_DUMP_ENTRY)]);
}

/** Loads the dump into a new directory and swaps it in once that worked; the old one stays until then. */
async function restorePglite(config: Config, staging: string): Promise<void> {
  const fresh = path.join(staging, 'pglite');
  await mkdir(fresh, { mode: 0o700 });
  // Unpacked here, where a damaged stream is an error, not in PGlite (pglite-load.ts).
  const tarFile = path.join(staging, 'pglite.tar');
  try {
    await pipeline(createReadStream(path.join(staging, PGLITE_ENTRY)), createGunzip(), createWriteStream(tarFile, { mode: 0o600 }));
  } catch (err) {
    if (/^E[A-Z]+$/.test(String((err as NodeJS.ErrnoException).code))) throw err;
    throw new DamagedBackupError(`${PGLITE_ENTRY} cannot be unpacked (${(err as Error).message})`);
  }
  await rm(path.join(staging, PGLITE_ENTRY)); // the space for the new directory
  // In a process of its own (see there); the same runtime as this one (tsx, or the compiled tree).
  const loader = fileURLToPath(import.meta.url).replace(/restore\.(ts|js)$/, 'pglite-load.$1');
  try {
    await run(process.execPath, [...process.execArgv, loader, tarFile, fresh]);
  } catch (err) {
    const said = (err as { stderr?: string }).stderr?.trim().split('\n').at(-1);
    throw new Error(`the backup's embedded database does not load (${said || (err as Error).message}); nothing was restored`);
  }
  await rm(tarFile);
  const dir = path.join(config.dataDir, 'pglite');
  const replaced = path.join(staging, 'pglite.replaced');
  const hadOne = await rename(dir, replaced).then(
    () => true,
    (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return false;
      throw err;
    },
  );
  try {
    await rename(fresh, dir);
  } catch (err) {
    if (hadOne) await rename(replaced, dir);
    throw err;
  }
}

/**
 * Removes what a killed restore left (only a restore holding the lock makes `.restore-*`). One killed
 * between its two renames left no `pglite` and the old database in its `pglite.replaced`: that is put
 * back first, never deleted.
 */
async function clearKilledRestores(dataDir: string, warn: (line: string) => void): Promise<void> {
  const live = path.join(dataDir, 'pglite');
  for (const name of await readdir(dataDir)) {
    if (!name.startsWith('.restore-')) continue;
    const replaced = path.join(dataDir, name, 'pglite.replaced');
    const missing = !(await stat(live).then(() => true, () => false));
    if (missing && (await stat(replaced).then(() => true, () => false))) {
      await rename(replaced, live);
      warn(`warning: a restore was stopped while it swapped the embedded database; the previous database is back in ${live}`);
    }
    await rm(path.join(dataDir, name), { recursive: true, force: true });
  }
}
