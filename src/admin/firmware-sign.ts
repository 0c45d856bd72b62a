// `npm run cli -- firmware sign --key FILE --platform P --version V BINARY`: signs firmware offline
// (issue 30). The private key lives in FILE (PKCS#8 PEM, mode 0600), created with a new Ed25519 key pair
// when it does not exist; it is meant to stay on the signing machine and never reaches the server. The
// signature goes into the upload's `x-firmware-signature` header; the public key is given to the
// updaters. Needs no server, no database and no server configuration.
import { createHash, createPrivateKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { publicKeyBase64, signFirmware } from '../modules/firmware/firmware-signature.js';
import { VERSION_PATTERN } from '../modules/firmware/versions.js';

export const FIRMWARE_SIGN_USAGE = 'firmware sign --key FILE --platform P --version V BINARY';

export const FIRMWARE_SIGN_HELP = `usage: npm run cli -- ${FIRMWARE_SIGN_USAGE} [--show-public-key]

  --key FILE           the Ed25519 private key (PKCS#8 PEM); created with a new key pair, mode 0600,
                       when it does not exist. Keep it on this machine: the server never needs it.
  --platform P         freebsd, linux or windows: the platform the firmware is uploaded for
  --version V          the version it is uploaded as
  --show-public-key    print the public key also when the key file already existed
  BINARY               the agent binary to sign

Prints "public-key: <base64>" (when the key was created, or with --show-public-key), "sha256: <hex>" and
"signature: <base64>". The signature binds platform, version and SHA-256; send it with the upload:
  curl -H "x-firmware-signature: <signature>" --data-binary @BINARY \\
    "https://rmm.example.net/api/v1/firmware/upload?version=V&platform=P" -H "x-api-key: ..."
and give the updaters the public key (--public-key or RMM_FIRMWARE_PUBLIC_KEY).`;

const PLATFORMS = ['freebsd', 'linux', 'windows'];

class SignUsageError extends Error {}

/** Reads the private key, or creates a new pair in `file`; `created` says which. */
async function privateKeyFrom(file: string): Promise<{ key: KeyObject; created: boolean }> {
  const pem = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return null;
    throw new Error(`cannot read the key file ${file}: ${err.message}`);
  });
  if (pem !== null) {
    let key: KeyObject;
    try {
      key = createPrivateKey(pem);
    } catch (err) {
      throw new Error(`${file} is not a private key in PEM form: ${(err as Error).message}`);
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new Error(`${file} holds a ${key.asymmetricKeyType ?? 'non-asymmetric'} key, not an Ed25519 one`);
    return { key, created: false };
  }
  const { privateKey } = generateKeyPairSync('ed25519');
  // `wx`: never overwrite a key that appeared meanwhile; 0600 from the first byte.
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.writeFile(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, 'utf8');
    await handle.sync();
  } finally {
    await handle.close();
  }
  return { key: privateKey, created: true };
}

async function sha256OfFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  try {
    for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  return hash.digest('hex');
}

function parse(argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: true,
      options: {
        key: { type: 'string' },
        platform: { type: 'string' },
        version: { type: 'string' },
        'show-public-key': { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new SignUsageError((err as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help' as const;
  if (!values.key) throw new SignUsageError('--key is required');
  if (!values.platform || !PLATFORMS.includes(values.platform)) throw new SignUsageError('--platform must be freebsd, linux or windows');
  if (!values.version || !VERSION_PATTERN.test(values.version)) throw new SignUsageError('--version must match ^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$');
  if (positionals.length !== 1) throw new SignUsageError('expected exactly one binary to sign');
  return { keyFile: values.key, platform: values.platform, version: values.version, showPublicKey: values['show-public-key'] === true, binary: positionals[0]! };
}

/** Runs the command; returns the exit code (2 for a bad command line, 1 for a failure). */
export async function runFirmwareSign(argv: string[], out: (line: string) => void, err: (line: string) => void = console.error): Promise<number> {
  let args: Exclude<ReturnType<typeof parse>, 'help'>;
  try {
    const parsed = parse(argv);
    if (parsed === 'help') {
      out(FIRMWARE_SIGN_HELP);
      return 0;
    }
    args = parsed;
  } catch (e) {
    if (!(e instanceof SignUsageError)) throw e;
    err(`error: ${e.message}\n\n${FIRMWARE_SIGN_HELP}`);
    return 2;
  }
  try {
    const sha256 = await sha256OfFile(args.binary);
    const { key, created } = await privateKeyFrom(args.keyFile);
    if (created) err(`created a new Ed25519 key pair; the private key is in ${args.keyFile} (mode 0600): keep it off the server`);
    if (created || args.showPublicKey) out(`public-key: ${publicKeyBase64(key)}`);
    out(`sha256: ${sha256}`);
    out(`signature: ${signFirmware(key, { platform: args.platform, version: args.version, sha256 })}`);
    return 0;
  } catch (e) {
    err(`error: ${(e as Error).message}`);
    return 1;
  }
}
