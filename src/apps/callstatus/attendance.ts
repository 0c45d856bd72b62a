// Attendance from the time-tracking system (callstatus.md §3, §4): stored per user, never touching the
// lights or phone_active. Personnel numbers match with `~` and white space removed on both sides.
import { sql, type Kysely } from 'kysely';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import type { Clock } from '../../platform/clock.js';
import { AppError } from '../../platform/errors.js';
import type { Page, PageRequest } from '../../platform/paging.js';
import type { CallstatusDatabase } from './schema.js';

export const ATTENDANCE_VALUES = ['anwesend', 'abwesend', 'homeoffice'] as const;
export type Attendance = (typeof ATTENDANCE_VALUES)[number];

/** `~12 34` → `1234`. */
const BY_DISPLAY_NAME = keyset([keyColumn('u.display_name', 'text'), keyColumn('u.id', 'int4')]);

export const normalizePersonalNr = (value: string) => value.replace(/[~\s]/g, '');

export class AttendanceService {
  constructor(
    private readonly db: Kysely<CallstatusDatabase>,
    private readonly clock: Clock,
  ) {}

  /** Checks the body as the spec's error rows say: 400 missing, 400 not allowed. */
  static parseStatus(body: unknown): Attendance {
    const status = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).status : undefined;
    if (status === undefined || status === null || status === '') throw new AppError('VALIDATION_ERROR', 'Request body must be a JSON object with "status"');
    if (typeof status !== 'string' || !(ATTENDANCE_VALUES as readonly string[]).includes(status)) {
      throw new AppError('VALIDATION_ERROR', `"status" must be one of ${ATTENDANCE_VALUES.join(', ')}`);
    }
    return status as Attendance;
  }

  async set(personalNr: string, status: Attendance): Promise<{ ok: true; user: string; status: Attendance }> {
    const wanted = normalizePersonalNr(personalNr);
    const user = wanted
      ? await this.db
          .selectFrom('callstatus_users as u')
          .select(['u.id', 'u.display_name'])
          .where(sql<string>`regexp_replace(u.personal_nr, '[~[:space:]]', '', 'g')`, '=', wanted)
          .where('u.active', '=', true)
          .where((eb) => eb.exists(eb.selectFrom('callstatus_assignments as a').select('a.id').whereRef('a.user_id', '=', 'u.id')))
          .orderBy('u.id')
          .executeTakeFirst()
      : undefined;
    if (!user) throw new AppError('NOT_FOUND', `No active user with personnel number ${personalNr}`);
    await this.db
      .insertInto('callstatus_state')
      .values({ user_id: user.id, attendance: status, updated_at: this.clock.now() })
      .onConflict((oc) => oc.column('user_id').doUpdateSet({ attendance: status, updated_at: this.clock.now() }))
      .execute();
    return { ok: true, user: user.display_name, status };
  }

  /** Active users by display name, with `unbekannt` for no attendance yet. */
  async list(page: PageRequest): Promise<Page<{ user: string; personal_nr: string; status: string }>> {
    const query = this.db
      .selectFrom('callstatus_users as u')
      .leftJoin('callstatus_state as s', 's.user_id', 'u.id')
      .select(['u.display_name', 'u.personal_nr', 's.attendance'])
      .where('u.active', '=', true);
    const rows = toPage(await keysetPage(query, BY_DISPLAY_NAME, page).execute(), page.limit);
    return { items: rows.items.map((r) => ({ user: r.display_name, personal_nr: r.personal_nr, status: r.attendance || 'unbekannt' })), next: rows.next };
  }
}
