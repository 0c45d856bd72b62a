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
}

export interface InstallerPackage {
  platform: 'windows';
  sha256: string;
  size: number;
  created_at: string;
}

/** The server's own pattern for versions, so a typo is caught before megabytes are sent. */
export const VERSION_PATTERN = '[0-9A-Za-z][0-9A-Za-z.+_\\-]{0,63}';

export const shortHash = (sha256: string) => sha256.slice(0, 12);
