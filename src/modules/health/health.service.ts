// Health: liveness (the process answers) and readiness (the database answers in time). A database that
// hangs is as unready as one that refuses, so the check has its own deadline.
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../platform/errors.js';
import { pingDatabase } from './health.repo.js';

const READY_TIMEOUT_MS = 2_000;

export class HealthService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: string,
  ) {}

  async readiness(): Promise<{ status: 'ready'; database: string }> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    });
    try {
      await Promise.race([pingDatabase(this.db), deadline]);
    } catch (err) {
      throw new AppError('DATABASE_UNAVAILABLE', 'Database is not reachable', { cause: err });
    } finally {
      clearTimeout(timer);
    }
    return { status: 'ready', database: this.dialect };
  }
}
