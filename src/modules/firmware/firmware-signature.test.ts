// The signature format: what is signed binds platform, version and SHA-256; keys and signatures are
// accepted only in their one documented form.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isSignatureText, parsePublicKey, publicKeyBase64, signedText, signFirmware, verifyFirmware } from './firmware-signature.js';

const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const firmware = { platform: 'linux', version: '2.4.0', sha256: 'AB'.repeat(32) };

describe('firmware signatures', () => {
  it('sign the documented text, with the SHA-256 in lowercase', () => {
    expect(signedText(firmware)).toBe(`rmm-firmware-signature-v1\nplatform=linux\nversion=2.4.0\nsha256=${'ab'.repeat(32)}\n`);
  });

  it('verify only for the same platform, version and SHA-256, and only with the signing key', () => {
    const signature = signFirmware(privateKey, firmware);
    expect(isSignatureText(signature)).toBe(true);
    expect(verifyFirmware(publicKey, firmware, signature)).toBe(true);
    expect(verifyFirmware(publicKey, { ...firmware, sha256: firmware.sha256.toLowerCase() }, signature)).toBe(true);
    expect(verifyFirmware(publicKey, { ...firmware, platform: 'windows' }, signature)).toBe(false);
    expect(verifyFirmware(publicKey, { ...firmware, version: '2.4.1' }, signature)).toBe(false);
    expect(verifyFirmware(publicKey, { ...firmware, sha256: 'cd'.repeat(32) }, signature)).toBe(false);
    expect(verifyFirmware(generateKeyPairSync('ed25519').publicKey, firmware, signature)).toBe(false);
    expect(verifyFirmware(publicKey, firmware, Buffer.from(signature, 'base64').toString('base64url'))).toBe(false);
  });

  it('take the public key as base64 of its raw 32 bytes or as PEM, and nothing else', () => {
    const raw = publicKeyBase64(publicKey);
    expect(Buffer.from(raw, 'base64')).toHaveLength(32);
    expect(publicKeyBase64(parsePublicKey(raw))).toBe(raw);
    expect(publicKeyBase64(parsePublicKey(publicKey.export({ type: 'spki', format: 'pem' }) as string))).toBe(raw);
    expect(publicKeyBase64(privateKey)).toBe(raw);
    expect(() => parsePublicKey(raw.slice(0, -4))).toThrow(/raw 32-byte Ed25519 key/);
    expect(() => parsePublicKey('')).toThrow();
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(() => parsePublicKey(rsa)).toThrow(/not an Ed25519 key/);
    expect(isSignatureText('A'.repeat(86) + '==')).toBe(true);
    expect(isSignatureText('A'.repeat(86))).toBe(false);
  });
});
