// Call start and end from the phone system (callstatus.md §3, §4): always a plain-text outcome, never an
// error. Present users (`anwesend`, `homeoffice`) get phone_active set or cleared and their lights
// switched; anyone else is ignored and nothing changes. The answer does not wait for a slow light
// longer than LIGHT_WAIT_MS: the phone system only needs to know the call was taken.
import { sql, type Kysely } from 'kysely';
import type { Clock } from '../../platform/clock.js';
import type { Lights } from './lights.js';
import type { CallstatusDatabase } from './schema.js';
import { callOutcomeLabel, type CallstatusMetrics } from './callstatus-metrics.js';

const PRESENT = new Set(['anwesend', 'homeoffice']);
/** Light requests time out after 3 s; a queued one may take longer, and then finishes in the background. */
const LIGHT_WAIT_MS = 3_500;

export type CallEvent = 'callstart' | 'callend';

/** An extension as echoed in the answer: control characters (NUL included) shown as `\u0000`. */
// eslint-disable-next-line no-control-regex -- control characters are what it escapes
export const printable = (text: string) => text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

export const unknownExtension = (extension: string) => `Unknown extension: ${printable(extension)}`;

export class CallEvents {
  constructor(
    private readonly db: Kysely<CallstatusDatabase>,
    private readonly lights: Lights,
    private readonly clock: Clock,
    private readonly metrics?: CallstatusMetrics,
  ) {}

  /** The answer to a call event; counted by event and outcome. */
  async handle(extension: string, event: CallEvent): Promise<string> {
    const answer = await this.#answer(extension, event);
    this.metrics?.calls.inc({ event, outcome: callOutcomeLabel(answer) });
    return answer;
  }

  async #answer(extension: string, event: CallEvent): Promise<string> {
    // No stored extension holds a NUL (the admin API refuses it), and PostgreSQL cannot compare one.
    if (extension.includes('\u0000')) return unknownExtension(extension);
    // The active user with an assignment for the extension (the first one, should several share it).
    const user = await this.db
      .selectFrom('callstatus_users as u')
      .leftJoin('callstatus_state as s', 's.user_id', 'u.id')
      .select(['u.id', 'u.display_name', sql<string>`coalesce(s.attendance, '')`.as('attendance')])
      .where('u.extension', '=', extension)
      .where('u.active', '=', true)
      .where((eb) => eb.exists(eb.selectFrom('callstatus_assignments as a').select('a.id').whereRef('a.user_id', '=', 'u.id')))
      .orderBy('u.id')
      .executeTakeFirst();
    if (!user) return unknownExtension(extension);
    if (!PRESENT.has(user.attendance)) {
      return `Ignored: ${user.display_name} is ${user.attendance || 'unbekannt'}, not present; nothing changed`;
    }

    const started = event === 'callstart';
    const status = started ? 'phone_active' : user.attendance === 'anwesend' ? 'available' : 'homeoffice';
    await this.db
      .updateTable('callstatus_state')
      .set({ phone_active: started ? 1 : 0, collaboration_status: status, updated_at: this.clock.now() })
      .where('user_id', '=', user.id)
      .execute();
    const lightsDone = this.lights.show({ id: user.id, displayName: user.display_name, attendance: user.attendance }, status, started ? 'phone_active' : 'phone_end');
    await Promise.race([lightsDone, new Promise((resolve) => setTimeout(resolve, LIGHT_WAIT_MS).unref())]);
    return `OK: call ${started ? 'started' : 'ended'} for ${user.display_name}`;
  }
}
