// Assertions on what a client sees of an error: the status and the contract's error body (§0).
import { expect } from 'vitest';

export type InjectedResponse = { statusCode: number; body: string; json(): unknown; headers: Record<string, unknown> };

/** The status, the code, a message, and the request id echoing the x-request-id header. */
export function expectError(res: InjectedResponse, status: number, code: string): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ code, request_id: res.headers['x-request-id'], error: expect.any(String) });
  return body;
}
