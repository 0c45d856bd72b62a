// The device files API's plain operations (issue 59): list a directory page by page, stat, make a
// directory, rename and delete. Each asks the agent one command through the commander (so it works on
// any instance of a cluster); changes are audited with the agent's name and the path.
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import type { AgentCommand, CommandParams } from '../agent-hub/agent-protocol.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import { fsListResult, fsStatResult } from '../agent-hub/device-protocol.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { DeviceAccess, DeviceUse } from '../device-sessions/device-access.js';
import { askAgent } from './agent-fs-errors.js';
import { ACCESS_NOTE, deletedAnswer, deleteQuery, listAnswer, listQuery, pathAnswer, pathQuery, renameAnswer, renameBody, statAnswer, tags } from './device-files.schemas.js';

/** A plain file command waits this long for the agent's answer. */
export const FS_COMMAND_TIMEOUT_MS = 30_000;

export interface DeviceFilesOptions {
  deviceAccess: DeviceAccess;
  commander: AgentCommander;
}

export const deviceFilesRoutes: FastifyPluginAsyncZod<DeviceFilesOptions> = async (app, { deviceAccess, commander }) => {
  /** Checks the caller, names the audit target, and asks the agent. */
  async function ask<C extends AgentCommand>(request: FastifyRequest, agentId: string, use: DeviceUse, command: C, params: CommandParams<C>, label?: string) {
    const agent = await deviceAccess.check(callerOf(request), agentId, 'files', use);
    if (label) request.auditTarget = { label: `agent ${agent.name}: ${label}`.slice(0, 200), customerId: agent.customer_id };
    return askAgent(() => commander.request(agent.id, command, params, FS_COMMAND_TIMEOUT_MS));
  }

  app.get(
    '/agents/:id/files',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'listDeviceFiles',
        summary: 'One page of a directory on the device',
        description: `Entries sorted by name (UTF-16 code units), \`limit\` per page (default 1000); pass \`next_cursor\` as \`cursor\` for the next page. Symbolic links are described, not followed (\`link_target\`); \`mode\` is octal text, null on Windows. ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        querystring: listQuery,
        response: { 200: listAnswer },
      },
    },
    async (request) => {
      const { path, cursor, limit } = request.query;
      const answer = fsListResult.parse(await ask(request, request.params.id, 'view', 'fs_list', { path, limit, ...(cursor ? { cursor } : {}) }));
      return { ...answer, entries: answer.entries.map((e) => ({ ...e, link_target: e.link_target ?? null })), total: answer.total ?? null };
    },
  );

  app.get(
    '/agents/:id/files/stat',
    {
      config: { access: 'read' },
      schema: {
        operationId: 'statDeviceFile',
        summary: 'One file or directory on the device',
        description: `What the directory listing says of one entry (a link is described, not followed). ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        querystring: pathQuery,
        response: { 200: statAnswer },
      },
    },
    async (request) => {
      const answer = fsStatResult.parse(await ask(request, request.params.id, 'view', 'fs_stat', { path: request.query.path }));
      return { ...answer, link_target: answer.link_target ?? null };
    },
  );

  app.post(
    '/agents/:id/files/mkdir',
    {
      config: { access: 'write', audit: 'device.file_mkdir' },
      schema: {
        operationId: 'makeDeviceDirectory',
        summary: 'Make a directory on the device (and its missing parents)',
        description: `An existing directory is no error; an existing file of that name → 409. ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        body: pathQuery,
        response: { 201: pathAnswer },
      },
    },
    async (request, reply) => {
      const { path } = request.body;
      await ask(request, request.params.id, 'change', 'fs_mkdir', { path }, `mkdir ${path}`);
      return reply.code(201).send({ path });
    },
  );

  app.post(
    '/agents/:id/files/rename',
    {
      config: { access: 'write', audit: 'device.file_rename' },
      schema: {
        operationId: 'renameDeviceFile',
        summary: 'Rename or move a file or directory on the device',
        description: `An existing \`to\` → 409 unless \`overwrite\` is true. ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        body: renameBody,
        response: { 200: renameAnswer },
      },
    },
    async (request) => {
      const { from, to, overwrite } = request.body;
      await ask(request, request.params.id, 'change', 'fs_rename', { from, to, overwrite }, `rename ${from} to ${to}`);
      return { from, to };
    },
  );

  app.delete(
    '/agents/:id/files',
    {
      config: { access: 'write', audit: 'device.file_delete' },
      schema: {
        operationId: 'deleteDeviceFile',
        summary: 'Delete a file or directory on the device',
        description: `A non-empty directory → 409 unless \`recursive=true\`; a link is removed, not its target; the root is refused (400). ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        querystring: deleteQuery,
        response: { 200: deletedAnswer },
      },
    },
    async (request) => {
      const { path, recursive } = request.query;
      await ask(request, request.params.id, 'change', 'fs_delete', { path, recursive: recursive === 'true' }, `delete ${path}`);
      return { path, deleted: true as const };
    },
  );
};
