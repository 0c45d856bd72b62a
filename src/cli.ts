// `rmm` admin CLI: `npm run cli -- <command>` (or `node dist/src/cli.js <command>` in the image). It reads
// the same configuration as the server. With the embedded database held by a running server, admin
// commands are handed to that server through its admin socket.
import { ADMIN_COMMANDS, findAdminCommand, runAdminCommand, type AdminRequest } from './admin/commands.js';
import { backup, readPassphrase } from './admin/backup/backup.js';
import { restore } from './admin/backup/restore.js';
import { adminSocketPath, sendAdminRequest } from './admin/admin-socket.js';
import { FIRMWARE_SIGN_USAGE, runFirmwareSign } from './admin/firmware-sign.js';
import { createCoreServices } from './apps/server/services.js';
import { ConfigError, loadConfig, type Config } from './config/env.js';
import { createDb, type DbHandle } from './db/create-db.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { migrateToLatest } from './db/migrator.js';
import { systemClock } from './platform/clock.js';
import { runTunnelConnect, TUNNEL_CONNECT_USAGE } from './modules/tunnels/tunnel-connect.cli.js';
import { createLogger } from './platform/logger.js';
import { loadServerSecrets } from './platform/server-secrets.js';
import { productVersion } from './platform/version.js';

const out = (line: string) => console.log(line);

function usage(): string {
  const lines = [
    ['migrate', 'apply pending database migrations'],
    ['version', 'print the product version'],
    [TUNNEL_CONNECT_USAGE, 'expose a tunnel as a local port (see tunnel connect --help)'],
    [FIRMWARE_SIGN_USAGE, 'sign firmware offline with an Ed25519 key (see firmware sign --help)'],
    ['backup --out FILE [--passphrase-stdin] [--logical]', 'write the database, DATA_DIR/blobs and the secrets into one file (embedded database: stop the server first; --logical: PostgreSQL without pg_dump)'],
    ['restore FILE [--force] [--passphrase-stdin]', 'restore a backup onto an empty DATA_DIR or database (--force replaces what is there); checks every part first, and changes nothing when it fails'],
    ...Object.values(ADMIN_COMMANDS).map((c) => [c.usage, c.summary]),
  ];
  const width = Math.max(...lines.map(([u]) => u!.length));
  return [
    'usage: npm run cli -- <command>',
    '',
    'commands:',
    ...lines.map(([u, s]) => `  ${u!.padEnd(width)}  ${s}`),
    '',
    '--password-stdin reads the password from the first line of standard input; without it a password is',
    'generated and printed once. The environment (DATABASE_URL, DATA_DIR, ...) is read as by the server.',
  ].join('\n');
}

async function readPasswordFromStdin(): Promise<string> {
  let text = '';
  for await (const chunk of process.stdin) text += String(chunk);
  return text.split(/\r?\n/)[0] ?? '';
}

/** Opens the database, or reports that the running server holds it (embedded database). */
async function openDatabase(config: Config): Promise<DbHandle | DataDirInUseError> {
  try {
    return await createDb(config, createLogger({ level: 'warn' }));
  } catch (err) {
    if (err instanceof DataDirInUseError) return err;
    throw err;
  }
}

async function migrate(config: Config): Promise<number> {
  const db = await openDatabase(config);
  if (db instanceof DataDirInUseError) {
    out(`the server (process ${db.pid}) holds the database and applied the migrations when it started`);
    return 0;
  }
  try {
    const report = await migrateToLatest(db);
    out(`${db.location}: ${report.applied.length} migration(s) applied${report.applied.length ? `: ${report.applied.join(', ')}` : ''}`);
    return 0;
  } finally {
    await db.close();
  }
}

async function admin(config: Config, request: AdminRequest): Promise<number> {
  const db = await openDatabase(config);
  if (db instanceof DataDirInUseError) {
    const response = await sendAdminRequest(adminSocketPath(config.dataDir), request);
    response.output.forEach((line) => out(line));
    return response.code;
  }
  try {
    await migrateToLatest(db);
    const services = createCoreServices(db, await loadServerSecrets(config), systemClock);
    return await runAdminCommand(request, { services, out });
  } finally {
    await db.close();
  }
}

async function backupCommand(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const flags = new Set(rest.filter((a) => a.startsWith('--')));
  const outAt = rest.indexOf('--out');
  const file = name === 'backup' ? (outAt >= 0 ? rest[outAt + 1] : undefined) : rest.find((a) => !a.startsWith('--'));
  const known = name === 'backup' ? ['--out', '--passphrase-stdin', '--logical'] : ['--force', '--passphrase-stdin'];
  const unknown = [...flags].filter((f) => !known.includes(f));
  if (!file || unknown.length > 0) {
    console.error(`${unknown.length ? `unknown option ${unknown.join(', ')}; ` : ''}usage: npm run cli -- ${name === 'backup' ? 'backup --out FILE [--passphrase-stdin] [--logical]' : 'restore FILE [--force] [--passphrase-stdin]'}`);
    return 2;
  }
  const warn = (line: string) => console.error(line);
  try {
    const config = loadConfig();
    const passphrase = flags.has('--passphrase-stdin') ? await readPassphrase() : undefined;
    if (name === 'backup') {
      const made = await backup(config, file, { passphrase, logical: flags.has('--logical') }, warn);
      out(`backup written to ${file}: ${made.database} database, ${made.blobs} stored file(s), secrets ${made.secrets}`);
    } else {
      const restored = await restore(config, file, { force: flags.has('--force'), passphrase }, warn);
      out(`restored a ${restored.database} backup of ${restored.created_at} (product ${restored.product_version}); the server migrates it forward when it starts`);
    }
    return 0;
  } catch (err) {
    if (err instanceof DataDirInUseError) {
      console.error(`the server (process ${err.pid}) holds the embedded database: stop it first`);
      return 1;
    }
    console.error(err instanceof Error ? err.message : String(err));
    return 1;
  }
}

async function main(argv: string[]): Promise<number> {
  const [name] = argv;
  if (!name || name === 'help' || name === '--help') {
    out(usage());
    return name ? 0 : 2;
  }
  if (name === 'version') {
    out(productVersion());
    return 0;
  }
  // A client of a running server: no configuration or database of its own.
  if (name === 'tunnel' && argv[1] === 'connect') return runTunnelConnect(argv.slice(2), process.env, out);
  // Offline signing: no configuration, no database.
  if (name === 'firmware' && argv[1] === 'sign') return runFirmwareSign(argv.slice(2), out);
  if (name === 'backup' || name === 'restore') return backupCommand(argv);
  if (name !== 'migrate' && !findAdminCommand(argv.filter((a) => a !== '--password-stdin'))) {
    console.error(`unknown command: ${argv.join(' ')}\n\n${usage()}`);
    return 2;
  }
  try {
    const config = loadConfig();
    if (name === 'migrate') return await migrate(config);
    const password = argv.includes('--password-stdin') ? await readPasswordFromStdin() : undefined;
    return await admin(config, { argv, ...(password !== undefined ? { password } : {}) });
  } catch (err) {
    console.error(err instanceof ConfigError || err instanceof Error ? err.message : String(err));
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
