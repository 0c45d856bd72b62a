// Shapes of the firmware and installer answers (contract §9).
import type { ApiBody, ApiItem } from '../api/api-types';

export type Firmware = ApiItem<'/firmware'>;
export type InstallerPackage = ApiBody<'/installer/upload', 'post'>;

/** The server's own pattern for versions, so a typo is caught before megabytes are sent. */
export const VERSION_PATTERN = '[0-9A-Za-z][0-9A-Za-z.+_\\-]{0,63}';

/** An Ed25519 signature in standard base64 (64 bytes: 86 characters and two padding signs). */
export const SIGNATURE_PATTERN = '\\s*[A-Za-z0-9+\\/]{86}==\\s*';

export const shortHash = (sha256: string) => sha256.slice(0, 12);
