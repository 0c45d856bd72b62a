// POST /agents/{id}/updater-report (issue 30): the on-device updater says what it did, with the agent's
// own key. Machine traffic like the heartbeat, so not audited; same scope rule (404 outside it).
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { okSchema } from '../../http/common-schemas.js';
import { callerOf } from '../../http/auth.js';
import { agentParams, updaterStateSchema } from '../agents/agents.schemas.js';
import { VERSION_PATTERN } from './versions.js';
import type { UpdaterReports } from './updater-report.js';

const reportBody = z.object({
  state: updaterStateSchema,
  version: z.string().regex(VERSION_PATTERN, 'must match ^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$').optional(),
  sha256: z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be 64 hexadecimal characters').optional(),
  message: z.string().max(1000).optional(),
});

export const updaterReportRoutes: FastifyPluginAsyncZod<{ reports: UpdaterReports }> = async (app, { reports }) => {
  app.post(
    '/agents/:id/updater-report',
    {
      config: { access: 'agent', audit: false },
      schema: {
        summary: "The on-device updater's report on an update",
        description:
          '`state`: `installing` (the old binary is about to be stopped), `healthy` (the new binary passed its health window; ' +
          'the updater clears the update request itself), `rolled_back` (the new binary failed and the previous one runs again), ' +
          '`rollback_failed` (the previous binary could not be started yet; the updater keeps trying), `refused` (the firmware was ' +
          'not installed: hash or signature wrong, nothing touched). Kept as the agent\'s `updater` (the latest report only). ' +
          '`rolled_back`, `rollback_failed` and `refused` set `update_requested` again: the device still runs the old version. ' +
          'Unknown agent, or one outside the key\'s customer → 404.',
        tags: ['firmware'],
        params: agentParams,
        body: reportBody,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await reports.record(callerOf(request), request.params.id, request.body);
      return { ok: true as const };
    },
  );
};
