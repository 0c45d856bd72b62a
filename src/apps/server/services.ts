// The services of the RMM server, built once from the database and the server's secrets. The app, the
// start-up code (first admin) and the admin CLI all use the same ones.
import type { DbHandle } from '../../db/create-db.js';
import { ApiKeyService } from '../../modules/api-keys/api-keys.service.js';
import { AuditService } from '../../modules/audit/audit.service.js';
import { CustomerService } from '../../modules/customers/customers.service.js';
import { PasskeyRecovery } from '../../modules/passkeys/passkey-recovery.js';
import { SettingsService } from '../../modules/settings/settings.service.js';
import { PasswordHasher } from '../../modules/users/passwords.js';
import { UserService } from '../../modules/users/users.service.js';
import type { Clock } from '../../platform/clock.js';
import { SecretBox } from '../../platform/secret-box.js';
import type { ServerSecrets } from '../../platform/server-secrets.js';

export interface CoreServices {
  box: SecretBox;
  passwords: PasswordHasher;
  apiKeys: ApiKeyService;
  users: UserService;
  customers: CustomerService;
  audit: AuditService;
  settings: SettingsService;
  passkeys: PasskeyRecovery;
}

export function createCoreServices(
  db: DbHandle,
  secrets: ServerSecrets,
  clock: Clock,
  options: { bcryptRounds?: number } = {},
): CoreServices {
  const box = new SecretBox(secrets.encryptionKey);
  const passwords = new PasswordHasher(options.bcryptRounds);
  const apiKeys = new ApiKeyService(db.db, clock);
  return {
    box,
    passwords,
    apiKeys,
    users: new UserService(db.db, passwords),
    customers: new CustomerService(db.db, () => apiKeys.forgetCachedKeys()),
    audit: new AuditService(db.db, clock),
    settings: new SettingsService(db.db, box, apiKeys, clock),
    passkeys: new PasskeyRecovery(db.db),
  };
}
