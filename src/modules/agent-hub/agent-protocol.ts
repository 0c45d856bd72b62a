// The agent WebSocket protocol (contract §5), shared by the server's hub and the reference agent: every
// text frame either side sends or accepts is one of these zod schemas, and binary frames carry tunnel
// bytes behind a session-id header. A frame that does not parse is dropped by the receiver, never thrown.
import type { OnReadOpts } from 'node:net';
import { z } from 'zod';
import { checkResultsFrameSchema, checksSetParams } from '../checks/check-protocol.js';
import { deviceCommandParams, helloFrameSchema, sessionClosedFrameSchema } from './device-protocol.js';

/** The largest message either side accepts; a larger one closes the socket with 1009. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

const id = z.string().min(1).max(128);
const sessionId = z.string().min(1).max(255);

/** Parameters of every command the server can send (contract §5 table). */
export const commandParams = {
  exec: z.object({ command: z.string().min(1).max(10_000), timeout: z.number().int().min(1).max(3600) }),
  update_check: z.object({}),
  update: z.object({ reboot: z.boolean(), security_only: z.boolean().optional() }),
  major_update: z.object({ version: z.string().min(1).max(100), reboot: z.boolean() }),
  reboot: z.object({ delay: z.number().int().min(0).max(86_400) }),
  backup: z.object({}),
  vpn_peer_add: z.object({
    name: z.string().min(1).max(255),
    server_name: z.string().min(1).max(255),
    allowed_ips: z.string().min(1).max(1000),
    dns: z.string().max(255).optional(),
    endpoint: z.string().max(255).optional(),
  }),
  vpn_peer_list: z.object({ server_name: z.string().min(1).max(255).optional() }),
  vpn_peer_delete: z.object({ uuid: z.string().min(1).max(64) }),
  hypervisor_action: z.object({
    action: z.enum(['start', 'stop', 'shutdown']),
    vmid: z.number().int().min(100),
    type: z.enum(['vm', 'container']),
    node: z.string().min(1).max(255).optional(),
  }),
  tunnel_connect: z.object({ session_id: sessionId, tunnel_id: z.string().min(1).max(128), target_host: z.string().min(1).max(255), target_port: z.number().int().min(1).max(65_535) }),
  tunnel_disconnect: z.object({ session_id: sessionId }),
  // Optional per-session flow control (issue 29): stop and restart reading one session's target while its
  // client is slow. An agent without them answers `unknown command` (or nothing), and the server then
  // bounds what it holds for such a client instead (see tunnel-session.ts).
  tunnel_pause: z.object({ session_id: sessionId }),
  tunnel_resume: z.object({ session_id: sessionId }),
  // Hands on the device (issue 59): shell, files, processes, services; see device-protocol.ts.
  ...deviceCommandParams,
  // Checks (issue 61): the agent's whole effective set; see checks/check-protocol.ts.
  checks_set: checksSetParams,
} as const;

/** The optional tunnel_pause / tunnel_resume pair as the agent socket's OpenAPI description states it. */
export const TUNNEL_FLOW_CONTROL_DOC =
  'Optional tunnel flow control: when more than 1 MiB waits for one session\'s client, the server sends `{"type":"command","id":…,"command":"tunnel_pause","params":{"session_id":…}}`, and `tunnel_resume` with the same params once that client is down to 256 KiB. ' +
  'An agent that supports them stops (pause) and restarts (resume) reading that session\'s target socket only (bytes already sent still arrive), and answers `{"type":"response","id":…,"success":true,"data":{}}`, also for a session it does not know. ' +
  'The server learns from the first answer on each socket: `success:false` (such as `unknown command tunnel_pause`) or no answer within 5 s means the agent cannot pause, and nothing more is asked of it on that socket; then at most 8 MiB wait for a slow client, which is then reset (TCP RST, or WebSocket close 4413) while the agent gets `tunnel_disconnect`. The server never stops reading the agent\'s socket for a slow client.';

export type AgentCommand = keyof typeof commandParams;
export type CommandParams<C extends AgentCommand> = z.infer<(typeof commandParams)[C]>;
export const AGENT_COMMANDS = Object.keys(commandParams) as AgentCommand[];

/** Server → agent. */
export const commandFrameSchema = z.object({
  type: z.literal('command'),
  id,
  command: z.string().min(1).max(64),
  params: z.record(z.string(), z.unknown()).default({}),
});
export type CommandFrame = z.infer<typeof commandFrameSchema>;

/**
 * Agent → server: the answer to one command (matched by id), a tunnel session the target closed, the
 * agent's capabilities (hello, on every new socket), the end of a device session's stream, or check results.
 */
export const agentFrameSchema = z.discriminatedUnion('type', [
  z.discriminatedUnion('success', [
    z.object({ type: z.literal('response'), id, success: z.literal(true), data: z.unknown().optional() }),
    z.object({ type: z.literal('response'), id, success: z.literal(false), error: z.string().max(65_536).optional() }),
  ]),
  z.object({ type: z.literal('tunnel_closed'), session_id: sessionId }),
  helloFrameSchema,
  sessionClosedFrameSchema,
  checkResultsFrameSchema,
]);
export type AgentFrame = z.infer<typeof agentFrameSchema>;

/** Data of the answers the server reads fields from; other commands' data is passed through as is. */
export const execResultSchema = z.object({ exit_code: z.number().int().nullable(), stdout: z.string(), stderr: z.string() });
export const backupResultSchema = z.object({ content: z.string() });

/**
 * Parses one text frame. JSON that is not an object of a known shape gives the reason instead, so the
 * receiver can log and count it.
 */
export function parseFrame<T>(schema: z.ZodType<T>, text: string): { ok: true; frame: T } | { ok: false; reason: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'not JSON' };
  }
  const result = schema.safeParse(json);
  return result.success ? { ok: true, frame: result.data } : { ok: false, reason: result.error.issues[0]?.message ?? 'invalid frame' };
}

/** Binary tunnel frame: 1 byte session-id length L, L bytes of ASCII session id, then the payload. */
/** The bytes in front of a session's payload: the id's length, then the id. */
export function tunnelFrameHeader(session: string): Buffer {
  const id = Buffer.from(session, 'ascii');
  if (id.length === 0 || id.length > 255) throw new RangeError('session id must be 1 to 255 ASCII bytes');
  return Buffer.concat([Buffer.from([id.length]), id]);
}

export function encodeTunnelFrame(session: string, payload: Uint8Array): Buffer {
  return Buffer.concat([tunnelFrameHeader(session), payload]);
}

/** What a tunnel socket reads at most at once (see tunnelFrameReads). */
export const TUNNEL_READ_BYTES = 256 * 1024;

/**
 * `onread` options for a socket whose bytes become a session's frames without a copy: a read lands in a
 * buffer right behind the header, and `onFrame` gets header and bytes as one frame. Large reads mean
 * fewer, larger frames, and each frame costs the relay on the far end per message (a write, callbacks),
 * not only per byte. A read that filled less than a quarter of its buffer is copied out instead, and the
 * buffer is read into again: otherwise every small read (an interactive session's keystrokes) would pin
 * a whole buffer for as long as its frame waits in the send queue.
 */
export function tunnelFrameReads(session: string, onFrame: (frame: Buffer) => void, readSize = TUNNEL_READ_BYTES): OnReadOpts {
  const header = tunnelFrameHeader(session);
  let frame: Buffer | undefined;
  return {
    buffer: () => {
      if (!frame) {
        frame = Buffer.allocUnsafe(header.length + readSize);
        header.copy(frame);
      }
      return frame.subarray(header.length);
    },
    callback: (bytes: number) => {
      const filled = frame!.subarray(0, header.length + bytes);
      if (bytes < readSize / 4) {
        onFrame(Buffer.from(filled));
      } else {
        frame = undefined; // handed over with its frame; the next read gets a fresh one
        onFrame(filled);
      }
      return true; // keep reading; backpressure pauses the socket itself
    },
  };
}

/** Whether a binary frame starts with a session id at all (a cheap check; the id may still be unknown). */
export function isTunnelFrame(frame: Buffer): boolean {
  const length = frame[0];
  return length !== undefined && length > 0 && frame.length >= 1 + length;
}

export function decodeTunnelFrame(frame: Buffer): { sessionId: string; payload: Buffer } | null {
  if (!isTunnelFrame(frame)) return null;
  const length = frame[0]!;
  return { sessionId: frame.subarray(1, 1 + length).toString('ascii'), payload: frame.subarray(1 + length) };
}
