// One shape for every feature of an app (house rule 11): a name, the parts it needs from the features
// listed before it, and a setup that returns what it provides, its routes, and its start and stop.
// composeFeatures runs the setups in the listed order, checking each feature's needs (a feature listed
// too early fails at start-up with one line naming what it lacks), registers every feature's routes once
// all are set up, starts them in the listed order when the app is ready and stops them in reverse when
// it closes. The order of a list is the whole wiring: nothing else in an app's build file.
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';

export interface FeatureSetup<Provides> {
  /** Parts the features listed after this one may need (each name provided once). */
  provides?: Provides;
  /** Routes under the app's API prefix. */
  routes?(api: FastifyInstance): PromiseLike<unknown> | void;
  /** Routes outside it (health, metrics, the console's files). */
  rootRoutes?(app: FastifyInstance): PromiseLike<unknown> | void;
  /** Runs when the app is ready, after the start of every feature listed before. */
  start?(): Promise<void> | void;
  /** Runs when the app closes, before the stop of every feature listed before (reverse order). */
  stop?(): Promise<void> | void;
}

export interface Feature<Context, Parts> {
  readonly name: string;
  readonly needs: readonly (keyof Parts)[];
  setup(context: Context & Partial<Parts>): Promise<FeatureSetup<Partial<Parts>>> | FeatureSetup<Partial<Parts>>;
}

/**
 * Defines a feature of an app whose base context is `Context` and whose parts are `Parts`: the setup
 * sees the context and exactly the parts it names in `needs`, typed.
 */
export function featureOf<Context, Parts>() {
  return <const Needs extends keyof Parts>(definition: {
    name: string;
    needs: readonly Needs[];
    setup(context: Context & Pick<Parts, Needs>): Promise<FeatureSetup<Partial<Parts>>> | FeatureSetup<Partial<Parts>>;
  }): Feature<Context, Parts> => definition as unknown as Feature<Context, Parts>;
}

export interface CompositionOptions {
  /** Prefix of the API routes. */
  prefix: string;
  /** Start the features when the app is ready (tests that drive jobs themselves turn it off). */
  start: boolean;
  /** Where a stop that failed is reported; the other stops still run. */
  logger: Pick<FastifyBaseLogger, 'error'>;
}

export async function composeFeatures<Context extends object, Parts>(
  app: FastifyInstance,
  context: Context,
  features: ReadonlyArray<Feature<Context, Parts>>,
  options: CompositionOptions,
): Promise<void> {
  const parts = new Map<PropertyKey, unknown>();
  const ready: Array<{ name: string } & FeatureSetup<unknown>> = [];
  for (const feature of features) {
    const missing = feature.needs.filter((need) => !parts.has(need));
    if (missing.length > 0) {
      throw new Error(`feature "${feature.name}" needs ${missing.map(String).join(', ')}, which no feature listed before it provides`);
    }
    const view = { ...context } as Record<PropertyKey, unknown>;
    for (const need of feature.needs) view[need] = parts.get(need);
    const setup = await feature.setup(view as Context & Partial<Parts>);
    for (const [name, part] of Object.entries(setup.provides ?? {})) {
      if (parts.has(name)) throw new Error(`feature "${feature.name}" provides ${name}, which a feature listed before it already provides`);
      parts.set(name, part);
    }
    ready.push({ ...setup, name: feature.name });
  }

  for (const feature of ready) await feature.rootRoutes?.(app);
  await app.register(
    async (api) => {
      for (const feature of ready) await feature.routes?.(api);
    },
    { prefix: options.prefix },
  );

  if (options.start) {
    app.addHook('onReady', async () => {
      for (const feature of ready) await feature.start?.();
    });
  }
  app.addHook('onClose', async () => {
    for (const feature of [...ready].reverse()) {
      try {
        await feature.stop?.();
      } catch (err) {
        options.logger.error({ err, feature: feature.name }, 'a feature failed to stop');
      }
    }
  });
}
