// Signing in and minting credentials in tests, through the real API wherever the API can do it.
import type { UserRole } from '../../src/db/schema.js';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { PasswordHasher } from '../../src/modules/users/passwords.js';
import { UserService } from '../../src/modules/users/users.service.js';
import type { TestApp } from './app.js';

export type Permission = 'agent' | 'read' | 'write' | 'admin';

/** Headers for a bearer token or an API key. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
export const apiKey = (key: string) => ({ 'x-api-key': key });

/** Creates a user directly in the database (the first user has to come from somewhere). */
export async function seedUser(
  t: TestApp,
  username: string,
  password: string,
  access: { role?: UserRole; customer_ids?: number[] | null } = {},
): Promise<number> {
  const user = await new UserService(t.db.db, new PasswordHasher(4)).create({ username, password, ...access });
  return user.id;
}

/** Logs in through POST /auth/login and returns the access token (fails the test otherwise). */
export async function login(app: FastifyInstance, username: string, password: string): Promise<string> {
  const res = await app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password } });
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json() as { token?: string };
  expect(body.token).toBeTypeOf('string');
  return body.token!;
}

/** A signed-in admin: seeds the user (once per name) and logs in. */
export async function adminToken(t: TestApp, username = 'admin', password = 'admin-password-1'): Promise<string> {
  await seedUser(t, username, password).catch(() => undefined);
  return login(t.app, username, password);
}

export async function createCustomer(app: FastifyInstance, token: string, number: string, name = `Customer ${number}`) {
  const res = await app.inject({ method: 'POST', url: '/api/v1/customers', headers: bearer(token), payload: { number, name } });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: number; number: string; name: string; created_at: string };
}

/** Creates an API key through POST /apikeys with the given credentials; returns the created object. */
export async function createKey(
  app: FastifyInstance,
  headers: Record<string, string>,
  permissions: Permission,
  customer_id?: number,
) {
  const res = await app.inject({
    method: 'POST',
    url: '/api/v1/apikeys',
    headers,
    payload: { name: `${permissions} key`, permissions, ...(customer_id ? { customer_id } : {}) },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: number; key: string; key_hint: string; permissions: Permission; customer_id: number | null };
}
