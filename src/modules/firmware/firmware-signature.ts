// Detached Ed25519 signatures of firmware (issue 30), shared by the server (optional upload check), the
// `firmware sign` CLI and the on-device updater. What is signed is a short text naming the platform,
// the version and the SHA-256 of the binary, so a signature binds all three and signing or checking
// never needs the binary in memory. Keys: the public key travels as base64 of its raw 32 bytes, the
// private key stays in a PKCS#8 PEM file on the signing machine.
import { createPublicKey, sign, verify, type KeyObject } from 'node:crypto';

export interface SignedFirmware {
  platform: string;
  version: string;
  /** SHA-256 of the binary, hex (compared lowercase). */
  sha256: string;
}

const ED25519_SIGNATURE_BYTES = 64;
const ED25519_PUBLIC_KEY_BYTES = 32;
/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the raw key follows it. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The exact UTF-8 text that is signed: `rmm-firmware-signature-v1\nplatform=…\nversion=…\nsha256=…\n`. */
export function signedText(f: SignedFirmware): string {
  return `rmm-firmware-signature-v1\nplatform=${f.platform}\nversion=${f.version}\nsha256=${f.sha256.toLowerCase()}\n`;
}

/** The bytes of a canonical standard-base64 text of exactly `length` bytes, or null. */
function strictBase64(text: string, length: number): Buffer | null {
  const bytes = Buffer.from(text, 'base64');
  return bytes.length === length && bytes.toString('base64') === text ? bytes : null;
}

/** Whether `text` is a signature in the accepted form: standard base64 of 64 bytes. */
export function isSignatureText(text: string): boolean {
  return strictBase64(text, ED25519_SIGNATURE_BYTES) !== null;
}

/** An Ed25519 public key from base64 of its raw 32 bytes, or from a PEM public key; throws otherwise. */
export function parsePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (trimmed.includes('-----BEGIN')) {
    const key = createPublicKey(trimmed);
    if (key.asymmetricKeyType !== 'ed25519') throw new Error('the public key is not an Ed25519 key');
    return key;
  }
  const raw = strictBase64(trimmed, ED25519_PUBLIC_KEY_BYTES);
  if (!raw) throw new Error('the public key must be base64 of the raw 32-byte Ed25519 key (44 characters)');
  return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** Base64 of the raw 32 bytes of an Ed25519 public (or private) key. */
export function publicKeyBase64(key: KeyObject): string {
  const spki = (key.type === 'public' ? key : createPublicKey(key)).export({ format: 'der', type: 'spki' });
  return spki.subarray(spki.length - ED25519_PUBLIC_KEY_BYTES).toString('base64');
}

/** Signs the firmware's text with an Ed25519 private key; base64 of the 64-byte signature. */
export function signFirmware(privateKey: KeyObject, f: SignedFirmware): string {
  return sign(null, Buffer.from(signedText(f), 'utf8'), privateKey).toString('base64');
}

/** Whether `signature` (base64) is a valid Ed25519 signature of the firmware's text under `publicKey`. */
export function verifyFirmware(publicKey: KeyObject, f: SignedFirmware, signature: string): boolean {
  const bytes = strictBase64(signature, ED25519_SIGNATURE_BYTES);
  if (!bytes) return false;
  try {
    return verify(null, Buffer.from(signedText(f), 'utf8'), publicKey, bytes);
  } catch {
    return false;
  }
}
