// A heartbeat as the route hands it to the writer (heartbeat-writer.ts), and as it waits for its batch.
// Their own file because both the writer and the batch statement (heartbeat-batch-statement.ts) read
// them, and the writer imports the statement.
import type { Platform } from '../../db/schema.js';
import type { CustomerScope } from '../auth/caller.js';
import type { SystemCuts } from './system-cuts.js';
import type { SystemFacts } from './system-facts.js';

export interface HeartbeatInput {
  agentId: string;
  platform: Platform;
  hostname: string | null;
  agentVersion: string | null;
  agentSha256: string | null;
  /** The request body exactly as received, in valid UTF-8; stored and served as is. */
  raw: Buffer;
  /** The same body, parsed once: read (system facts, extensions) when the heartbeat is handed over, not kept. */
  parsed: Record<string, unknown>;
  /** Hint of the API key that sent it, or null for a signed-in user. */
  keyHint: string | null;
  scope: CustomerScope;
  receivedAt: Date;
}

/**
 * A heartbeat waiting for its batch: everything the batch needs of the parsed body was read out when it
 * was handed over. A parsed body is hundreds to thousands of small objects (a firewall's 34 KB of JSON);
 * kept until its batch commits, any young-generation collection meanwhile copies it. The body's bytes
 * are a Buffer, outside the JavaScript heap, for the same reason.
 */
export interface PendingHeartbeat extends Omit<HeartbeatInput, 'parsed'> {
  /** The agent row's columns read from the body (system-facts.ts). */
  system: SystemFacts;
  /** Where the body is cut for storage: its large members stored once per agent (system-cuts.ts). */
  cuts: SystemCuts;
  /** What each extension read from the body, in the extensions' order. */
  readings: readonly unknown[];
}
