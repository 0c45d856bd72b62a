// The server's own secrets in a backup: the key that encrypts secrets at rest (TOTP secrets, installer
// keys, the webhook secret) and the JWT secret. Without the key a restored server cannot read what it
// stored encrypted, so a backup carries them: in clear with a warning, or sealed with a passphrase
// (scrypt, then AES-256-GCM). The sealed payload also carries the SHA-256 of the backup's manifest, which
// lists every part's SHA-256: with the passphrase, the whole backup is authenticated (archive.ts).
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../../config/env.js';

export interface BackupSecrets {
  encryption_key: string;
  jwt_secret: string;
}

/** What a backup seals: the secrets and, since issue 57, the SHA-256 of its manifest.json. */
export interface SealedPayload extends BackupSecrets {
  manifest_sha256?: string;
}

interface Sealed {
  salt: string;
  iv: string;
  tag: string;
  data: string;
}

const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

/** The secrets as the server uses them: from the environment, else from DATA_DIR. */
export async function currentSecrets(config: Config): Promise<BackupSecrets> {
  const fromFile = async (name: string) => (await readFile(path.join(config.dataDir, name), 'utf8')).trim();
  return {
    encryption_key: config.encryptionKey ?? (await fromFile('encryption-key')),
    jwt_secret: config.jwtSecret ?? (await fromFile('jwt-secret')),
  };
}

export function seal(secrets: SealedPayload, passphrase: string): Sealed {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', scryptSync(passphrase, salt, 32, SCRYPT), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(secrets), 'utf8'), cipher.final()]);
  return { salt: salt.toString('base64'), iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64'), data: data.toString('base64') };
}

export function open(sealed: Sealed, passphrase: string): SealedPayload {
  const decipher = createDecipheriv('aes-256-gcm', scryptSync(passphrase, Buffer.from(sealed.salt, 'base64'), 32, SCRYPT), Buffer.from(sealed.iv, 'base64'));
  decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
  try {
    return JSON.parse(Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString('utf8')) as SealedPayload;
  } catch {
    throw new Error('the passphrase does not open this backup');
  }
}
