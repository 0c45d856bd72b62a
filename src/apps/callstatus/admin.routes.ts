// The admin API under /api/admin (contract §12): users, light devices, assignments and color rules, the
// activity log and the current states. Behind `Authorization: Bearer <CALLSTATUS_ADMIN_TOKEN>`; while
// the variable is unset the whole API answers 404, so an unconfigured service exposes nothing.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { keyColumn, keyset, keysetPage, newestFirst, toPage } from '../../db/keyset.js';
import { idRefSchema } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { AppError } from '../../platform/errors.js';
import { registerCrud } from './admin-crud.js';
import type { CallstatusDatabase } from './schema.js';

const digest = (value: string) => createHash('sha256').update(value).digest();
const text = (max: number) => z.string().trim().max(max);
const byte = z.number().int().min(0).max(255);
/** `host`, `host:port`, `[v6]:port`: nothing that could turn `http://{hostname}/json/state` into another URL. */
const hostname = z
  .string()
  .trim()
  .regex(/^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/, 'must be a host name or IP address, optionally with :port');

// Optional fields have no zod default: the columns' defaults fill them on create, and a PUT that
// leaves them out must keep what is stored (a zod default would reset them).
const userBody = z.object({
  directory_id: text(200).optional().describe("Default ''"),
  display_name: text(200).min(1),
  extension: text(64).optional().describe("Default ''"),
  personal_nr: text(64).optional().describe("Default ''"),
  active: z.boolean().optional().describe('Default true'),
});
const deviceBody = z.object({ name: text(200).min(1), hostname });
const assignmentBody = z.object({ user_id: idRefSchema, device_id: idRefSchema, segment: z.number().int().min(0).max(255) });
const colorBody = z.object({ status_key: text(64).min(1), r: byte, g: byte, b: byte, effect: text(64).optional().describe("Default '' (solid)") });
/** The stored row: every field present. */
const withId = <T extends z.ZodObject>(body: T) => body.required().extend({ id: z.number().int() });

const ACTIVITY_LIST = newestFirstList(100);
const NEWEST_FIRST = newestFirst('time', 'id');
const activitySchema = z.object({ time: z.string(), user: z.string(), attendance: z.string(), new_status: z.string(), action: z.string(), request: z.string(), result: z.string() });
const STATE_LIST = allByDefault('by display name, then user id');
const BY_DISPLAY_NAME = keyset([keyColumn('u.display_name', 'text'), keyColumn('s.user_id', 'int4')]);
const stateSchema = z.object({ user_id: z.number().int(), user: z.string(), attendance: z.string(), collaboration_status: z.string(), phone_active: z.number().int(), updated_at: z.string() });

export const adminRoutes: FastifyPluginAsyncZod<{ db: Kysely<CallstatusDatabase>; adminToken: string | undefined }> = async (app, { db, adminToken }) => {
  const expected = adminToken ? digest(adminToken) : undefined;
  app.addHook('onRequest', async (request) => {
    if (!expected) throw new AppError('NOT_FOUND', 'The admin API is disabled: CALLSTATUS_ADMIN_TOKEN is not set');
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    // Compared as digests: equal length, constant time, whatever was sent.
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new AppError('UNAUTHORIZED', 'Admin token required: Authorization: Bearer <CALLSTATUS_ADMIN_TOKEN>', { headers: { 'www-authenticate': 'Bearer realm="callstatus"' } });
    }
  });

  registerCrud(app, db, { path: '/users', table: 'callstatus_users', noun: 'user', body: userBody, row: withId(userBody) });
  registerCrud(app, db, { path: '/devices', table: 'callstatus_devices', noun: 'device', body: deviceBody, row: withId(deviceBody) });
  registerCrud(app, db, {
    path: '/assignments',
    table: 'callstatus_assignments',
    noun: 'assignment',
    body: assignmentBody,
    row: withId(assignmentBody),
    conflict: 'This user is already assigned to that segment of that device',
    missingReference: 'user_id or device_id does not exist',
  });
  registerCrud(app, db, {
    path: '/colors',
    table: 'callstatus_colors',
    noun: 'color rule',
    body: colorBody,
    row: withId(colorBody),
    conflict: 'A color rule for this status_key exists already',
  });

  app.get(
    '/activity',
    {
      schema: {
        summary: 'Activity log, newest first',
        description: listDescription(ACTIVITY_LIST),
        tags: ['admin'],
        security: [{ bearer: [] }],
        querystring: z.object(pageQuery(ACTIVITY_LIST)),
        response: { 200: listResponse(activitySchema, ACTIVITY_LIST) },
      },
    },
    async (request, reply) =>
      sendList(request, reply, ACTIVITY_LIST, {
        item: activitySchema,
        fetch: async (page) => toPage(await keysetPage(db.selectFrom('callstatus_activity').selectAll(), NEWEST_FIRST, page).execute(), page.limit),
        dto: (r) => ({ time: r.time.toISOString(), user: r.user_name, attendance: r.attendance, new_status: r.new_status, action: r.action, request: r.request, result: r.result }),
      }),
  );

  app.get(
    '/state',
    {
      schema: {
        summary: 'Current state per user',
        description: listDescription(STATE_LIST),
        tags: ['admin'],
        security: [{ bearer: [] }],
        querystring: z.object(pageQuery(STATE_LIST)),
        response: { 200: listResponse(stateSchema, STATE_LIST) },
      },
    },
    async (request, reply) => {
      const states = db
        .selectFrom('callstatus_state as s')
        .innerJoin('callstatus_users as u', 'u.id', 's.user_id')
        .select(['s.user_id', 'u.display_name', 's.attendance', 's.collaboration_status', 's.phone_active', 's.updated_at']);
      return sendList(request, reply, STATE_LIST, {
        item: stateSchema,
        fetch: async (page) => toPage(await keysetPage(states, BY_DISPLAY_NAME, page).execute(), page.limit),
        dto: (r) => ({ user_id: r.user_id, user: r.display_name, attendance: r.attendance, collaboration_status: r.collaboration_status, phone_active: r.phone_active, updated_at: r.updated_at.toISOString() }),
      });
    },
  );
};
