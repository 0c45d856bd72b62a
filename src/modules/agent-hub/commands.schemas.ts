// REST commands (contract §6): each is one agent command with its body schema and how long the server
// waits for the answer. One table, so a new command is one entry, not a new route file.
import { z } from 'zod';
import { commandParams, execResultSchema, type AgentCommand } from './agent-protocol.js';

const MINUTE = 60_000;

export interface RestCommand<B extends z.ZodType = z.ZodType> {
  command: AgentCommand;
  path: string;
  summary: string;
  audit: string;
  body: B;
  /** How long the server waits for the agent's answer. */
  waitMs(body: z.infer<B>): number;
  /** Checks the agent's `data` for commands whose answer has a contract shape. */
  answer?: z.ZodType;
}

const define = <B extends z.ZodType>(c: RestCommand<B>) => c;

export const execBody = z.object({
  command: z.string().min(1).max(10_000),
  timeout: z.number().int().min(1).max(3600).default(60).describe('Seconds the agent lets the command run (default 60)'),
});

export const REST_COMMANDS = [
  define({
    command: 'exec',
    path: '/agents/:id/exec',
    summary: 'Run a shell command on the agent and wait for its exit code, stdout and stderr (waits timeout + 15 s)',
    audit: 'agent.exec',
    body: execBody,
    waitMs: (b) => (b.timeout + 15) * 1000,
    answer: execResultSchema.loose(),
  }),
  define({
    command: 'update_check',
    path: '/agents/:id/update-check',
    summary: 'Ask the agent which updates are available (waits 120 s)',
    audit: 'agent.update_check',
    body: z.object({}).default({}),
    waitMs: () => 2 * MINUTE,
  }),
  define({
    command: 'update',
    path: '/agents/:id/update',
    summary: 'Install core and package updates (waits 30 min)',
    audit: 'agent.update',
    body: z.object({ reboot: z.boolean().default(false), security_only: z.boolean().default(false) }).default({ reboot: false, security_only: false }),
    waitMs: () => 30 * MINUTE,
  }),
  define({
    command: 'major_update',
    path: '/agents/:id/major-update',
    summary: 'Upgrade to a new major version (waits 60 min)',
    audit: 'agent.major_update',
    body: z.object({ version: commandParams.major_update.shape.version, reboot: z.boolean().default(false) }),
    waitMs: () => 60 * MINUTE,
  }),
  define({
    command: 'reboot',
    path: '/agents/:id/reboot',
    summary: 'Reboot the device after `delay` seconds (waits 60 s for the acknowledgement)',
    audit: 'agent.reboot',
    body: z.object({ delay: z.number().int().min(0).max(86_400).default(0) }).default({ delay: 0 }),
    waitMs: () => MINUTE,
  }),
  define({
    command: 'hypervisor_action',
    path: '/agents/:id/hypervisor/action',
    summary: 'Start, stop (hard) or shut down (graceful, VMs only) a guest on a hypervisor host (waits 5 min)',
    audit: 'agent.hypervisor_action',
    body: commandParams.hypervisor_action.refine((b) => !(b.action === 'shutdown' && b.type === 'container'), {
      message: 'shutdown applies to VMs only; stop a container instead',
      path: ['action'],
    }),
    waitMs: () => 5 * MINUTE,
  }),
] as const;
