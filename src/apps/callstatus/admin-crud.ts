// One resource of the admin API (contract §12): GET list, POST → 201, PUT /{id} (the fields given are
// changed), DELETE /{id}. Unique and reference violations become 409 and 400 in the error body.
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/db-errors.js';
import { keyColumn, keyset, keysetPage, toPage } from '../../db/keyset.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { AppError } from '../../platform/errors.js';
import type { CallstatusDatabase } from './schema.js';

type Table = 'callstatus_users' | 'callstatus_devices' | 'callstatus_assignments' | 'callstatus_colors';

export interface CrudResource<Body extends z.ZodObject> {
  path: string;
  table: Table;
  /** Singular, for messages and summaries. */
  noun: string;
  body: Body;
  /** The row as the API shows it (the table's columns with `id`). */
  row: z.ZodObject;
  /** Says what a unique violation means, e.g. "a color rule for this status_key exists". */
  conflict?: string;
  /** Says what a reference violation means on create/update. */
  missingReference?: string;
}

const BY_ID = keyset([keyColumn('id', 'int4')]);
const ROW_LIST = allByDefault('by id');
const listQuery = z.object(pageQuery(ROW_LIST));

const idParams = z.object({ id: z.coerce.number().int().min(1).max(2_147_483_647) });

export function registerCrud<Body extends z.ZodObject>(app: FastifyInstance, db: Kysely<CallstatusDatabase>, r: CrudResource<Body>): void {
  const api = app.withTypeProvider<ZodTypeProvider>();
  // The four tables share these statements; Kysely's typing per table adds nothing here.
  const table = db as unknown as Kysely<Record<Table, { id: number } & Record<string, unknown>>>;
  const tags = ['admin'];
  const security = [{ bearer: [] }];
  const notFound = () => new AppError('NOT_FOUND', `${r.noun} not found`);
  const translate = (err: unknown): never => {
    if (isUniqueViolation(err)) throw new AppError('CONFLICT', r.conflict ?? `This ${r.noun} exists already`);
    if (isForeignKeyViolation(err)) throw new AppError('VALIDATION_ERROR', r.missingReference ?? 'A referenced row does not exist');
    throw err;
  };

  api.get(
    r.path,
    { schema: { summary: `List ${r.noun}s`, description: listDescription(ROW_LIST), tags, security, querystring: listQuery, response: { 200: listResponse(r.row, ROW_LIST) } } },
    async (request, reply) =>
      sendList(request, reply, ROW_LIST, {
        item: r.row as z.ZodType<Record<string, unknown>>,
        fetch: async (page) => toPage(await keysetPage(table.selectFrom(r.table).selectAll(), BY_ID, page).execute(), page.limit),
        dto: (row: Record<string, unknown>) => row,
      }),
  );

  api.post(r.path, { schema: { summary: `Create a ${r.noun}`, tags, security, body: r.body, response: { 201: r.row } } }, async (request, reply) => {
    const created = await table.insertInto(r.table).values(request.body as Record<string, unknown>).returningAll().executeTakeFirstOrThrow().catch(translate);
    return reply.code(201).send(created);
  });

  api.put(
    `${r.path}/:id`,
    { schema: { summary: `Change a ${r.noun} (the fields given)`, tags, security, params: idParams, body: r.body.partial(), response: { 200: r.row } } },
    async (request) => {
      const changes = Object.fromEntries(Object.entries(request.body as Record<string, unknown>).filter(([, v]) => v !== undefined));
      const query = Object.keys(changes).length
        ? table.updateTable(r.table).set(changes).where('id', '=', request.params.id).returningAll()
        : table.selectFrom(r.table).selectAll().where('id', '=', request.params.id);
      const row = await query.executeTakeFirst().catch(translate);
      if (!row) throw notFound();
      return row;
    },
  );

  api.delete(
    `${r.path}/:id`,
    { schema: { summary: `Delete a ${r.noun}`, tags, security, params: idParams, response: { 200: z.object({ deleted: z.literal(true) }) } } },
    async (request) => {
      const gone = await table.deleteFrom(r.table).where('id', '=', request.params.id).returning('id').executeTakeFirst();
      if (!gone) throw notFound();
      return { deleted: true as const };
    },
  );
}
