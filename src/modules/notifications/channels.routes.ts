// /notification-channels (issue 31): list, create, read, replace, delete, and send a test message.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idParams, idSchema, okSchema } from '../../http/common-schemas.js';
import { allByDefault, listDescription, listResponse, pageQuery, sendList } from '../../http/pagination.js';
import { channelDto, channelSchema, createChannelBody, deliveryOutcomeSchema, updateChannelBody } from './channels.schemas.js';
import type { ChannelService } from './channels.service.js';

const tags = ['notifications'];
const CHANNEL_LIST = allByDefault('by id');

const SCOPE =
  'A customer-scoped API key sees and changes only its own customer\'s channels (404 for any other, global ones included) and cannot create global ones (403).';
const TYPES =
  'Types and their settings / secrets: email {host, port=587, security starttls|tls|none, username?, from, to[1..20]} / {password?}; ' +
  'webhook {url} / {secret?} (x-rmm-signature HMAC, else the settings\' webhook_secret); ntfy {server_url=https://ntfy.sh, topic, priority?} / {token?}; ' +
  'teams, slack, discord {} / {webhook_url}; telegram {chat_id, api_url=https://api.telegram.org} / {bot_token}.';
const CHECKS =
  'Every URL passes the task-webhook rules (loopback, link-local and cloud-metadata targets → 400; loopback only with WEBHOOK_ALLOW_LOOPBACK=true), ' +
  'checked here and again at each send. The SMTP host may be loopback or private but not link-local or metadata. An enabled email channel is ' +
  "verified with the SMTP server (connect, TLS, AUTH): a refusal is 400 CHANNEL_CHECK_FAILED with the server's answer. Nothing is stored when a check fails.";

export const notificationChannelRoutes: FastifyPluginAsyncZod<{ channels: ChannelService }> = async (app, { channels }) => {
  app.get(
    '/notification-channels',
    {
      config: { access: 'read' },
      schema: {
        summary: 'Notification channels',
        description: listDescription(CHANNEL_LIST, `Channels the caller can see, with their delivery status; secrets only as hints. ${SCOPE}`),
        tags,
        querystring: z.object({ customer_id: idSchema.optional().describe("Only this customer's channels"), ...pageQuery(CHANNEL_LIST) }),
        response: { 200: listResponse(channelSchema, CHANNEL_LIST) },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const filter = { customerId: request.query.customer_id };
      return sendList(request, reply, CHANNEL_LIST, { item: channelSchema, dto: channelDto, fetch: (page) => channels.list(caller, filter, page) });
    },
  );

  app.post(
    '/notification-channels',
    {
      config: { access: 'write', audit: 'notification_channel.create' },
      schema: {
        summary: 'Create a notification channel',
        description: `${TYPES} ${CHECKS} Secrets are sealed with the server's key and answered only as hints. ${SCOPE}`,
        tags,
        body: createChannelBody,
        response: { 201: channelSchema },
      },
    },
    async (request, reply) => reply.code(201).send(channelDto(await channels.create(callerOf(request), request.body))),
  );

  app.get(
    '/notification-channels/:id',
    {
      config: { access: 'read' },
      schema: {
        summary: 'One notification channel',
        description: `Its settings, secret hints and delivery status (pending: notifications waiting in the outbox). ${SCOPE}`,
        tags,
        params: idParams,
        response: { 200: channelSchema },
      },
    },
    async (request) => channelDto(await channels.get(callerOf(request), request.params.id)),
  );

  app.put(
    '/notification-channels/:id',
    {
      config: { access: 'write', audit: 'notification_channel.update' },
      schema: {
        summary: 'Replace a notification channel',
        description:
          'Replaces name and settings (validated as in POST for the channel\'s type, which cannot change); enabled stays as it is when absent. ' +
          'A secret field omitted keeps its stored value, null clears an optional one. A stored password or token must be given again when the ' +
          `settings that say where it goes change (email host, port or security; ntfy server_url; telegram api_url). ${CHECKS} ${SCOPE}`,
        tags,
        params: idParams,
        body: updateChannelBody,
        response: { 200: channelSchema },
      },
    },
    async (request) => channelDto(await channels.update(callerOf(request), request.params.id, request.body)),
  );

  app.delete(
    '/notification-channels/:id',
    {
      config: { access: 'write', audit: 'notification_channel.delete' },
      schema: {
        summary: 'Delete a notification channel',
        description: `Its waiting notifications are dropped and rules stop naming it. ${SCOPE}`,
        tags,
        params: idParams,
        response: { 200: okSchema },
      },
    },
    async (request) => {
      await channels.delete(callerOf(request), request.params.id);
      return { ok: true as const };
    },
  );

  app.post(
    '/notification-channels/:id/test',
    {
      config: { access: 'write', audit: 'notification_channel.test' },
      schema: {
        summary: 'Send a test message through a channel',
        description:
          'Sends one message with test: true and a sample item now (also through a disabled channel), one try of at most 10 s, and answers what ' +
          "became of it: 200 with delivered false and the receiver's status and answer when it was not delivered. The try is recorded in the channel's status. " +
          SCOPE,
        tags,
        params: idParams,
        response: { 200: deliveryOutcomeSchema },
      },
    },
    async (request) => channels.test(callerOf(request), request.params.id),
  );
};
