// WebSocket endpoints are declared with `wsHandler` plus this plain-HTTP handler instead of
// `websocket: true`: @fastify/websocket hides `websocket: true` routes from the OpenAPI document and
// answers a request without an upgrade with an empty 404. Declared this way they are documented with
// their access, schema and description, and a plain request (after the same authentication and checks
// as an upgrade) gets 426 with the contract's error body.
import { AppError } from '../platform/errors.js';

export const WEBSOCKET_ONLY_NOTE = ' A request without `Upgrade: websocket` gets 426 UPGRADE_REQUIRED after the same checks.';

export async function requireWebSocketUpgrade(): Promise<never> {
  throw new AppError('UPGRADE_REQUIRED', 'This endpoint is a WebSocket: connect with an Upgrade: websocket request', { headers: { upgrade: 'websocket' } });
}
