// A self-signed certificate for 127.0.0.1 and localhost, made with openssl in a new temporary folder.
import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Paths of the new certificate and key (PEM), valid for a day. */
export async function selfSignedCertificate(prefix: string): Promise<{ dir: string; cert: string; key: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost']);
  return { dir, cert, key };
}
