// What a list route hands to sendList (pagination.ts): how to read a page of rows, how to turn a row
// into its answer, and the answer's schema. Its own file because both the paged answer (pagination.ts)
// and the streamed one (list-stream.ts) read it, and pagination.ts imports list-stream.ts.
import type { z } from 'zod';
import type { Page, PageRequest } from '../platform/paging.js';

export interface ListSource<Row, Dto> {
  /** The response item's schema: streamed items are encoded with it, as Fastify encodes a page. */
  item: z.ZodType<Dto>;
  fetch(request: PageRequest): Promise<Page<Row>>;
  dto(row: Row): Dto;
}
