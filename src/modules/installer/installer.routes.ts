// /installer/upload and /installer/download (contract §9): the agent installer package, a ZIP per
// platform. Bodies and downloads are streams: neither side is ever held in memory whole. The routes of
// customers' installer keys are in installer-keys.routes.ts.
import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import type { Caller } from '../auth/caller.js';
import { idSchema, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { AppError } from '../../platform/errors.js';
import { installerKeyRoutes } from './installer-keys.routes.js';
import type { InstallerKeyService } from './installer-keys.service.js';
import { INSTALLER_PLATFORMS, type InstallerService } from './installer.service.js';
import { AGENT_CONFIG_FILE, MAX_ENTRIES, MAX_UNPACKED_BYTES } from './zip-package.js';

const tags = ['installer'];
const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed', 'application/octet-stream'];
const GIB = 1024 * 1024 * 1024;

const platformQuery = z.object({
  platform: z.enum(INSTALLER_PLATFORMS).describe('Only `windows` has an installer package'),
});

const installerSchema = z
  .object({
    platform: z.enum(INSTALLER_PLATFORMS),
    sha256: z.string().describe('SHA-256 (hex) of the ZIP as uploaded'),
    size: z.number().int().describe('Bytes of the ZIP as uploaded'),
    created_at: timestampSchema,
  })
  .meta({ id: 'InstallerPackage' });

const downloadQuery = platformQuery.extend({
  customer_id: idSchema
    .optional()
    .describe("The customer the package is for. A customer-scoped caller's package is always its own customer's (another is 404); unscoped callers may name any"),
});

export const installerRoutes: FastifyPluginAsyncZod<{
  installers: InstallerService;
  installerKeys: InstallerKeyService;
  /** Counts a download as one use (an install) of the caller's key; 401 when it is expired or used up. */
  countUse: (caller: Caller) => Promise<void>;
}> = async (app, { installers, installerKeys, countUse }) => {
  // The body goes to the blob store as the raw request stream; only these routes see this parser.
  app.addContentTypeParser(ZIP_TYPES, (_request, payload, done) => done(null, payload));

  app.post(
    '/installer/upload',
    {
      // The blob store counts the bytes and refuses past the limit; Fastify's own limit must not cut in first.
      bodyLimit: installers.maxBytes + 1,
      config: { access: 'write', audit: 'installer.upload', serverWide: true },
      schema: {
        summary: 'Upload the agent installer package (ZIP)',
        description:
          `The body is the ZIP itself (\`application/zip\`, \`application/x-zip-compressed\` or \`application/octet-stream\`), ` +
          `at most FIRMWARE_MAX_BYTES (${installers.maxBytes} bytes here) → else 413 PAYLOAD_TOO_LARGE. It replaces the platform's previous package. ` +
          `Refused with 400 VALIDATION_ERROR, storing nothing: a body that is not a readable ZIP; an entry name that could be extracted ` +
          `outside the target folder (absolute paths, drive letters, \`..\`, backslashes, colons, also after Unicode NFKC normalisation, such as fullwidth \`．．／\`, ` +
          `and slash look-alikes); names Windows reserves or changes (CON, PRN, AUX, NUL, COM0-9, LPT0-9 with any extension, in any folder; trailing dots or spaces; ` +
          `< > " | ? *); duplicate names (ignoring case and Unicode form); symbolic links; encrypted entries; ` +
          `compression other than stored or deflate; more than ${MAX_ENTRIES} entries; more than ${MAX_UNPACKED_BYTES / GIB} GiB unpacked; no files at all.`,
        tags,
        querystring: platformQuery,
        response: { 201: installerSchema },
      },
    },
    async (request, reply) => {
      // Refuse a declared oversize at once instead of reading it up to the limit first.
      const declared = Number(request.headers['content-length']);
      if (declared > installers.maxBytes) {
        throw new AppError('PAYLOAD_TOO_LARGE', `Larger than the limit of ${installers.maxBytes} bytes (FIRMWARE_MAX_BYTES)`, {
          headers: { connection: 'close' },
        });
      }
      let row;
      try {
        row = await installers.upload(request.query.platform, request.body as Readable);
      } catch (err) {
        // Refused part-way (413), the rest of the body is unread: end the connection with the answer,
        // or it would stay open waiting for a request that never completes (and hold up shutdown).
        if (!request.raw.complete) reply.header('connection', 'close');
        throw err;
      }
      return reply.code(201).send({ platform: request.query.platform, sha256: row.sha256, size: row.size, created_at: toTimestamp(row.created_at) });
    },
  );

  app.get(
    '/installer/download',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'Download the agent installer package (ZIP) with its configuration',
        description:
          `The uploaded ZIP with a file \`${AGENT_CONFIG_FILE}\` added at the top level (an uploaded one is replaced): ` +
          '`{"server_url", "ws_url", "api_key"}`: the settings `backend_url` and `ws_url` (unset: the agent channel under `backend_url`, ' +
          '`https://host/prefix` → `wss://host/prefix/api/v1/agent/ws`), and the agent key of the customer the package is for. ' +
          "That customer is the caller's own for a customer-scoped key (any permission), else `customer_id` when given: its installer key, " +
          'an agent key scoped to it, made on the first such download (see /customers/{id}/installer-key). An unscoped download without ' +
          '`customer_id` carries the settings\' `installer_api_key`. Each field only when set; none set: the package goes out without the file. ' +
          'The uploaded entries are copied as stored (never unpacked), so a download costs what the package weighs; it is streamed with its ' +
          '`content-length`. Agent keys may call this. 404 when no package was uploaded, or for a customer outside the caller\'s scope; ' +
          '409 when the stored package fails checks added since its upload. Each download counts one use of the key (see POST /apikeys, `max_uses`).',
        tags,
        querystring: downloadQuery,
        response: {
          200: {
            description: 'The installer package',
            // unknown, not string: the handler sends a stream, which Fastify passes through unserialised.
            content: { 'application/zip': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const { platform, customer_id: customerId } = request.query;
      const caller = callerOf(request);
      reply
        .type('application/zip')
        .header('content-disposition', `attachment; filename="rmm-agent-installer-${platform}.zip"`)
        // The package carries an agent key: no shared cache may keep a copy.
        .header('cache-control', 'no-store');
      // Fastify answers HEAD by draining the GET body: skip writing a whole package only to discard it.
      if (request.method === 'HEAD') {
        await installers.checkDownload(caller, platform, customerId);
        return reply.send();
      }
      await installers.checkDownload(caller, platform, customerId);
      await countUse(caller);
      const zip = await installers.download(caller, platform, customerId);
      return reply.header('content-length', zip.size).send(zip.stream);
    },
  );

  await app.register(installerKeyRoutes, { installerKeys });
};
