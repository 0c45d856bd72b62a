// A whole list streamed over a real socket (src/http/list-stream.ts): the chunks make one JSON array
// equal to what Fastify would have sent; a client that hangs up stops the reads; a failure after the
// first chunk cuts the connection (the client sees a broken answer, never a short list that parses);
// a failure before it is the contract's error answer.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { errorHandlerPlugin } from '../src/http/error-handler.js';
import { STREAM_CHUNK } from '../src/http/list-stream.js';
import { allByDefault, pageQuery, sendList } from '../src/http/pagination.js';
import { AppError } from '../src/platform/errors.js';
import type { Page, PageRequest } from '../src/platform/paging.js';

const LIST = allByDefault('by n');
const item = z.object({ n: z.number().int(), label: z.string(), note: z.string().nullable() });
type Row = { n: number; label: string; extra: string };

let app: FastifyInstance | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

/** A server with one list route reading from `fetch`; its URL. */
async function serve(fetch: (page: PageRequest) => Promise<Page<Row>>): Promise<string> {
  const server = Fastify().withTypeProvider<ZodTypeProvider>();
  server.setValidatorCompiler(validatorCompiler);
  server.setSerializerCompiler(serializerCompiler);
  await server.register(errorHandlerPlugin);
  server.get('/rows', { schema: { querystring: z.object(pageQuery(LIST)), response: { 200: z.array(item) } } }, async (request, reply) =>
    // `extra` is not in the schema and `note` is computed: both encoded as Fastify would.
    sendList(request, reply, LIST, { item, fetch, dto: (r: Row) => ({ ...r, note: r.n % 2 ? null : `even ${r.n}` }) }),
  );
  await server.listen({ port: 0, host: '127.0.0.1' });
  app = server;
  return `http://127.0.0.1:${(server.server.address() as AddressInfo).port}/rows`;
}

/** Rows 1..total in pages; counts the reads. */
function rows(total: number, failAtRead?: number) {
  const source = {
    reads: 0,
    fetch: async (page: PageRequest): Promise<Page<Row>> => {
      source.reads++;
      if (source.reads === failAtRead) throw new AppError('SERVICE_UNAVAILABLE', 'database away');
      const start = page.after === null ? 0 : (page.after[0] as number);
      const items = Array.from({ length: Math.max(0, Math.min(page.limit, total - start)) }, (_, i) => ({ n: start + i + 1, label: `row "${start + i + 1}"\u2028`, extra: 'x' }));
      return { items, next: start + items.length < total ? [start + items.length] : null };
    },
  };
  return source;
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

describe('streamed lists', () => {
  it('sends the whole list as one array, encoded exactly as the paged answers', async () => {
    const total = STREAM_CHUNK * 3 + 7;
    const url = await serve(rows(total).fetch);
    const whole = await fetch(url);
    expect(whole.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await whole.text();
    const pages: string[] = [];
    for (let next: string | null = `${url}?limit=1000`; next; ) {
      const res: Response = await fetch(next);
      pages.push((await res.text()).slice(1, -1));
      const link = res.headers.get('link');
      next = link ? new URL(/^<([^>]+)>/.exec(link)![1]!, url).toString() : null;
    }
    expect(text).toBe(`[${pages.join(',')}]`);
    const parsed = JSON.parse(text) as Array<z.infer<typeof item>>;
    expect(parsed).toHaveLength(total);
    expect(parsed[1]).toEqual({ n: 2, label: 'row "2"\u2028', note: 'even 2' });
  });

  it('stops reading once the client hangs up', async () => {
    const source = rows(Number.MAX_SAFE_INTEGER);
    const url = await serve(source.fetch);
    // node:http, whose destroy() closes the one socket (fetch opens a spare connection that would hold
    // the server's close open).
    await new Promise<void>((resolve, reject) => {
      const request = http.get(url, (res) => {
        res.once('data', () => {
          request.destroy();
          resolve();
        });
      });
      request.on('error', (err) => (request.destroyed ? undefined : reject(err)));
    });
    const connections = () => new Promise<number>((resolve) => app!.server.getConnections((_e, n) => resolve(n)));
    await expect.poll(connections).toBe(0);
    await turns(20);
    const afterHangUp = source.reads;
    await turns(200);
    expect(source.reads).toBe(afterHangUp);
  });

  it('cuts the connection when a read fails after the first chunk; a first failure is an error answer', async () => {
    const url = await serve(rows(STREAM_CHUNK * 4, 3).fetch);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();

    const failing = rows(10, 1);
    await app!.close();
    const first = await fetch(await serve(failing.fetch));
    expect(first.status).toBe(503);
    expect(await first.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
  });
});
