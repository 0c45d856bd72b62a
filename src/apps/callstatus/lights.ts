// Sets a user's status lights and writes one activity row per light request (callstatus.md §1, contract
// §12): every assigned segment gets the color rule of the new status (200/200/200, no effect, when the
// rule is missing). A light failure is recorded, never thrown.
import type { Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Logger } from '../../platform/logger.js';
import { lightResultLabel, type CallstatusMetrics } from './callstatus-metrics.js';
import type { CallstatusDatabase } from './schema.js';
import type { WledClient } from './wled-client.js';

export const DEFAULT_COLOR = { r: 200, g: 200, b: 200, effect: '' } as const;

export interface LightUser {
  id: number;
  displayName: string;
  attendance: string;
}

export class Lights {
  constructor(
    private readonly db: Kysely<CallstatusDatabase>,
    private readonly wled: WledClient,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly metrics?: CallstatusMetrics,
  ) {}

  /** Sends `status`'s color to every segment assigned to the user; resolves once all are logged. */
  async show(user: LightUser, status: string, action: 'phone_active' | 'phone_end'): Promise<void> {
    const [rule, targets] = await Promise.all([
      this.db.selectFrom('callstatus_colors').select(['r', 'g', 'b', 'effect']).where('status_key', '=', status).executeTakeFirst(),
      this.db
        .selectFrom('callstatus_assignments as a')
        .innerJoin('callstatus_devices as d', 'd.id', 'a.device_id')
        .select(['d.hostname', 'a.segment'])
        .where('a.user_id', '=', user.id)
        .orderBy('a.id')
        .execute(),
    ]);
    const color = rule ?? DEFAULT_COLOR;
    await Promise.all(
      targets.map(async (target) => {
        const end = this.metrics?.lightSeconds.startTimer();
        const sent = await this.wled.set({ hostname: target.hostname, segment: target.segment, rgb: [color.r, color.g, color.b], effect: color.effect });
        end?.();
        this.metrics?.lights.inc({ result: lightResultLabel(sent.result) });
        await this.db
          .insertInto('callstatus_activity')
          .values({
            time: this.clock.now(),
            user_id: user.id,
            user_name: user.displayName,
            attendance: user.attendance,
            new_status: status,
            action,
            request: sent.request,
            result: sent.result,
          })
          .execute()
          .catch((err: unknown) => this.logger.error({ err }, 'activity log write failed'));
      }),
    );
  }
}
