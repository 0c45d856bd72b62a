// Request and response shapes of the processes and services routes (issue 59). The answers are the
// agent's own (device-protocol.ts), checked before anything of them is returned.
import { z } from 'zod';
import { agentIdSchema } from '../agents/agents.schemas.js';
import { KILL_SIGNALS, procListResult, SERVICE_ACTIONS, serviceSchema, svcActionResult, svcListResult } from '../agent-hub/device-protocol.js';

export const processListSchema = procListResult.describe("The device's processes, as its agent read them just now");
export const serviceListSchema = svcListResult.describe("The device's services and the service manager they come from");
export const serviceActionSchema = svcActionResult.extend({ service: serviceSchema.describe('The service as it is after the action') });

export const killedSchema = z.object({}).strict().describe('The signal was sent (the process may take a moment to end)');

export const killParams = z.object({
  id: agentIdSchema,
  pid: z.coerce.number().int().min(1).max(2 ** 31 - 1).describe('The process id on the device'),
});

export const killBody = z
  .object({ signal: z.enum(KILL_SIGNALS).optional().describe('TERM unless given; Windows ends the process whatever the signal') })
  .strict()
  // A POST without a body arrives as null: the same as {}.
  .nullish();

/** What every service manager accepts as a name, and nothing a shell or a path could make use of. */
export const SERVICE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.@:+-]{0,254}$/;

export const serviceParams = z.object({
  id: agentIdSchema,
  name: z
    .string()
    .regex(SERVICE_NAME, 'a service name: letters, digits and . _ @ : + - only')
    .refine((n) => !n.includes('..'), 'a service name has no ".."')
    .describe('The service name as svc_list gives it'),
  action: z.enum(SERVICE_ACTIONS),
});
