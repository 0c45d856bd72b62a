// `rmm` admin CLI: `npm run cli -- <command>` (or `node dist/src/cli.js <command>` in the image). It uses
// the same configuration as the server. Features add their commands (users, keys, password reset) to
// the table below.
import { ConfigError, loadConfig, type Config } from './config/env.js';
import { createDb } from './db/create-db.js';
import { migrateToLatest } from './db/migrator.js';
import { createLogger } from './platform/logger.js';
import { productVersion } from './platform/version.js';

interface Command {
  summary: string;
  run(config: Config, args: string[]): Promise<void>;
}

const commands: Record<string, Command> = {
  migrate: {
    summary: 'apply pending database migrations and exit',
    async run(config) {
      const db = await createDb(config, createLogger({ level: 'warn' }));
      try {
        const report = await migrateToLatest(db);
        console.log(`${db.location}: ${report.applied.length} migration(s) applied${report.applied.length ? `: ${report.applied.join(', ')}` : ''}`);
      } finally {
        await db.close();
      }
    },
  },
  version: {
    summary: 'print the product version',
    async run() {
      console.log(productVersion());
    },
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`);
  return `usage: npm run cli -- <command>\n\ncommands:\n${lines.join('\n')}\n\nThe environment (DATABASE_URL, DATA_DIR, ...) is read as by the server.`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === 'help' || name === '--help') {
    console.log(usage());
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) {
    console.error(`unknown command: ${name}\n\n${usage()}`);
    return 2;
  }
  try {
    await command.run(loadConfig(), args);
    return 0;
  } catch (err) {
    console.error(err instanceof ConfigError || err instanceof Error ? err.message : String(err));
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
