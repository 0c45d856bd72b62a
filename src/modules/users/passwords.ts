// Password policy and hashing. bcrypt reads at most 72 bytes, so longer passwords are refused rather
// than silently truncated (two passwords sharing their first 72 bytes would otherwise be equal).
import bcrypt from 'bcrypt';
import { z } from 'zod';

export const DEFAULT_BCRYPT_ROUNDS = 12;
const MAX_PASSWORD_BYTES = 72;

export const passwordSchema = z
  .string()
  .refine((v) => [...v].length >= 6, 'must be at least 6 characters')
  .refine((v) => Buffer.byteLength(v, 'utf8') <= MAX_PASSWORD_BYTES, 'must be at most 72 bytes (UTF-8)')
  .describe('6 characters to 72 UTF-8 bytes');

export class PasswordHasher {
  /** A real hash to compare against when the user does not exist, so both cases take the same time. */
  private readonly decoy: Promise<string>;

  constructor(private readonly rounds = DEFAULT_BCRYPT_ROUNDS) {
    this.decoy = bcrypt.hash('decoy password for timing', rounds);
  }

  hash(password: string): Promise<string> {
    return bcrypt.hash(password, this.rounds);
  }

  /**
   * Compares against `hash`, or against the decoy when there is none (false then). A password longer
   * than bcrypt reads can never be ours: bcrypt would compare only its first 72 bytes.
   */
  async verify(password: string, hash: string | undefined): Promise<boolean> {
    const acceptable = Buffer.byteLength(password, 'utf8') <= MAX_PASSWORD_BYTES;
    const matches = await bcrypt.compare(password, acceptable && hash !== undefined ? hash : await this.decoy);
    return acceptable && hash !== undefined && matches;
  }
}
