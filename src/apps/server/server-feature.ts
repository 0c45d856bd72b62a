// What every feature of the RMM server is given and may provide. Each feature file adds the parts it
// provides to ServerParts, and the events it emits to ServerEvents, with `declare module` (so adding a
// feature touches its own folder and one line of build-app.ts); the compiler then checks every need and
// every subscription against them.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../../config/env.js';
import type { DbHandle } from '../../db/create-db.js';
import { featureOf } from '../../http/features.js';
import type { PtyLoader } from '../../modules/terminal/pty-module.js';
import type { Clock } from '../../platform/clock.js';
import type { EventBus } from '../../platform/event-bus.js';
import type { Logger } from '../../platform/logger.js';
import type { ServerSecrets } from '../../platform/server-secrets.js';
import type { LeaderWork } from '../../modules/cluster/leader-work.js';

export const API_PREFIX = '/api/v1';

export interface ServerDeps {
  config: Config;
  db: DbHandle;
  logger: Logger;
  secrets: ServerSecrets;
  clock?: Clock;
  /** bcrypt cost; lower only in tests. */
  bcryptRounds?: number;
  /** Registrations and heartbeats in progress at most, before agents are refused as overloaded; lower only in tests. */
  maxAgentRequestsInFlight?: number;
  /** Registrations among them, at most (agent-protocol.routes.ts); the product's default otherwise. */
  maxRegistrationsInFlight?: number;
  /** Start the features (hub, runners, periodic jobs) when the app is ready; tests drive them directly instead. */
  backgroundJobs?: boolean;
  /** TLS key and certificate (PEM) when the server terminates TLS itself. */
  https?: { key: Buffer; cert: Buffer };
  /** Loads the web terminal's PTY library (the real one by default); tests make it fail as a missing binary does. */
  loadPty?: PtyLoader;
}

/** Parts provided by the features (each feature file adds its own). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ServerParts {}

/** Domain events, by name, with their payloads (each emitting feature adds its own). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface ServerEvents {}

/** What every feature is given besides the parts it needs. */
export interface ServerContext {
  app: FastifyInstance;
  deps: ServerDeps;
  config: Config;
  db: DbHandle;
  logger: Logger;
  clock: Clock;
  events: EventBus<ServerEvents>;
  /** Work that runs once per installation: here, or on the cluster's leader (the leadership feature starts it). */
  leaderWork: LeaderWork;
}

export const serverFeature = featureOf<ServerContext, ServerParts>();
