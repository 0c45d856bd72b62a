// The contract's error body (§0), as a schema for the OpenAPI document and as the one writer of it.
import { z } from 'zod';
import type { ErrorDetail } from '../platform/errors.js';

export const errorBodySchema = z
  .object({
    error: z.string().describe('Human-readable message'),
    code: z.string().describe('Stable UPPER_SNAKE code, e.g. VALIDATION_ERROR, NOT_FOUND, AGENT_TIMEOUT'),
    request_id: z.string().describe('Same as the x-request-id response header'),
    details: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Validation errors only: one entry per invalid field'),
  })
  .meta({ id: 'Error' });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export function errorBody(code: string, message: string, requestId: string, details?: ErrorDetail[]): ErrorBody {
  return details ? { error: message, code, request_id: requestId, details } : { error: message, code, request_id: requestId };
}
