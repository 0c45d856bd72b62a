// /users: only signed-in users create, change or delete users (a key could otherwise mint a user and
// reach the terminal); keys with read access may list them.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { callerOf } from '../../http/auth.js';
import { idParams, okSchema } from '../../http/common-schemas.js';
import { listDescription, listResponse, sendList } from '../../http/pagination.js';
import { createUserBody, setPasswordBody, toUserDto, USER_LIST, userListQuery, userSchema } from './users.schemas.js';
import type { UserService } from './users.service.js';

const tags = ['users'];

export const userRoutes: FastifyPluginAsyncZod<{ users: UserService }> = async (app, { users }) => {
  app.get(
    '/users',
    {
      config: { access: 'read' },
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
      config: { access: 'user', audit: 'user.create' },
      schema: {
        summary: 'Create a user (signed-in users only)',
        description: 'Usernames are unique regardless of case (409). Passwords: 6 characters to 72 UTF-8 bytes.',
        tags,
        body: createUserBody,
        response: { 201: userSchema },
      },
    },
    async (request, reply) => {
      const user = await users.create(request.body.username, request.body.password);
      return reply.code(201).send(toUserDto(user));
    },
  );

  app.put(
    '/users/:id/password',
    {
      config: { access: 'user', audit: 'user.password_change' },
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
      config: { access: 'user', audit: 'user.delete' },
      schema: { summary: 'Delete a user (the last user cannot be deleted: 409)', tags, params: idParams, response: { 200: okSchema } },
    },
    async (request) => {
      await users.delete(request.params.id);
      return { ok: true as const };
    },
  );
};
