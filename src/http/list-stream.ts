// A whole list as one JSON array, built without holding the event loop: keyset pages of STREAM_CHUNK rows
// are read one after another, each is encoded and written, and the loop gets a turn (setImmediate)
// between them, so other requests (health checks, heartbeats) are answered while 10,000 agents go out.
// The reply stream's backpressure paces the reads: a slow client slows them, a client that hangs up
// stops them (Fastify destroys the stream, which ends the generator). A database error before the
// first byte is an ordinary error answer; after it the status line is gone, so the connection is
// destroyed (the client sees a truncated answer, never a short list that looks complete) and the error
// is logged.
import { Readable } from 'node:stream';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { PageKey } from '../platform/paging.js';
import type { ListSource } from './list-source.js';

/** Rows per read; one read and its encoding is the longest the event loop is held for. */
export const STREAM_CHUNK = 500;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Chunks of all streams, one at a time, each on a turn of the event loop of its own. Without this, 20
 * streams woken in the same turn read and encode 20 chunks before the loop polls its sockets again (on
 * the embedded database a read is work on this thread too): measured, /healthz waited 100-250 ms. With
 * it, a waiting request waits for one chunk at most. Paged requests do not queue here.
 */
let lastChunk: Promise<unknown> = Promise.resolve();
function inTurn<T>(chunk: () => Promise<T>): Promise<T> {
  const run = lastChunk.then(nextTurn).then(chunk);
  lastChunk = run.catch(() => undefined);
  return run;
}

export async function streamList<Row, Dto>(reply: FastifyReply, source: ListSource<Row, Dto>, after: PageKey | null): Promise<FastifyReply> {
  // The same encoding Fastify's serializer gives a page (the response schema's encode, then JSON).
  const encode = (items: Row[]) => items.map((row) => JSON.stringify(z.encode(source.item, source.dto(row)))).join(',');
  const read = (position: PageKey | null) =>
    inTurn(async () => {
      const page = await source.fetch({ limit: STREAM_CHUNK, after: position });
      return { text: encode(page.items), next: page.next };
    });
  // Read before answering: a failure here still gets the contract's error body.
  let chunk = await read(after);
  const log = reply.log;

  async function* chunks(): AsyncGenerator<string> {
    yield '[';
    let separator = '';
    for (;;) {
      if (chunk.text !== '') {
        yield separator + chunk.text;
        separator = ',';
      }
      if (chunk.next === null) break;
      try {
        chunk = await read(chunk.next);
      } catch (err) {
        log.error({ err }, 'list stream failed after its first chunk; the connection is cut');
        throw err;
      }
    }
    yield ']';
  }

  return reply.type('application/json; charset=utf-8').send(Readable.from(chunks(), { objectMode: false }));
}
