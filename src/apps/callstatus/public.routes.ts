// The spec's endpoints (callstatus.md §4), to the letter: plain-text call outcomes, always HTTP 200;
// JSON attendance with the 400/400/404/200 rules.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import type { AttendanceService } from './attendance.js';
import { AttendanceService as Attendance, ATTENDANCE_VALUES } from './attendance.js';
import { unknownExtension, type CallEvent, type CallEvents } from './call-events.js';

const USAGE = `Call and attendance status service

GET|POST /{extension}/callstart   a call started on the extension: present users' lights show phone_active
GET|POST /{extension}/callend     the call ended: lights back to available (anwesend) or homeoffice
POST /api/attendance/{personal_nr}  JSON {"status": "${ATTENDANCE_VALUES.join('" | "')}"}
GET  /api/attendance              attendance of all active users
Admin API: /api/admin/* (Bearer CALLSTATUS_ADMIN_TOKEN); OpenAPI: /api/openapi.json
`;

const ATTENDANCE_LIST = allByDefault('by display name, then user id');
const attendanceSchema = z.object({ user: z.string(), personal_nr: z.string(), status: z.string().describe('anwesend, abwesend, homeoffice or unbekannt') });

/** Extensions are echoed back in the text; anything longer is not an extension. */
const MAX_EXTENSION = 64;

export const publicRoutes: FastifyPluginAsyncZod<{ calls: CallEvents; attendance: AttendanceService }> = async (app, { calls, attendance }) => {
  app.get('/', { schema: { summary: 'Usage text', produces: ['text/plain'] } }, async (_request, reply) => reply.type('text/plain; charset=utf-8').send(USAGE));

  for (const event of ['callstart', 'callend'] as const satisfies readonly CallEvent[]) {
    app.route({
      method: ['GET', 'POST'],
      url: `/:extension/${event}`,
      // Whatever the extension holds (NUL included), the answer is 200 text: the spec is the law here.
      config: { rawText: true },
      schema: {
        summary: event === 'callstart' ? 'A call started on the extension' : 'A call ended on the extension',
        description:
          'Always HTTP 200 with a plain-text outcome: `Unknown extension: …`, `Ignored: …` (user not present; nothing changes) or `OK: …`. The light request\'s result does not change the answer; it is in the activity log. ' +
          'Per the specification this holds for any extension, so one with a NUL, an invalid percent-escape or over 100 characters is `Unknown extension: …` too (not the 400 other endpoints give); control characters are shown escaped (`\\u0000`).',
        params: z.object({ extension: z.string() }),
        produces: ['text/plain'],
      },
      handler: async (request, reply) => {
        const extension = request.params.extension.slice(0, MAX_EXTENSION);
        reply.type('text/plain; charset=utf-8');
        return calls.handle(extension, event);
      },
    });
  }

  app.post(
    '/api/attendance/:personal_nr',
    {
      schema: {
        summary: 'Set the attendance of the user with this personnel number',
        description: `Body \`{"status": one of ${ATTENDANCE_VALUES.join(', ')}}\`. Personnel numbers match with \`~\` and spaces removed on both sides. Changes no light and not phone_active. 400 missing body or status, 400 other status, 404 no active user with an assignment and that number.`,
        params: z.object({ personal_nr: z.string().max(64) }),
        response: { 200: z.object({ ok: z.literal(true), user: z.string(), status: z.enum(ATTENDANCE_VALUES) }) },
      },
    },
    async (request) => attendance.set(request.params.personal_nr, Attendance.parseStatus(request.body)),
  );

  app.get(
    '/api/attendance',
    {
      schema: {
        summary: 'Attendance of all active users, by display name',
        description: listDescription(ATTENDANCE_LIST),
        querystring: z.object(pageQuery(ATTENDANCE_LIST)),
        response: { 200: listResponse(attendanceSchema, ATTENDANCE_LIST) },
      },
    },
    async (request, reply) => sendList(request, reply, ATTENDANCE_LIST, { item: attendanceSchema, fetch: (page) => attendance.list(page), dto: (a: z.infer<typeof attendanceSchema>) => a }),
  );
};

/** Call-endpoint URLs the router cannot take (`/%FF/callstart`, a 5,000-character extension): still 200 text. */
export function callAnswerForUnroutable(request: { method: string; url: string }): string | undefined {
  const match = /^\/([^/?]*)\/(?:callstart|callend)(?:\?|$)/.exec(request.url);
  if (!match || (request.method !== 'GET' && request.method !== 'POST')) return undefined;
  let extension = match[1]!;
  try {
    extension = decodeURIComponent(extension);
  } catch {
    // Shown as it came: the escapes are the only spelling it has.
  }
  return unknownExtension(extension.slice(0, MAX_EXTENSION));
}
