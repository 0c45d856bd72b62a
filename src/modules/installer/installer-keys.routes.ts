// /customers/{id}/installer-key: the customer's installer key, the agent key its installer packages carry
// (and the one to give winget-autoupdate in its ListPath). Its hint for reading; rotation shows the new
// key once.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import type { InstallerKeyService, InstallerKeyView } from './installer-keys.service.js';

const tags = ['installer'];
const scopeNote = "A customer outside the caller's customer scope is 404.";

const installerKeySchema = z
  .object({
    customer_id: z.number().int(),
    api_key_id: z.number().int().nullable().describe("The key's id among the customer's API keys; null until the first download for the customer made it"),
    key_hint: z.string().nullable().describe('First 8 characters, an ellipsis, the last 4'),
    created_at: timestampSchema.nullable().describe('When it became the installer key'),
  })
  .meta({ id: 'InstallerKey' });

const rotatedKeySchema = installerKeySchema
  .extend({ key: z.string().describe('The new key itself: shown only in this response') })
  .meta({ id: 'RotatedInstallerKey' });

const toDto = (v: InstallerKeyView) => ({ ...v, created_at: v.created_at ? toTimestamp(v.created_at) : null });

export const installerKeyRoutes: FastifyPluginAsyncZod<{ installerKeys: InstallerKeyService }> = async (app, { installerKeys }) => {
  app.get(
    '/customers/:id/installer-key',
    {
      config: { access: 'read' },
      schema: {
        summary: "The customer's installer key (hint only)",
        description:
          "Installer packages downloaded for the customer (by its own keys, or with `customer_id`) carry this agent key, scoped to the customer, in rmm-agent.json. " +
          `It is made on the first such download and listed with the customer's API keys (deleting it there revokes it; the next download makes another). ${scopeNote}`,
        tags,
        params: idParams,
        response: { 200: installerKeySchema },
      },
    },
    async (request) => toDto(await installerKeys.view(callerOf(request), request.params.id)),
  );

  app.post(
    '/customers/:id/installer-key',
    {
      config: { access: 'write', audit: 'installer.key.rotate' },
      schema: {
        summary: "Give the customer's installer packages a new key",
        description:
          'Makes a new installer key for the packages downloaded from now on and returns it once (for winget-autoupdate\'s ListPath, say). ' +
          'The previous key is not revoked, so devices set up with it keep working: it stays among the customer\'s API keys as ' +
          `"Installer key (replaced <date>)", where deleting it revokes it. ${scopeNote}`,
        tags,
        params: idParams,
        response: { 201: rotatedKeySchema },
      },
    },
    async (request, reply) => {
      const rotated = await installerKeys.rotate(callerOf(request), request.params.id);
      return reply.code(201).send({ ...toDto(rotated), key: rotated.key });
    },
  );
};
