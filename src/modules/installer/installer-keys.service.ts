// Per-customer installer keys (issue 30): the agent key in the rmm-agent.json of packages downloaded for a
// customer. Made on first use, an ordinary agent key scoped to the customer (its devices register into
// it, and it reads only that customer's software-update lists), kept sealed because every download
// needs it in clear text. People see its hint only; rotating shows the new key once.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { SecretBox } from '../../platform/secret-box.js';
import { generateApiKey, hashApiKey, keyHint } from '../api-keys/key-format.js';
import { assertInScope, type Caller } from '../auth/caller.js';
import { findCustomer } from '../customers/customers.repo.js';
import * as repo from './installer-keys.repo.js';

export const INSTALLER_KEY_NAME = 'Installer key';

export interface InstallerKeyView {
  customer_id: number;
  api_key_id: number | null;
  key_hint: string | null;
  created_at: Date | null;
}

const customerNotFound = () => new AppError('NOT_FOUND', 'Customer not found');

export class InstallerKeyService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly box: SecretBox,
    private readonly clock: Clock,
  ) {}

  /** The customer's installer key in clear text, made on first use; 404 for an unknown customer. Callers check scope. */
  async keyFor(customerId: number): Promise<string> {
    const existing = await repo.findInstallerKey(this.db, customerId);
    if (existing) return this.box.open(existing.sealed_key);
    return this.db.transaction().execute(async (trx) => {
      if (!(await repo.lockCustomer(trx, customerId))) throw customerNotFound();
      // Another download may have made it while this one waited for the lock.
      const made = await repo.findInstallerKey(trx, customerId);
      if (made) return this.box.open(made.sealed_key);
      const key = generateApiKey();
      await repo.insertInstallerKey(trx, this.keyValues(customerId, key));
      return key;
    });
  }

  /** The hint of the customer's installer key; all null until the first download for it. */
  async view(caller: Caller, customerId: number): Promise<InstallerKeyView> {
    await this.customerInScope(caller, customerId);
    const row = await repo.findInstallerKey(this.db, customerId);
    return { customer_id: customerId, api_key_id: row?.api_key_id ?? null, key_hint: row?.key_hint ?? null, created_at: row?.created_at ?? null };
  }

  /**
   * A new installer key for the customer's future packages, returned once. The previous one is not
   * revoked: devices set up with it keep working. It stays listed with the customer's keys under a name
   * that says it was replaced, where deleting it revokes it.
   */
  async rotate(caller: Caller, customerId: number): Promise<InstallerKeyView & { key: string }> {
    await this.customerInScope(caller, customerId);
    const key = generateApiKey();
    const now = this.clock.now();
    const row = await this.db.transaction().execute(async (trx) => {
      if (!(await repo.lockCustomer(trx, customerId))) throw customerNotFound();
      const previous = await repo.findInstallerKey(trx, customerId);
      if (previous) await repo.renameApiKey(trx, previous.api_key_id, `${INSTALLER_KEY_NAME} (replaced ${now.toISOString().slice(0, 10)})`);
      return repo.insertInstallerKey(trx, this.keyValues(customerId, key));
    });
    return { customer_id: customerId, api_key_id: row.api_key_id, key_hint: row.key_hint, created_at: row.created_at, key };
  }

  private keyValues(customerId: number, key: string) {
    return { customerId, name: INSTALLER_KEY_NAME, keyHash: hashApiKey(key), keyHint: keyHint(key), sealedKey: this.box.seal(key), createdAt: this.clock.now() };
  }

  private async customerInScope(caller: Caller, customerId: number): Promise<void> {
    assertInScope(caller, customerId, 'Customer');
    if (!(await findCustomer(this.db, customerId))) throw customerNotFound();
  }
}
