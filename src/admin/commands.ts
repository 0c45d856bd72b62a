// Admin commands (`npm run cli -- <command>`): user and key management for operators at the console.
// They run against the services directly; when the embedded database is held by the running server,
// the CLI hands the same command to the server over its admin socket (src/admin/admin-socket.ts).
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import type { CoreServices } from '../apps/server/services.js';
import type { Permission } from '../db/schema.js';
import { internalCaller, type Caller } from '../modules/auth/caller.js';
import { passwordSchema } from '../modules/users/passwords.js';
import { usernameSchema } from '../modules/users/users.schemas.js';
import { AppError } from '../platform/errors.js';

export interface AdminRequest {
  argv: string[];
  /** A password read from stdin by the CLI (`--password-stdin`); never passed on the command line. */
  password?: string;
}

export interface AdminContext {
  services: CoreServices;
  out(line: string): void;
}

interface AdminCommand {
  usage: string;
  summary: string;
  run(args: string[], ctx: AdminContext, request: AdminRequest): Promise<void>;
}

/** The CLI acts with full rights, as the operator who owns the server's files. */
const CONSOLE: Caller = internalCaller('console');
const PERMISSIONS: readonly Permission[] = ['agent', 'read', 'write', 'admin'];

class UsageError extends Error {}

function chosenPassword(request: AdminRequest, ctx: AdminContext): string {
  if (request.password !== undefined) {
    const checked = passwordSchema.safeParse(request.password);
    if (!checked.success) throw new UsageError(`password ${checked.error.issues[0]?.message ?? 'is invalid'}`);
    return request.password;
  }
  const generated = randomBytes(15).toString('base64url');
  ctx.out(`generated password: ${generated}`);
  return generated;
}

function oneName(args: string[], what: string): string {
  const [name, ...rest] = args;
  if (!name || rest.length > 0) throw new UsageError(`expected exactly one ${what}`);
  return name;
}

export const ADMIN_COMMANDS: Record<string, AdminCommand> = {
  'user create': {
    usage: 'user create <username> [--password-stdin]',
    summary: 'create a user (password from stdin, or generated and printed once)',
    async run(args, ctx, request) {
      const username = oneName(args, 'username');
      if (!usernameSchema.safeParse(username).success) throw new UsageError('invalid username');
      const user = await ctx.services.users.create({ username, password: chosenPassword(request, ctx) });
      ctx.out(`created user ${user.username} (id ${user.id})`);
    },
  },
  'user reset-password': {
    usage: 'user reset-password <username> [--password-stdin]',
    summary: "set a user's password and end the user's sessions",
    async run(args, ctx, request) {
      const user = await ctx.services.users.getByName(oneName(args, 'username'));
      await ctx.services.users.setPassword(user.id, chosenPassword(request, ctx));
      ctx.out(`password of ${user.username} changed; the user's sessions have ended`);
    },
  },
  'user disable-2fa': {
    usage: 'user disable-2fa <username>',
    summary: 'turn off two-factor login for a user who lost the authenticator',
    async run(args, ctx) {
      const user = await ctx.services.users.disableTwoFactorByName(oneName(args, 'username'));
      ctx.out(`two-factor login of ${user.username} is off; the user's sessions have ended`);
    },
  },
  'user make-admin': {
    usage: 'user make-admin <username>',
    summary: "make a user an admin with every customer (recovery when no one can manage users); ends the user's sessions",
    async run(args, ctx) {
      const user = await ctx.services.users.getByName(oneName(args, 'username'));
      await ctx.services.users.changeAccess(user.id, { role: 'admin', customer_ids: null });
      ctx.out(`${user.username} is now an admin with every customer; the user's sessions have ended`);
    },
  },
  'user remove-passkeys': {
    usage: 'user remove-passkeys <username>',
    summary: "remove every passkey of a user who lost them, and end the user's sessions",
    async run(args, ctx) {
      const user = await ctx.services.users.getByName(oneName(args, 'username'));
      const removed = await ctx.services.passkeys.removeAll(user.id);
      ctx.out(`removed ${removed} passkey(s) of ${user.username}; the user's sessions have ended`);
    },
  },
  'apikey create': {
    usage: 'apikey create <name> --permissions agent|read|write|admin [--customer-id N]',
    summary: 'create an API key and print it (the only time it is shown)',
    async run(args, ctx) {
      const { values, positionals } = parseArgs({
        args,
        allowPositionals: true,
        options: { permissions: { type: 'string' }, 'customer-id': { type: 'string' } },
      });
      const name = oneName(positionals, 'key name');
      const permissions = values.permissions as Permission | undefined;
      if (!permissions || !PERMISSIONS.includes(permissions)) throw new UsageError('--permissions must be agent, read, write or admin');
      const customer = values['customer-id'];
      if (customer !== undefined && !/^\d+$/.test(customer)) throw new UsageError('--customer-id must be a number');
      const created = await ctx.services.apiKeys.create(CONSOLE, {
        name,
        permissions,
        customer_id: customer === undefined ? null : Number(customer),
      });
      ctx.out(`created API key ${created.key_hint} (id ${created.id}, ${created.permissions}${created.customer_id ? `, customer ${created.customer_id}` : ''}):`);
      ctx.out(created.key);
    },
  },
};

/** Finds the command named by the first one or two words of argv. */
export function findAdminCommand(argv: string[]): { command: AdminCommand; args: string[] } | undefined {
  const two = ADMIN_COMMANDS[argv.slice(0, 2).join(' ')];
  return two ? { command: two, args: argv.slice(2) } : undefined;
}

/** Runs an admin command; returns the exit code. Errors become one line on `out`. */
export async function runAdminCommand(request: AdminRequest, ctx: AdminContext): Promise<number> {
  const found = findAdminCommand(request.argv.filter((a) => a !== '--password-stdin'));
  if (!found) {
    ctx.out(`unknown command: ${request.argv.join(' ')}`);
    return 2;
  }
  try {
    await found.command.run(found.args, ctx, request);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      ctx.out(`${err.message}\nusage: ${found.command.usage}`);
      return 2;
    }
    if (err instanceof AppError) {
      ctx.out(err.message);
      return 1;
    }
    throw err;
  }
}
