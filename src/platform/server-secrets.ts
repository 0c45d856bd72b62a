// The server's own secrets: the JWT signing secret and the key that encrypts secrets at rest. Each comes
// from its environment variable, or is generated once and kept in DATA_DIR (mode 0600). Several servers
// sharing one PostgreSQL database must be given the same values through the environment.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, open, readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config/env.js';

export interface ServerSecrets {
  jwtSecret: string;
  encryptionKey: Buffer;
}

export async function loadServerSecrets(config: Config): Promise<ServerSecrets> {
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  const jwtSecret = config.jwtSecret ?? (await readOrCreate(path.join(config.dataDir, 'jwt-secret')));
  const keyMaterial = config.encryptionKey ?? (await readOrCreate(path.join(config.dataDir, 'encryption-key')));
  // Any string of enough entropy becomes a 256-bit key.
  return { jwtSecret, encryptionKey: createHash('sha256').update(keyMaterial).digest() };
}

async function readOrCreate(file: string): Promise<string> {
  try {
    const handle = await open(file, 'wx', 0o600);
    const secret = randomBytes(48).toString('base64url');
    await handle.writeFile(`${secret}\n`);
    await handle.close();
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const secret = (await readFile(file, 'utf8')).trim();
    if (secret.length < 32) throw new Error(`${file} holds fewer than 32 characters; delete it to generate a new one`);
    return secret;
  }
}
