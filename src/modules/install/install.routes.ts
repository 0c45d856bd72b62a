// Onboarding routes (issue 33): POST /install-commands makes an (enrollment) agent key and the one-line
// install commands that use it; GET /install/agent.sh and /install/agent.ps1 are the scripts those
// commands fetch with that key.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf } from '../../http/auth.js';
import { idRefSchema } from '../../http/common-schemas.js';
import { createdApiKeySchema, toApiKeyDto } from '../api-keys/api-keys.schemas.js';
import { agentIdSchema, platformSchema } from '../agents/agents.schemas.js';
import type { InstallService } from './install.service.js';

const tags = ['installer'];

const commandsBody = z
  .object({
    agent_id: agentIdSchema.optional().describe('A pre-registered agent: the commands adopt it (its name and customer)'),
    customer_id: idRefSchema.nullable().optional().describe("Install for this customer (without agent_id); a customer-scoped caller's own by default"),
    expires_in_days: z.number().int().min(1).max(365).nullable().optional().describe('Enrollment key: it stops working after this many days. Absent or null: never'),
    max_uses: z.number().int().min(1).max(10_000).nullable().optional().describe('Enrollment key: it stops working after this many installs. Absent or null: unlimited'),
  })
  .strict();

const commandSchema = z.object({
  platform: platformSchema,
  shell: z.enum(['sh', 'powershell']).describe('sh: run as root on Linux or FreeBSD; powershell: run in an elevated Windows PowerShell'),
  command: z.string().describe('The one-line command; it holds the key, treat it as a secret'),
  problem: z.string().nullable().describe('Why it cannot install yet (no agent binary or installer package uploaded), else null'),
});

const commandsResponse = z
  .object({
    server_url: z.string().describe('The backend_url setting the commands and the installed agents use'),
    agent_name: z.string().nullable(),
    customer_id: z.number().int().nullable(),
    key: createdApiKeySchema.describe('The new agent key the commands carry, shown only here'),
    commands: z.array(commandSchema),
  })
  .meta({ id: 'InstallCommands' });

// No control characters: the name goes into a script that runs as root.
const scriptName = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[^\p{Cc}]*$/u, 'must not contain control characters')
  .optional()
  .describe('Adopt the pre-registered agent of this name (default: the device\'s hostname)');

const scriptDescription =
  'Counts one use of the presented key (401 once it is expired or used up) and carries the agent key the ' +
  "installed agent keeps: its customer's installer key for a customer-scoped key (made on first use), the " +
  'installer_api_key setting for an unscoped one (409 when not set). 409 as well when backend_url is not set or ' +
  'nothing is uploaded to install. Nothing is counted on an error.';

export const installRoutes: FastifyPluginAsyncZod<{ install: InstallService }> = async (app, { install }) => {
  app.post(
    '/install-commands',
    {
      config: { access: 'write', audit: 'install.commands' },
      schema: {
        summary: 'Make an agent key and the one-line install commands that use it',
        description:
          'For a pre-registered agent (`agent_id`) or a customer. The key is a new customer-scoped `agent` key; with ' +
          '`expires_in_days` or `max_uses` it is an enrollment key (see POST /apikeys). Each command fetches the ' +
          "platform's install script (GET /install/agent.sh, /install/agent.ps1) with the key. 409 when `backend_url` is " +
          'not set, or for an agent without a customer when `installer_api_key` is not set; nothing is made then.',
        tags,
        body: commandsBody,
        response: { 201: commandsResponse },
      },
    },
    async (request, reply) => {
      const made = await install.commands(callerOf(request), request.body);
      return reply.code(201).send({ ...made, key: { ...toApiKeyDto(made.key), key: made.key.key } });
    },
  );

  app.get(
    '/install/agent.sh',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'The install script for Linux and FreeBSD (POSIX sh)',
        description:
          "Downloads the platform's latest firmware (the agent binary) into RMM_INSTALL_DIR (default /opt/rmm-agent, " +
          'FreeBSD /usr/local/rmm-agent), writes its settings readable by root only, and starts it as a systemd or rc.d ' +
          'service (RMM_NO_SERVICE=1: in the background). ' +
          scriptDescription,
        tags,
        querystring: z.object({ platform: z.enum(['linux', 'freebsd']), name: scriptName }),
        response: { 200: { description: 'The script', content: { 'text/x-shellscript': { schema: z.string() } } } },
      },
    },
    async (request, reply) => {
      const script = await install.script(callerOf(request), 'sh', request.query.platform, request.query.name ?? null);
      return reply.type('text/x-shellscript; charset=utf-8').header('cache-control', 'no-store').send(script);
    },
  );

  app.get(
    '/install/agent.ps1',
    {
      config: { access: 'agent' },
      schema: {
        summary: 'The install script for Windows (PowerShell 5.1 and later)',
        description:
          "Downloads the customer's installer package (GET /installer/download, with rmm-agent.json) into RMM_INSTALL_DIR " +
          "(default Program Files\\RMM Agent) and runs the package's install.ps1 (-AgentName, -ConfigFile) or else its MSI " +
          '(properties RMM_AGENT_NAME, RMM_CONFIG). ' +
          scriptDescription,
        tags,
        querystring: z.object({ name: scriptName }),
        response: { 200: { description: 'The script', content: { 'text/plain': { schema: z.string() } } } },
      },
    },
    async (request, reply) => {
      const script = await install.script(callerOf(request), 'ps1', 'windows', request.query.name ?? null);
      return reply.type('text/plain; charset=utf-8').header('cache-control', 'no-store').send(script);
    },
  );
};
