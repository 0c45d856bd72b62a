// A software WebAuthn authenticator for API tests: it answers registration and sign-in options the way a
// security key does (attestation "none", ES256 keys, a signature counter), so the server's real
// verification (@simplewebauthn/server) runs on real signatures. It stands at the boundary the browser
// and the key would; the e2e test uses Chromium's virtual authenticator instead.
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { AuthenticationResponseJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoCBOR } from '@simplewebauthn/server/helpers';

interface Credential {
  id: string;
  key: KeyObject;
  counter: number;
  rpId: string;
  userHandle: string;
}

const b64url = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

export interface CreationOptions {
  challenge: string;
  rp: { id?: string };
  user: { id: string };
}
export interface RequestOptions {
  challenge: string;
  rpId?: string;
  allowCredentials?: Array<{ id: string }>;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  /** Whether the "user" verifies (PIN or biometrics); off, the flags say presence only. */
  userVerified = true;
  /** Added to the counter per use; 0 models authenticators that keep no counter. */
  counterStep = 1;

  constructor(readonly origin: string) {}

  register(options: CreationOptions): RegistrationResponseJSON {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cose = isoCBOR.encode(
      new Map<number, number | Uint8Array>([
        [1, 2], // kty: EC2
        [3, -7], // alg: ES256
        [-1, 1], // crv: P-256
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const rawId = randomBytes(32);
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const credential: Credential = { id: b64url(rawId), key: privateKey, counter: 0, rpId, userHandle: options.user.id };
    const idLength = Buffer.alloc(2);
    idLength.writeUInt16BE(rawId.length);
    const authData = Buffer.concat([this.authDataHead(rpId, AT, credential), Buffer.alloc(16), idLength, rawId, cose]);
    const attestationObject = isoCBOR.encode(new Map<string, unknown>([['fmt', 'none'], ['attStmt', new Map()], ['authData', authData]]) as never);
    this.credentials.push(credential);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON: this.clientData('webauthn.create', options.challenge), attestationObject: b64url(attestationObject), transports: ['usb'] },
      clientExtensionResults: {},
    };
  }

  /** Signs the options' challenge with the first allowed credential it holds (or its first, when none is named). */
  assert(options: RequestOptions, overrides: { credential?: Credential; origin?: string } = {}): AuthenticationResponseJSON {
    const allowed = options.allowCredentials?.map((c) => c.id);
    const credential = overrides.credential ?? this.credentials.find((c) => !allowed?.length || allowed.includes(c.id));
    if (!credential) throw new Error('no matching credential');
    credential.counter += this.counterStep;
    const authData = this.authDataHead(options.rpId ?? credential.rpId, 0, credential);
    const clientDataJSON = this.clientData('webauthn.get', options.challenge, overrides.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(Buffer.from(clientDataJSON, 'base64url'))]), credential.key);
    return {
      id: credential.id,
      rawId: credential.id,
      type: 'public-key',
      response: { clientDataJSON, authenticatorData: b64url(authData), signature: b64url(signature), userHandle: credential.userHandle },
      clientExtensionResults: {},
    };
  }

  private authDataHead(rpId: string, extraFlags: number, credential: Credential): Buffer {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(credential.counter);
    return Buffer.concat([sha256(rpId), Buffer.from([UP | (this.userVerified ? UV : 0) | extraFlags]), counter]);
  }

  private clientData(type: string, challenge: string, origin = this.origin): string {
    return b64url(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
  }
}
