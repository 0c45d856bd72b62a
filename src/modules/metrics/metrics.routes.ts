// /agents/{id}/metrics*: stored samples, bucket summaries, interface rates and the newest values.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { toTimestamp } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { agentParams } from '../agents/agents.schemas.js';
import type { MetricName } from './extract-samples.js';
import type { RateRow, SampleRow } from './metrics.repo.js';
import { RATE_LIST, rateSchema, ratesQuery, rawQuery, SAMPLE_LIST, sampleSchema, summaryQuery, summaryRowSchema } from './metrics.schemas.js';
import type { MetricsService } from './metrics.service.js';

const tags = ['metrics'];
const scopeNote = 'An agent outside the caller\'s customer scope is 404.';
const sampleDto = (s: SampleRow) => ({ ...s, metric: s.metric as MetricName, time: toTimestamp(s.time) });
/** Why the summary and the latest values take no cursor: they are not lists that grow. */
const notAList = (why: string) => `Not paged: ${why}.`;

export const metricRoutes: FastifyPluginAsyncZod<{ metrics: MetricsService }> = async (app, { metrics }) => {
  app.get(
    '/agents/:id/metrics',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Raw samples, ascending by time',
        description: listDescription(
          SAMPLE_LIST,
          `Without \`from\`/\`to\`: the last 24 hours. Samples older than METRICS_COMPRESS_AFTER_DAYS come from compacted storage and are returned alike. ${scopeNote}`,
        ),
        tags,
        params: agentParams,
        querystring: rawQuery,
        response: { 200: listResponse(sampleSchema, SAMPLE_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, SAMPLE_LIST, { item: sampleSchema, dto: sampleDto, fetch: (page) => metrics.raw(caller, request.params.id, request.query, page) });
    },
  );

  app.get(
    '/agents/:id/metrics/summary',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Samples averaged per time bucket (with min, max and count), per label',
        description: `Default range: the last 24 hours; default bucket \`5 minutes\`. Buckets are aligned to UTC (hours on the hour, days at midnight, weeks on Monday) and listed by bucket start, then label; empty buckets are left out. ${notAList('at most 10,000 buckets per label, chosen by the range and the bucket width; narrow the range for more detail')} ${scopeNote}`,
        tags,
        params: agentParams,
        querystring: summaryQuery,
        response: { 200: z.array(summaryRowSchema) },
      },
    },
    async (request) =>
      (await metrics.summary(callerOf(request), request.params.id, request.query)).map((r) => ({
        ...r,
        metric: r.metric as MetricName,
        bucket: toTimestamp(r.bucket),
      })),
  );

  app.get(
    '/agents/:id/metrics/rates',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Interface receive/transmit rates in bits per second',
        description: listDescription(
          RATE_LIST,
          `Computed from consecutive samples of \`interface_rx_bytes\` and \`interface_tx_bytes\`: a point needs both counters in both samples, and a counter that went down (reset) yields no point. With \`bucket\`, one point per bucket and interface (for long ranges), under the summary's limit of 10,000 buckets in the range. Default range: the last 24 hours. ${scopeNote}`,
        ),
        tags,
        params: agentParams,
        querystring: ratesQuery,
        response: { 200: listResponse(rateSchema, RATE_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const dto = (r: RateRow) => ({ ...r, time: toTimestamp(r.time) });
      return sendList(request, reply, RATE_LIST, { item: rateSchema, dto, fetch: (page) => metrics.rates(caller, request.params.id, request.query, page) });
    },
  );

  app.get(
    '/agents/:id/metrics/latest',
    {
      config: { access: 'read' },
      schema: {
        summary: 'The newest value of every metric and label (for dashboards)',
        description: `Taken from the heartbeats of the 24 hours before the agent's newest one with samples, so a disk or interface that disappeared drops out after a day. Sorted by metric, then label; \`[]\` before the first sample. ${notAList('one value per metric and label the agent reports (a few dozen)')} ${scopeNote}`,
        tags,
        params: agentParams,
        response: { 200: z.array(sampleSchema) },
      },
    },
    async (request) => (await metrics.latest(callerOf(request), request.params.id)).map(sampleDto),
  );
};
