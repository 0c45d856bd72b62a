// The heartbeat body's validator. The schema (heartbeatBody, a loose object: the declared fields
// checked, everything else kept) is the route's contract and its OpenAPI; validated by zod as a whole,
// every heartbeat's body was copied key by key into a new object, about 2.6 KB of the 95 KB a heartbeat
// allocates (fleet-scale allocation profile, bench/README.md 2026-11-27, night), and the copy was among
// what young-generation collections found alive while heartbeats waited. Here zod checks only the declared
// fields, picked out, and their checked values (agent_id lowercased, hostname trimmed) are written back
// into the parsed body, which is the request's own. Anything that is not a plain object, and any body
// whose fields fail, goes through zod whole, so the refusals are zod's as before.
import type { FastifySchemaCompiler } from 'fastify';
import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { heartbeatBody } from './agents.schemas.js';
import { isObject } from './system-facts.js';

const declaredFields = z.object(heartbeatBody.shape);
const fieldNames = Object.keys(heartbeatBody.shape);

/** The route's validatorCompiler: for heartbeatBody the picked-fields path, anything else as the app's. */
export const heartbeatValidatorCompiler: FastifySchemaCompiler<unknown> = (route) => {
  const whole = validatorCompiler(route as Parameters<typeof validatorCompiler>[0]);
  if (route.schema !== heartbeatBody) return whole;
  return (body: unknown) => {
    if (isObject(body)) {
      const picked: Record<string, unknown> = {};
      for (const name of fieldNames) if (Object.hasOwn(body, name)) picked[name] = body[name];
      const checked = declaredFields.safeParse(picked);
      if (checked.success) return { value: Object.assign(body, checked.data) };
    }
    return whole(body);
  };
};
