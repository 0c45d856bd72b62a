// Named prepared statements for hot queries on PostgreSQL. Kysely sends every query unnamed, which
// PostgreSQL parses and plans anew each time; for the heartbeat batch's large statement that was about
// 40 % of its database CPU. A text registered here is sent by name instead: pg prepares it once per
// connection (and again on a new connection, after a restart), and PostgreSQL then reuses its plan.
// Only constant texts belong here (heartbeat-batch-statement.ts): each registered text is a prepared
// statement on every pooled connection for the connection's life. PGlite ignores the registry.
import type pg from 'pg';

const names = new Map<string, string>();

/** Registers `text` to be sent as a named prepared statement; returns it for use as the query's text. */
export function preparedText(text: string): string {
  if (!names.has(text)) names.set(text, `rmm_prepared_${names.size + 1}`);
  return text;
}

/** The name `text` is prepared under, or undefined when it is not registered. */
export function preparedNameOf(text: string): string | undefined {
  return names.get(text);
}

/** Makes `client` send registered texts by name (pg's `{ name, text, values }` form). */
export function preparingRegisteredTexts(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  // Kysely calls query(text, values); anything else (callbacks, config objects) passes through untouched.
  client.query = ((...args: unknown[]) => {
    const [text, values] = args;
    const name = typeof text === 'string' && args.length === 2 && Array.isArray(values) ? names.get(text) : undefined;
    return name === undefined ? query(...args) : query({ name, text, values });
  }) as typeof client.query;
}
