// SHA-256 of a file the user uploads, which the agent checks before the file appears. The browser's
// own digest (crypto.subtle) is fast but takes the whole file at once and exists only on secure pages
// (HTTPS or localhost); larger files (uploads may be 4 GiB) and plain-HTTP consoles are hashed in
// chunks by sha256.ts, with progress.
import { Sha256 } from './sha256';

/** Files up to this size are hashed by the browser in one piece. */
const WHOLE_MAX = 256 * 1024 ** 2;
const CHUNK = 8 * 1024 ** 2;

/** The file's SHA-256 in hex; `progress` gets the bytes hashed so far (chunked hashing only). */
export async function fileSha256(file: Blob, progress: (hashed: number) => void, signal: AbortSignal): Promise<string> {
  // Undefined outside a secure context, whatever the DOM types say.
  const subtle = (globalThis.crypto as { subtle?: SubtleCrypto } | undefined)?.subtle;
  if (subtle && file.size <= WHOLE_MAX) {
    const digest = await subtle.digest('SHA-256', await file.arrayBuffer());
    return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
  }
  const hash = new Sha256();
  for (let offset = 0; offset < file.size; offset += CHUNK) {
    signal.throwIfAborted();
    hash.update(new Uint8Array(await file.slice(offset, offset + CHUNK).arrayBuffer()));
    progress(Math.min(offset + CHUNK, file.size));
  }
  return hash.hex();
}
