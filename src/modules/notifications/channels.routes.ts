// SKELETON (issue 31, being built): /notification-channels.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { ChannelService } from './channels.service.js';

export const notificationChannelRoutes: FastifyPluginAsyncZod<{ channels: ChannelService }> = async (_app, _options) => {};
