// Request and response pieces shared by every feature: ids in paths, timestamps (list paging: pagination.ts).
import { z } from 'zod';

/** Largest value of a PostgreSQL integer column; larger ids can only be "not found". */
const MAX_INT4 = 2_147_483_647;

export const idSchema = z.coerce.number().int().min(1).max(MAX_INT4);

/** A reference to a row by id in a JSON body: the same range (beyond it PostgreSQL refused the query: a 500). */
export const idRefSchema = z.number().int().min(1).max(MAX_INT4);

/**
 * Text the input guard (input-guard.ts) does not see that still goes into a text column: the fields the
 * heartbeat copies into the agent. PostgreSQL text cannot hold NUL.
 */
export const withoutNul = <T extends z.ZodType<string>>(schema: T) => schema.refine((v) => !v.includes('\u0000'), 'must not contain NUL (\\u0000)');

export const idParams = z.object({ id: idSchema });

/** RFC 3339 in UTC with `Z`, as every timestamp in the API. */
export const timestampSchema = z.iso
  .datetime()
  // The format allows year 0000, which PostgreSQL (like the proleptic calendar) does not have.
  .refine((v) => !v.startsWith('0000'), 'year 0000 does not exist')
  .describe('RFC 3339 timestamp in UTC');

export function toTimestamp(value: Date): string;
export function toTimestamp(value: Date | null): string | null;
export function toTimestamp(value: Date | null): string | null {
  return value ? value.toISOString() : null;
}

export const okSchema = z.object({ ok: z.literal(true) });
