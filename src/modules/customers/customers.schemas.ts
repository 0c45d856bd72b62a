// Customer request and response shapes (contract §3).
import { z } from 'zod';
import { timestampSchema, toTimestamp } from '../../http/common-schemas.js';
import { allByDefault, pageQuery } from '../../http/pagination.js';
import type { Customer } from './customers.service.js';

/** The customer number is a string; a JSON number is accepted and kept as its decimal text. */
const customerNumber = z
  .union([z.string(), z.number().finite()])
  .transform((v) => String(v).trim())
  .pipe(z.string().min(1, 'must not be empty').max(64))
  .describe('Customer number (string; a JSON number is stored as its decimal text); unique');

const customerName = z.string().trim().min(1, 'must not be empty').max(200);

export const createCustomerBody = z.object({ number: customerNumber, name: customerName });

export const updateCustomerBody = z
  .object({ number: customerNumber.optional(), name: customerName.optional() })
  .refine((v) => v.number !== undefined || v.name !== undefined, 'give number, name or both');

export const CUSTOMER_LIST = allByDefault('by number (as text), then id');
export const customerListQuery = z.object(pageQuery(CUSTOMER_LIST));

export const customerSchema = z
  .object({ id: z.number().int(), number: z.string(), name: z.string(), created_at: timestampSchema })
  .meta({ id: 'Customer' });

export function toCustomerDto(c: Customer): z.infer<typeof customerSchema> {
  return { id: c.id, number: c.number, name: c.name, created_at: toTimestamp(c.created_at) };
}
