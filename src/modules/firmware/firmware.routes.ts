// Firmware distribution (contract §9): upload streamed to disk, list, latest, download (any stored
// version) streamed with its version and hash in headers and an ETag, delete. Agents' keys may read all
// of it (the on-device updater); uploads and deletions need write access.
import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { AppError } from '../../platform/errors.js';
import { idParams, timestampSchema } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { platformSchema } from '../agents/agents.schemas.js';
import { isSignatureText } from './firmware-signature.js';
import type { Firmware, FirmwareService, Platform } from './firmware.service.js';
import { VERSION_PATTERN } from './versions.js';

const tags = ['firmware'];
const versionSchema = z.string().regex(VERSION_PATTERN, 'must match ^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$');
const firmwareSchema = z.object({
  id: z.number().int(),
  version: z.string(),
  platform: platformSchema,
  sha256: z.string().describe('SHA-256 of the binary, lowercase hex'),
  size: z.number().int().describe('Bytes'),
  created_at: timestampSchema,
  signature: z.string().nullable().describe('Detached Ed25519 signature (base64) sent with the upload, or null'),
});
const signatureHeader = z
  .string()
  .refine(isSignatureText, 'must be standard base64 of a 64-byte Ed25519 signature (npm run cli -- firmware sign)')
  .optional()
  .describe('Detached Ed25519 signature of `rmm-firmware-signature-v1\\nplatform=<platform>\\nversion=<version>\\nsha256=<hex>\\n`, base64');
const FIRMWARE_LIST = allByDefault('by platform, then newest version first (numeric-aware: 1.10 after 1.9)');
const dto = (f: Firmware) => ({ ...f, platform: f.platform as Platform, created_at: f.created_at.toISOString() });

export const firmwareRoutes: FastifyPluginAsyncZod<{ firmware: FirmwareService; maxBytes: number }> = async (app, { firmware, maxBytes }) => {
  // The body is handed over as the raw stream: the store writes it to disk as it arrives.
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));

  app.post(
    '/firmware/upload',
    {
      bodyLimit: maxBytes,
      config: { access: 'write', audit: 'firmware.upload', serverWide: true },
      schema: {
        summary: 'Upload an agent binary for a version and platform',
        description:
          'Body: the binary as `application/octet-stream`, streamed to disk and hashed (SHA-256) on the way; only a complete upload is kept. ' +
          'The same version and platform again → 409 unless `replace=true`; larger than FIRMWARE_MAX_BYTES (default 256 MiB) → 413; empty → 400. ' +
          'Optional header `x-firmware-signature`: a detached Ed25519 signature made offline (`npm run cli -- firmware sign`), stored with the ' +
          'firmware and handed to updaters, which check it when they were given the public key; not standard base64 of 64 bytes → 400. ' +
          'When the server has FIRMWARE_PUBLIC_KEY, an upload without a signature that verifies with it → 400 and nothing is kept.',
        tags,
        querystring: z.object({ version: versionSchema, platform: platformSchema, replace: z.enum(['true', 'false']).default('false') }),
        headers: z.looseObject({ 'x-firmware-signature': signatureHeader }),
        response: { 201: firmwareSchema },
      },
    },
    async (request, reply) => {
      const declared = Number(request.headers['content-length']);
      try {
        const created = await firmware.upload({
          version: request.query.version,
          platform: request.query.platform,
          replace: request.query.replace === 'true',
          body: request.body as Readable,
          signature: request.headers['x-firmware-signature'] ?? null,
          ...(Number.isFinite(declared) ? { declaredSize: declared } : {}),
        });
        return await reply.code(201).send(dto(created));
      } catch (err) {
        // Refused before the whole body arrived (409, 413): end the connection after the answer rather
        // than read the rest of a large body nobody wants.
        if (!request.raw.complete) reply.header('connection', 'close');
        throw err;
      }
    },
  );

  app.get(
    '/firmware',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'Stored firmware, newest version first per platform',
        description: listDescription(FIRMWARE_LIST),
        tags,
        querystring: z.object({ platform: platformSchema.optional(), ...pageQuery(FIRMWARE_LIST) }),
        response: { 200: listResponse(firmwareSchema, FIRMWARE_LIST) },
      },
    },
    async (request, reply) => sendList(request, reply, FIRMWARE_LIST, { item: firmwareSchema, dto, fetch: (page) => firmware.list(request.query.platform, page) }),
  );

  app.get(
    '/firmware/latest',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'The highest firmware version of a platform',
        description: 'Versions compare numeric-aware (1.10 > 1.9). None for the platform → 404.',
        tags,
        querystring: z.object({ platform: platformSchema }),
        response: { 200: firmwareSchema },
      },
    },
    async (request) => {
      const latest = await firmware.latest(request.query.platform);
      if (!latest) throw new AppError('NOT_FOUND', `No firmware for ${request.query.platform}`);
      return dto(latest);
    },
  );

  app.get(
    '/firmware/download',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'Download a binary (the latest, or the given version)',
        description:
          'Streamed, with `x-firmware-version`, `x-firmware-sha256`, `content-length`, `etag` (the quoted SHA-256) and, when it was uploaded with one, `x-firmware-signature`. `If-None-Match` with that ETag → 304.',
        tags,
        querystring: z.object({ platform: platformSchema, version: versionSchema.optional() }),
        response: {
          // unknown, not string: the handler sends a stream, which Fastify passes through unserialised.
          200: { description: 'The binary', content: { 'application/octet-stream': { schema: z.unknown().meta({ type: 'string', format: 'binary' }) } } },
          304: z.null().describe('Not modified: If-None-Match named this binary'),
        },
      },
    },
    async (request, reply) => {
      const { firmware: found, stream } = await firmware.download(request.query.platform, request.query.version);
      const etag = `"${found.sha256}"`;
      reply.header('etag', etag).header('x-firmware-version', found.version).header('x-firmware-sha256', found.sha256);
      if (found.signature !== null) reply.header('x-firmware-signature', found.signature);
      if (matchesEtag(request.headers['if-none-match'], etag)) {
        stream.destroy();
        return reply.code(304).send(null);
      }
      return reply
        .type('application/octet-stream')
        .header('content-length', String(found.size))
        .header('content-disposition', `attachment; filename="rmm-agent-${found.platform}-${found.version}"`)
        .send(stream);
    },
  );

  app.delete(
    '/firmware/:id',
    {
      config: { access: 'write', audit: 'firmware.delete', serverWide: true },
      schema: {
        summary: 'Delete one firmware version',
        description:
          'Removes the version (`id` from the list), and its file once no other firmware or the installer package has the same bytes. ' +
          'Agents asked to update are offered the next highest version of the platform from their next heartbeat on, or nothing when none ' +
          'is left; their update request stays set. Unknown id → 404.',
        tags,
        params: idParams,
        response: { 200: z.object({ deleted: z.literal(true) }) },
      },
    },
    async (request) => {
      await firmware.delete(request.params.id);
      return { deleted: true as const };
    },
  );
};

/** `If-None-Match: "a", W/"b"` or `*`. */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const t = tag.trim();
    return t === '*' || t === etag || t === `W/${etag}`;
  });
}
