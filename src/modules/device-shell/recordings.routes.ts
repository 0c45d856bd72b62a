// The device sessions and their recordings (issue 59): GET /device-sessions lists shells and transfers,
// newest first, within the caller's customers; GET /device-sessions/{id}/recording gives an admin the
// asciicast of a shell (gunzipped on the way, or as stored with Content-Encoding: gzip when the client
// takes gzip). Reading a recording is audited: it shows what was on a customer's machine.
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { DeviceSessionKind } from '../../db/schema.js';
import { callerOf } from '../../http/auth.js';
import { listDescription, listResponse, newestFirstList, pageQuery, sendList } from '../../http/pagination.js';
import { AppError } from '../../platform/errors.js';
import { agentIdSchema } from '../agents/agents.schemas.js';
import type { AuditService } from '../audit/audit.service.js';
import { actorOf, assertInScope, scopeOf } from '../auth/caller.js';
import * as repo from '../device-sessions/device-sessions.repo.js';
import type { BlobStorage } from '../firmware/blob-store.js';

export interface RecordingRouteOptions {
  db: Parameters<typeof repo.findSession>[0];
  blobs: BlobStorage;
  audit: AuditService;
}

const LIST = newestFirstList(50, 'newest first (start time, then id, descending)');
const tags = ['devices'];

const KINDS = ['shell', 'download', 'upload', 'desktop', 'rdp', 'web'] as const satisfies readonly DeviceSessionKind[];

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());
const count = (value: string | number | null) => (value === null ? null : Number(value));

export const deviceSessionSchema = z
  .object({
    id: z.string(),
    kind: z.enum(KINDS),
    agent_id: z.string(),
    agent_name: z.string().describe('The agent\'s name when the session started'),
    customer_id: z.number().int().nullable(),
    user_id: z.number().int().nullable(),
    actor: z.string().describe('Who opened it, as the audit log names actors'),
    started_at: z.string(),
    ended_at: z.string().nullable().describe('Null while the session runs'),
    end_reason: z.string().nullable().describe('closed, exited, idle, time-limit, agent-gone, failed: …'),
    bytes_in: z.number().int().describe('Bytes toward the device (keystrokes, an upload)'),
    bytes_out: z.number().int().describe('Bytes from the device (output, a download)'),
    has_recording: z.boolean(),
    recording_bytes: z.number().int().nullable().describe('Size of the gzipped asciicast'),
  })
  .meta({ id: 'DeviceSession' });
type DeviceSessionDto = z.infer<typeof deviceSessionSchema>;

function toDto(row: repo.DeviceSessionRow): DeviceSessionDto {
  return {
    id: row.id,
    kind: row.kind,
    agent_id: row.agent_id,
    agent_name: row.agent_name,
    customer_id: row.customer_id,
    user_id: row.user_id,
    actor: row.actor,
    started_at: iso(row.started_at)!,
    ended_at: iso(row.ended_at),
    end_reason: row.end_reason,
    bytes_in: Number(row.bytes_in),
    bytes_out: Number(row.bytes_out),
    has_recording: row.recording_sha256 !== null,
    recording_bytes: count(row.recording_bytes),
  };
}

export const recordingRoutes: FastifyPluginAsyncZod<RecordingRouteOptions> = async (app, { db, blobs, audit }) => {
  app.get(
    '/device-sessions',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listDeviceSessions',
        summary: 'Device shells and file transfers, newest first, with whether each shell is recorded',
        description: listDescription(LIST, 'Sessions of agents within the caller\'s customers. Filter by `agent_id`, `user_id` (who opened it) and `kind`.'),
        tags,
        querystring: z.object({
          agent_id: agentIdSchema.optional(),
          user_id: z.coerce.number().int().min(1).max(2 ** 31 - 1).optional(),
          kind: z.enum(KINDS).optional(),
          ...pageQuery(LIST),
        }),
        response: { 200: listResponse(deviceSessionSchema, LIST) },
      },
    },
    async (request, reply) => {
      const { agent_id, user_id, kind } = request.query;
      const filter = { agentId: agent_id, userId: user_id, kind, scope: scopeOf(callerOf(request)) };
      return sendList(request, reply, LIST, { item: deviceSessionSchema, dto: toDto, fetch: (page) => repo.listSessions(db, filter, page) });
    },
  );

  app.get(
    '/device-sessions/:id/recording',
    {
      config: { access: 'admin' },
      schema: {
        operationId: 'getDeviceSessionRecording',
        summary: 'The recording of a device shell, as an asciicast v2 file (admins only)',
        description:
          'The shell\'s output and resizes as asciicast v2 (`application/x-asciicast`: a JSON header line, then `[seconds, "o", text]` and `[seconds, "r", "COLSxROWS"]` lines); keystrokes are never recorded. ' +
          'Sent gzipped with `Content-Encoding: gzip` when the request accepts gzip, else plain. 404 when the session is outside the caller\'s customers, not a shell, or has no recording (recording was off, or it passed `device_recording_retention_days`). Each download is audited (`device.recording.download`).',
        tags,
        params: z.object({ id: z.string().min(1).max(255) }),
        response: {
          200: { description: 'The asciicast v2 file', content: { 'application/x-asciicast': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } } },
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const row = await repo.findSession(db, request.params.id);
      if (!row) throw new AppError('NOT_FOUND', 'Device session not found');
      assertInScope(caller, row.customer_id, 'Device session');
      const stored = row.recording_sha256 ? await blobs.open(row.recording_sha256) : undefined;
      if (!stored) throw new AppError('NOT_FOUND', 'This session has no recording (recording was off, or it was deleted after the retention period)');
      audit.recordSoon(
        { ...actorOf(caller), action: 'device.recording.download', method: 'GET', path: `/api/v1/device-sessions/${row.id}/recording`, status_code: 200, ip: request.ip ?? '', target: { label: `agent ${row.agent_name}: shell recording`, customerId: row.customer_id } },
        (err) => request.log.error({ err }, 'recording download audit entry failed'),
      );
      reply.header('content-type', 'application/x-asciicast');
      reply.header('content-disposition', `attachment; filename="${row.id}.cast"`);
      reply.header('vary', 'accept-encoding');
      if (/\bgzip\b/.test(String(request.headers['accept-encoding'] ?? ''))) {
        reply.header('content-encoding', 'gzip');
        reply.header('content-length', stored.size);
        return reply.send(stored.stream);
      }
      // pipeline: a read error of the stored file ends the answer instead of leaving it hanging.
      return reply.send(pipeline(stored.stream, createGunzip(), () => undefined));
    },
  );
};
