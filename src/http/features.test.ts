import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { composeFeatures, featureOf } from './features.js';

interface Parts {
  clock: { now(): number };
  greeter: { greet(name: string): string };
}
const feature = featureOf<{ log: string[] }, Parts>();

const clockFeature = feature({
  name: 'clock',
  needs: [],
  setup: ({ log }) => ({
    provides: { clock: { now: () => 42 } },
    start: () => void log.push('start clock'),
    stop: () => void log.push('stop clock'),
  }),
});
const greeterFeature = feature({
  name: 'greeter',
  needs: ['clock'],
  setup: ({ log, clock }) => ({
    provides: { greeter: { greet: (name) => `hello ${name} at ${clock.now()}` } },
    routes(api) {
      api.get('/hello', async () => ({ text: `hello at ${clock.now()}` }));
    },
    start: () => void log.push('start greeter'),
    stop() {
      log.push('stop greeter');
      throw new Error('stuck');
    },
  }),
});

async function compose(features: Parameters<typeof composeFeatures<{ log: string[] }, Parts>>[2], start = true) {
  const app = Fastify();
  const log: string[] = [];
  const errors: string[] = [];
  await composeFeatures(app, { log }, features, { prefix: '/api', start, logger: { error: (obj: unknown, msg?: string) => void errors.push(`${msg}: ${(obj as { feature: string }).feature}`) } });
  return { app, log, errors };
}

describe('composeFeatures', () => {
  it('sets features up in order, registers their routes under the prefix, starts in order and stops in reverse', async () => {
    const { app, log, errors } = await compose([clockFeature, greeterFeature]);
    await app.ready();
    expect((await app.inject({ url: '/api/hello' })).json()).toEqual({ text: 'hello at 42' });
    expect(log).toEqual(['start clock', 'start greeter']);
    await app.close();
    // The greeter's failed stop is logged and the clock still stops.
    expect(log.slice(2)).toEqual(['stop greeter', 'stop clock']);
    expect(errors).toEqual(['a feature failed to stop: greeter']);
  });

  it('without start, features are set up and stopped but never started (tests drive them)', async () => {
    const { app, log } = await compose([clockFeature, greeterFeature], false);
    await app.ready();
    await app.close();
    expect(log).toEqual(['stop greeter', 'stop clock']);
  });

  it('refuses a feature listed before the one that provides what it needs, naming both', async () => {
    await expect(compose([greeterFeature, clockFeature])).rejects.toThrow('feature "greeter" needs clock, which no feature listed before it provides');
  });

  it('refuses a second provider of a part', async () => {
    const other = feature({ name: 'other clock', needs: [], setup: () => ({ provides: { clock: { now: () => 0 } } }) });
    await expect(compose([clockFeature, other])).rejects.toThrow('feature "other clock" provides clock, which a feature listed before it already provides');
  });

  it('a setup sees the parts it names and no others', async () => {
    let seen: string[] = [];
    const nosy = feature({ name: 'nosy', needs: [], setup: (context) => ((seen = Object.keys(context)), {}) });
    await compose([clockFeature, nosy]);
    expect(seen).toEqual(['log']);
  });
});
