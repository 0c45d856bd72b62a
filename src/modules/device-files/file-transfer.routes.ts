// Downloads and uploads of device files (issue 59), streamed through the agent's socket on this
// instance: GET …/files/content (Content-Length, Range, backpressure to the agent) and PUT
// …/files/content (a size limit, the agent checks the SHA-256 before the file appears). Each is a device
// session (a row and its start/end audit entries, with bytes, SHA-256 and result).
import type { Readable } from 'node:stream';
import { PassThrough } from 'node:stream';
import path from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { AppError } from '../../platform/errors.js';
import type { AgentCommander } from '../agent-hub/agent-commander.js';
import type { AgentHub } from '../agent-hub/agent-hub.js';
import { fsReadResult, fsStatResult } from '../agent-hub/device-protocol.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { Agent } from '../agents/agents.service.js';
import type { DeviceAccess } from '../device-sessions/device-access.js';
import { forwardHttp, streamHolder } from '../device-sessions/forward-to-holder.js';
import type { DeviceSessionLog } from '../device-sessions/session-log.js';
import type { RemoteTunnels } from '../tunnels/remote-tunnels.js';
import type { SettingsService } from '../settings/settings.service.js';
import { agentFsError, askAgent } from './agent-fs-errors.js';
import { attachment, parseRange } from './byte-range.js';
import { FS_COMMAND_TIMEOUT_MS } from './device-files.routes.js';
import { ACCESS_NOTE, pathQuery, tags, uploadAnswer, uploadQuery } from './device-files.schemas.js';
import { DownloadStream } from './download-stream.js';
import { pumpUpload, UploadSink } from './upload-pump.js';

export interface FileTransferOptions {
  deviceAccess: DeviceAccess;
  deviceSessions: DeviceSessionLog;
  commander: AgentCommander;
  hub: AgentHub;
  settings: SettingsService;
  /** Cluster mode: the instances holding other agents' sockets, where transfers are forwarded. */
  remote?: RemoteTunnels | undefined;
}

const LOCAL_NOTE =
  "The bytes go through the agent's socket: in cluster mode an instance that does not hold it forwards the request, with its own credentials, to the instance that does (over HTTP between instances, never over NATS), which makes every check itself.";

export const fileTransferRoutes: FastifyPluginAsyncZod<FileTransferOptions> = async (app, { deviceAccess, deviceSessions, commander, hub, settings, remote }) => {
  // The body stays a stream, in this plugin only: it goes to the agent as it arrives.
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));

  /** In a cluster, the request goes where the agent's socket is; true when it was forwarded and answered there. */
  const forwarded = async (request: FastifyRequest, reply: FastifyReply, agent: Agent): Promise<boolean> => {
    const holder = await streamHolder(hub, remote, request, agent.id);
    if (!holder) return false;
    await forwardHttp(request, reply, holder, remote!.instanceId);
    return true;
  };

  app.get(
    '/agents/:id/files/content',
    {
      exposeHeadRoute: false,
      config: { access: 'read' },
      schema: {
        operationId: 'downloadDeviceFile',
        summary: 'Download a file from the device',
        description:
          'Streamed with Content-Length, `Content-Disposition: attachment` (the file name, RFC 6266) and `Accept-Ranges: bytes`. `Range: bytes=N-` or `bytes=N-M` → 206 with Content-Range; a first byte past the end → 416; other Range forms are answered whole. ' +
          `A directory → 409. If the file changes or the agent goes away mid-way, the response ends early (fewer bytes than Content-Length). ${LOCAL_NOTE} ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        querystring: pathQuery,
        headers: z.looseObject({ range: z.string().max(200).optional() }),
        response: {
          200: { description: 'The file', content: { 'application/octet-stream': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } } },
          206: { description: 'The requested range', content: { 'application/octet-stream': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } } },
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const agent = await deviceAccess.check(caller, request.params.id, 'files', 'view');
      if (await forwarded(request, reply, agent)) return reply;
      const stat = fsStatResult.parse(await askAgent(() => commander.request(agent.id, 'fs_stat', { path: request.query.path }, FS_COMMAND_TIMEOUT_MS)));
      if (stat.type !== 'file') throw new AppError('CONFLICT', `${stat.path} is not a regular file (${stat.type})`);
      const range = parseRange(request.headers.range, stat.size);
      const start = range?.start ?? 0;
      const length = range ? range.end - range.start + 1 : stat.size;
      let endSession: Awaited<ReturnType<DeviceSessionLog['start']>> = async () => undefined;
      const body = new DownloadStream(commander, agent.id, length, (outcome) => {
        void endSession({ reason: outcome.reason, bytesIn: 0, bytesOut: outcome.bytes, status: outcome.ok ? (range ? 206 : 200) : 502, sha256: outcome.sha256 });
      });
      const stream = hub.streams.open(agent.id, 'fs', body.sink);
      body.attach(stream);
      endSession = await deviceSessions.start({ id: stream.id, kind: 'download', agent, caller, ip: request.auditIp || request.ip, subject: stat.path });
      try {
        fsReadResult.parse(await askAgent(() => commander.request(agent.id, 'fs_read', { session_id: stream.id, path: stat.path, offset: start }, FS_COMMAND_TIMEOUT_MS)));
      } catch (err) {
        stream.release();
        await endSession({ reason: `refused: ${(err as Error).message}`, bytesIn: 0, bytesOut: 0, status: (err as AppError).status ?? 500 });
        throw err;
      }
      if (length === 0) body.push(null);
      reply
        .code(range ? 206 : 200)
        .type('application/octet-stream')
        .header('content-length', String(length))
        .header('accept-ranges', 'bytes')
        .header('content-disposition', attachment(path.posix.basename(stat.path.replaceAll('\\', '/')) || 'download'));
      if (range) reply.header('content-range', `bytes ${range.start}-${range.end}/${stat.size}`);
      return reply.send(body);
    },
  );

  app.put(
    '/agents/:id/files/content',
    {
      config: { access: 'write', audit: 'device.file_upload' },
      schema: {
        operationId: 'uploadDeviceFile',
        summary: 'Upload a file to the device',
        description:
          'Body: the file as `application/octet-stream` with Content-Length (none → 411 LENGTH_REQUIRED); larger than the setting device_upload_max_bytes → 413 before anything is read. ' +
          'The agent writes it to a temporary file beside the target and renames it into place only when the SHA-256 of what arrived equals `sha256`: otherwise 400 CHECKSUM_MISMATCH and no file. An existing file → 409 unless `overwrite=true`. ' +
          `A client that hangs up mid-way leaves nothing on the device. ${LOCAL_NOTE} ${ACCESS_NOTE}`,
        tags,
        params: agentParams,
        querystring: uploadQuery,
        response: { 201: uploadAnswer },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      // Refused before the body was read: the connection closes after the answer instead of reading it.
      reply.header('connection', 'close');
      const agent = await deviceAccess.check(caller, request.params.id, 'files', 'change');
      const { path: target, sha256, overwrite } = request.query;
      request.auditTarget = { label: `agent ${agent.name}: upload ${target}`.slice(0, 200), customerId: agent.customer_id };
      const size = declaredLength(request.headers['content-length']);
      const max = (await settings.device()).device_upload_max_bytes;
      if (size > max) throw new AppError('PAYLOAD_TOO_LARGE', `The file is ${size} bytes; uploads to devices are limited to ${max} bytes (setting device_upload_max_bytes)`);
      if (await forwarded(request, reply, agent)) return reply;
      const sink = new UploadSink();
      const stream = hub.streams.open(agent.id, 'fs', sink);
      const endSession = await deviceSessions.start({ id: stream.id, kind: 'upload', agent, caller, ip: request.auditIp || request.ip, subject: target });
      try {
        await askAgent(() => commander.request(agent.id, 'fs_write', { session_id: stream.id, path: target, size, sha256, overwrite: overwrite === 'true' }, FS_COMMAND_TIMEOUT_MS));
      } catch (err) {
        stream.release();
        await endSession({ reason: `refused: ${(err as Error).message}`, bytesIn: 0, bytesOut: 0, status: (err as AppError).status ?? 500 });
        throw err;
      }
      const body = (request.body as Readable | undefined) ?? new PassThrough().end();
      const end = await pumpUpload(body, stream, sink, commander);
      const ok = end.kind === 'closed' && !end.frame.error;
      await endSession({
        reason: ok ? 'completed' : end.kind === 'closed' ? `failed: ${end.frame.error}` : end.kind,
        bytesIn: end.sent,
        bytesOut: 0,
        status: ok ? 201 : end.kind === 'closed' ? agentFsError(end.frame.error ?? '').status : 499,
        sha256: ok ? sha256 : null,
      });
      if (end.kind === 'agent-gone') throw new AppError('AGENT_DISCONNECTED', 'The agent disconnected during the upload; nothing was written');
      if (end.kind === 'client-gone') throw new AppError('BAD_REQUEST', 'The upload was cut off; nothing was written');
      if (end.frame.error) throw agentFsError(end.frame.error);
      if (request.raw.complete) reply.removeHeader('connection');
      return reply.code(201).send({ path: target, size, sha256 });
    },
  );
};

function declaredLength(header: string | undefined): number {
  if (header === undefined) throw new AppError('LENGTH_REQUIRED', 'An upload needs Content-Length (the agent checks the size and SHA-256 before the file appears)');
  const size = Number(header);
  if (!/^\d{1,16}$/.test(header) || !Number.isSafeInteger(size)) throw new AppError('VALIDATION_ERROR', 'Content-Length must be a whole number of bytes');
  return size;
}
