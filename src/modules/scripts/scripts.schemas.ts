// Script request and response shapes (issue 33, Build 3).
import { z } from 'zod';
import { timestampSchema, withoutNul } from '../../http/common-schemas.js';
import { platformSchema } from '../agents/agents.schemas.js';

const SHELLS = ['sh', 'bash', 'powershell', 'cmd'] as const;

const parameterSchema = z.object({
  name: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'a letter or _, then letters, digits or _ (at most 64)')
    .describe('Reaches the script as an environment variable: $NAME (sh, bash), $env:NAME (PowerShell), %NAME% (cmd)'),
  default: withoutNul(z.string().max(1000)).default(''),
  description: z.string().max(500).default(''),
});

export const scriptBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(2000).default(''),
    shell: z.enum(SHELLS),
    body: withoutNul(z.string().min(1).max(10_000)),
    parameters: z
      .array(parameterSchema)
      .max(20)
      .default([])
      .refine((list) => new Set(list.map((p) => p.name.toLowerCase())).size === list.length, 'parameter names must differ (ignoring case)'),
    platforms: z
      .array(platformSchema)
      .min(1)
      .refine((list) => new Set(list).size === list.length, 'each platform once')
      .describe('The platforms it may run on; running it elsewhere is 409'),
  })
  .strict();

export const scriptSchema = scriptBody
  .extend({ id: z.number().int(), parameters: z.array(parameterSchema.required()), created_at: timestampSchema, updated_at: timestampSchema })
  .meta({ id: 'Script' });

export const scriptRunParams = {
  parameters: z.record(z.string(), withoutNul(z.string().max(1000))).optional().describe('Values by parameter name; a missing one takes its default, an unknown one is 400'),
  timeout: z.number().int().min(1).max(3600).default(60).describe('Seconds the agent lets it run (default 60)'),
};

