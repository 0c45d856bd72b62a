// How a request names its object, before any lookup: by route pattern and id, by a created object's id,
// and caller-controlled text made storable.
import { describe, expect, it } from 'vitest';
import { bounded, targetOf } from './audit-targets.js';

const route = (url: string, fields: Partial<Parameters<typeof targetOf>[0]> = {}) =>
  targetOf({ url: `/api/v1${url}`, method: 'POST', params: {}, statusCode: 201, payload: null, ...fields }, '/api/v1');

describe('targetOf', () => {
  it('takes the kind from the first segment and the id from the path', () => {
    expect(route('/agents/:id/customer', { method: 'PUT', params: { id: 'ab12' } })).toEqual({ kind: 'agent', id: 'ab12' });
    expect(route('/customers/:id', { method: 'DELETE', params: { id: 7 } })).toEqual({ kind: 'customer', id: '7' });
  });

  it('takes a created object id from a successful answer only', () => {
    expect(route('/tasks', { payload: '{"id":42,"name":"x"}' })).toEqual({ kind: 'task', id: '42' });
    expect(route('/firmware/upload', { payload: '{"id":3}' })).toEqual({ kind: 'firmware', id: '3' });
    expect(route('/tasks', { statusCode: 400, payload: '{"id":42}' })).toBeNull();
    expect(route('/tasks', { payload: 'not json' })).toBeNull();
  });

  it('names fixed objects and leaves others alone', () => {
    expect(route('/settings', { method: 'PUT' })).toEqual({ label: 'system settings' });
    expect(route('/agents/request-update-all')).toBeNull();
    expect(targetOf({ url: '/elsewhere', method: 'POST', params: {}, statusCode: 200, payload: null }, '/api/v1')).toBeNull();
  });
});

describe('bounded', () => {
  it('replaces NUL, control characters and lone surrogates, and cuts long text', () => {
    expect(bounded('a\u0000b\u0001c\ud800d')).toBe('a\ufffdb\ufffdc\ufffdd');
    expect(bounded('😀')).toBe('😀');
    const long = bounded('x'.repeat(500));
    expect(long).toHaveLength(200);
    expect(long.endsWith('…')).toBe(true);
  });
});
