// /agents/{id}/backup and /agents/{id}/backups*: taking configuration backups through the agent, reading
// them (JSON or the XML itself), deleting them and diffing two of them.
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { Agent } from '../agents/agents.service.js';
import {
  BACKUP_LIST,
  backupDiffSchema,
  backupFormatQuery,
  backupParams,
  backupSchema,
  backupWithContentSchema,
  createdBackupSchema,
  deletedSchema,
  diffQuery,
  downloadFileName,
  listBackupsQuery,
  toBackupDto,
} from './backups.schemas.js';
import { MAX_DIFF_CHANGED_LINES } from './backup-diff.js';
import { MAX_BACKUP_BYTES, MAX_DIFF_BYTES, type BackupRow, type BackupService } from './backups.service.js';

const tags = ['backups'];
const MIB = 1024 * 1024;
const scopeNote = "An agent outside the caller's customer scope, and a backup of another agent, are 404.";

/** The JSON backup, or with `format=xml` the configuration itself as a download. */
const singleBackupResponse = {
  200: {
    description: 'The backup with its content; with `format=xml` the configuration XML exactly as stored',
    content: {
      'application/json': { schema: backupWithContentSchema },
      'application/xml': { schema: z.string() },
    },
  },
};

/** JSON with the content, or the configuration itself as an XML download. */
function sendBackup(reply: FastifyReply, { agent, backup }: { agent: Agent; backup: BackupRow }, format: 'json' | 'xml') {
  if (format === 'json') return reply.send({ ...toBackupDto(backup), content: backup.content });
  return reply
    .type('application/xml; charset=utf-8')
    .header('content-disposition', `attachment; filename="${downloadFileName(agent, backup)}"`)
    .send(backup.content);
}

export const backupRoutes: FastifyPluginAsyncZod<{ backups: BackupService }> = async (app, { backups }) => {
  app.post(
    '/agents/:id/backup',
    {
      config: { access: 'write', audit: 'backup.create' },
      schema: {
        summary: "Take a backup of the agent's configuration",
        description:
          `Asks the agent over its WebSocket (waits at most 120 s) and stores the configuration unless the agent already has a backup with the same SHA-256: then 200 with that one and \`created: false\`. ` +
          'Backups are for firewalls: an agent registered with another platform → 400 VALIDATION_ERROR. ' +
          `Not connected → 409 AGENT_NOT_CONNECTED; no answer → 504 AGENT_TIMEOUT; an agent error, no content, or more than ${MAX_BACKUP_BYTES / MIB} MiB → 502 AGENT_ERROR. ${scopeNote}`,
        tags,
        params: agentParams,
        response: { 200: createdBackupSchema, 201: createdBackupSchema },
      },
    },
    async (request, reply) => {
      const { backup, created } = await backups.create(callerOf(request), request.params.id);
      return reply.code(created ? 201 : 200).send({ ...toBackupDto(backup), created });
    },
  );

  app.get(
    '/agents/:id/backups',
    {
      config: { access: 'read' },
      schema: {
        summary: "The agent's backups, newest first, without content",
        description: listDescription(BACKUP_LIST, scopeNote),
        tags,
        params: agentParams,
        querystring: listBackupsQuery,
        response: { 200: listResponse(backupSchema, BACKUP_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, BACKUP_LIST, { item: backupSchema, dto: toBackupDto, fetch: (page) => backups.list(caller, request.params.id, page) });
    },
  );

  app.get(
    '/agents/:id/backups/latest',
    {
      config: { access: 'read' },
      schema: {
        summary: 'The newest backup',
        description: `404 when the agent has none. \`format=xml\`: the XML as \`application/xml\` with a download file name. ${scopeNote}`,
        tags,
        params: agentParams,
        querystring: backupFormatQuery,
        response: singleBackupResponse,
      },
    },
    async (request, reply) => sendBackup(reply, await backups.get(callerOf(request), request.params.id, 'latest'), request.query.format),
  );

  app.get(
    '/agents/:id/backups/diff',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Line diff between two backups of the agent',
        description:
          `A unified diff from \`a\` to \`b\` with the counts of added and removed lines; \`format=text\` returns only the diff, as text/plain. ` +
          `Limits: both backups together at most ${MAX_DIFF_BYTES / MIB} MiB, and at most ${MAX_DIFF_CHANGED_LINES} changed lines; beyond either → 413 PAYLOAD_TOO_LARGE (compare the \`format=xml\` downloads instead). ${scopeNote}`,
        tags,
        params: agentParams,
        querystring: diffQuery,
        response: {
          200: {
            description: 'The diff; with `format=text` the unified diff alone',
            content: { 'application/json': { schema: backupDiffSchema }, 'text/plain': { schema: z.string() } },
          },
        },
      },
    },
    async (request, reply) => {
      const { a, b, format } = request.query;
      const result = await backups.diff(callerOf(request), request.params.id, a, b);
      if (format === 'text') return reply.type('text/plain; charset=utf-8').send(result.diff);
      return { ...result, a: toBackupDto(result.a), b: toBackupDto(result.b) };
    },
  );

  app.get(
    '/agents/:id/backups/:bid',
    {
      config: { access: 'read' },
      schema: {
        summary: 'One backup',
        description: `\`format=xml\`: the XML as \`application/xml\` with a download file name. ${scopeNote}`,
        tags,
        params: backupParams,
        querystring: backupFormatQuery,
        response: singleBackupResponse,
      },
    },
    async (request, reply) => sendBackup(reply, await backups.get(callerOf(request), request.params.id, request.params.bid), request.query.format),
  );

  app.delete(
    '/agents/:id/backups/:bid',
    {
      config: { access: 'write', audit: 'backup.delete' },
      schema: { summary: 'Delete one backup', description: scopeNote, tags, params: backupParams, response: { 200: deletedSchema } },
    },
    async (request) => {
      await backups.delete(callerOf(request), request.params.id, request.params.bid);
      return { deleted: true as const };
    },
  );
};
