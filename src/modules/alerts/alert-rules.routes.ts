// SKELETON (issue 31, being built): /alert-rules.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AlertRuleService } from './alert-rules.service.js';

export const alertRuleRoutes: FastifyPluginAsyncZod<{ rules: AlertRuleService }> = async (_app, _options) => {};
