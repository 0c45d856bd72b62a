// /users: only signed-in admins with every customer create, change or delete users and end their
// sessions (a key could otherwise mint a user and reach the terminal; a scoped admin could mint an
// unscoped one); keys with read access may list them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { z } from 'zod';
import type { AuthService } from '../auth/auth.service.js';
import { sessionSchema, toSessionDto } from '../auth/auth.schemas.js';
import { createUserBody, setPasswordBody, toUserDto, updateUserBody, USER_LIST, userListQuery, userSchema } from './users.schemas.js';
import type { UserService } from './users.service.js';

const tags = ['users'];

export const userRoutes: FastifyPluginAsyncZod<{ users: UserService; auth: AuthService }> = async (app, { users, auth }) => {
  app.get(
    '/users',
    {
      config: { access: 'read', serverWide: true },
      schema: { summary: 'List users', description: listDescription(USER_LIST), tags, querystring: userListQuery, response: { 200: listResponse(userSchema, USER_LIST) } },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      return sendList(request, reply, USER_LIST, { item: userSchema, dto: toUserDto, fetch: (page) => users.list(caller, page) });
    },
  );

  app.post(
    '/users',
    {
      config: { access: 'user_admin', audit: 'user.create' },
      schema: {
        summary: 'Create a user (signed-in admins only)',
        description:
          'Usernames are unique regardless of case (409). Passwords: 6 characters to 72 UTF-8 bytes. `role` defaults to ' +
          'admin; `customer_ids` limits the user to those customers (anything else is 404 for them, as for a ' +
          'customer-scoped key); an unknown customer is 400.',
        tags,
        body: createUserBody,
        response: { 201: userSchema },
      },
    },
    async (request, reply) => {
      const user = await users.create(request.body);
      return reply.code(201).send(toUserDto(user));
    },
  );

  app.put(
    '/users/:id/password',
    {
      config: { access: 'user_admin', audit: 'user.password_change' },
      schema: {
        summary: "Set a user's password; ends all of that user's sessions",
        tags,
        params: idParams,
        body: setPasswordBody,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await users.setPassword(request.params.id, request.body.password);
      return { ok: true as const };
    },
  );

  app.delete(
    '/users/:id',
    {
      config: { access: 'user_admin', audit: 'user.delete' },
      schema: { summary: 'Delete a user (the last user, or the last admin with every customer, cannot be deleted: 409); ends their sessions', tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await users.delete(request.params.id);
      return { ok: true as const };
    },
  );

  app.patch(
    '/users/:id',
    {
      config: { access: 'user_admin', audit: 'user.update' },
      schema: {
        summary: "Change a user's role or customers; ends that user's sessions",
        description:
          '`customer_ids: null` gives every customer. Leaving no admin with every customer is 409. The user signs in ' +
          'again with the new rights: their tokens carried the old ones.',
        tags,
        params: idParams,
        body: updateUserBody,
        response: { 200: userSchema },
      },
    },
    async (request) => toUserDto(await users.changeAccess(request.params.id, request.body)),
  );

  app.get(
    '/users/:id/sessions',
    {
      config: { access: 'user_admin' },
      schema: { summary: "A user's active sessions", tags, params: idParams, response: { 200: z.array(sessionSchema) } },
    },
    async (request) => {
      await users.get(request.params.id);
      return (await auth.listSessions(request.params.id)).map((row) => toSessionDto(row, undefined));
    },
  );

  app.delete(
    '/users/:id/sessions',
    {
      config: { access: 'user_admin', audit: 'user.sessions_end' },
      schema: { summary: "End all of a user's sessions (their tokens stop working at once)", tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await users.get(request.params.id);
      await auth.logout(request.params.id);
      return { ok: true as const };
    },
  );
};
