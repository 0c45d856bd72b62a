// SKELETON (issue 31, being built): /maintenance-windows.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { MaintenanceWindowService } from './maintenance-windows.service.js';

export const maintenanceWindowRoutes: FastifyPluginAsyncZod<{ windows: MaintenanceWindowService }> = async (_app, _options) => {};
