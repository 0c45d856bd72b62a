// Shapes of the firmware and installer answers (contract §9), which api/types.ts does not cover.
import type { Platform } from '../api/types';

export interface Firmware {
  id: number;
  version: string;
  platform: Platform;
  /** Lowercase hex. */
  sha256: string;
  size: number;
  created_at: string;
  /** The detached Ed25519 signature sent with the upload; null unsigned, absent from servers without signatures. */
  signature?: string | null;
}

export interface InstallerPackage {
  platform: 'windows';
  sha256: string;
  size: number;
  created_at: string;
}

/** The server's own pattern for versions, so a typo is caught before megabytes are sent. */
export const VERSION_PATTERN = '[0-9A-Za-z][0-9A-Za-z.+_\\-]{0,63}';

/** An Ed25519 signature in standard base64 (64 bytes: 86 characters and two padding signs). */
export const SIGNATURE_PATTERN = '\\s*[A-Za-z0-9+\\/]{86}==\\s*';

export const shortHash = (sha256: string) => sha256.slice(0, 12);
