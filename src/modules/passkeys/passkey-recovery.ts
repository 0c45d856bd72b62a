// Recovery for a user who lost their passkeys: an operator removes them all (`npm run cli -- user
// remove-passkeys <username>`), which also ends the user's sessions, since a lost key may be in someone
// else's hands. Without passkeys (and TOTP) the password alone signs in again.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { endAllSessions } from '../auth/sessions.repo.js';
import { deleteAllPasskeys } from './passkeys.repo.js';

export class PasskeyRecovery {
  constructor(private readonly db: Kysely<Database>) {}

  async removeAll(userId: number): Promise<number> {
    const removed = await deleteAllPasskeys(this.db, userId);
    await endAllSessions(this.db, userId);
    return removed;
  }
}
