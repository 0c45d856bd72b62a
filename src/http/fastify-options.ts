// The RMM server's Fastify options: the request log's controller, request ids, the proxies it trusts,
// the default body limit, answers during shutdown in the contract's body, and TLS when it terminates it.
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config/env.js';
import type { Logger } from '../platform/logger.js';
import type { AgentTrafficLogController } from './agent-traffic-log.js';
import { frameworkErrorHandler } from './input-guard.js';
import { generateRequestId } from './request-id.js';

const DEFAULT_BODY_LIMIT = 1024 * 1024;

export function serverOptions(options: { config: Config; logger: Logger; trafficLog: AgentTrafficLogController; https?: { key: Buffer; cert: Buffer } | undefined }): FastifyServerOptions {
  return {
    loggerInstance: options.logger,
    logController: options.trafficLog,
    genReqId: generateRequestId,
    trustProxy: toFastifyTrustProxy(options.config.trustProxy),
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Our error handler answers requests that arrive during shutdown, in the contract's error body.
    return503OnClosing: false,
    frameworkErrors: frameworkErrorHandler(),
    ...(options.https ? { https: options.https } : {}),
  };
}

/** A hop count becomes "trust the nearest N proxies" (Fastify's types take no number). */
function toFastifyTrustProxy(value: Config['trustProxy']): FastifyServerOptions['trustProxy'] {
  return typeof value === 'number' ? (_address: string, hop: number) => hop < value : value;
}
