import { validatorCompiler } from 'fastify-type-provider-zod';
import { describe, expect, it } from 'vitest';
import { heartbeatBody } from './agents.schemas.js';
import { heartbeatValidatorCompiler } from './heartbeat-body-validator.js';

const route = { schema: heartbeatBody, method: 'POST', url: '/api/v1/agent/heartbeat', httpPart: 'body' };
const validate = heartbeatValidatorCompiler(route) as (body: unknown) => { value?: unknown; error?: unknown };
const whole = validatorCompiler(route) as (body: unknown) => { value?: unknown; error?: unknown };

describe('heartbeat body validator', () => {
  it('checks the declared fields in the body itself, without copying it', () => {
    const body = { agent_id: 'ABCDEF0123456789', platform: 'linux', hostname: '  pc-1 ', disks: [{ mount: '/' }] };
    const disks = body.disks;
    const { value, error } = validate(body);
    expect(error).toBeUndefined();
    expect(value).toBe(body);
    expect(value).toMatchObject({ agent_id: 'abcdef0123456789', platform: 'linux', hostname: 'pc-1' });
    expect(body.disks).toBe(disks);
    expect(value).toEqual(whole({ agent_id: 'ABCDEF0123456789', platform: 'linux', hostname: '  pc-1 ', disks: [{ mount: '/' }] }).value);
  });

  it.each([
    ['a bad agent_id', { agent_id: 'xyz', platform: 'linux' }],
    ['no platform', { agent_id: 'abcdef0123456789' }],
    ['an array', [{ agent_id: 'abcdef0123456789', platform: 'linux' }]],
    ['null', null],
  ])('refuses %s with the same error as the whole schema', (_case, body) => {
    const { value, error } = validate(body);
    expect(value).toBeUndefined();
    expect(error).toBeDefined();
    expect(error).toEqual(whole(body).error);
  });

  it('leaves other schemas to the usual compiler', () => {
    const other = heartbeatValidatorCompiler({ ...route, schema: heartbeatBody.pick({ platform: true }) }) as (body: unknown) => { value?: unknown };
    const body = { platform: 'linux', extra: 1 };
    expect(other(body).value).not.toBe(body);
  });
});
