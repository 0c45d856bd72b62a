// Reading an OpenAPI 3.0 document's JSON schemas for the fuzz test: resolving references, building a
// valid value for a schema (so that one poisoned field is the only thing wrong with a request), and
// listing the fields of a request body that can be poisoned.
import fc from 'fast-check';

export type Schema = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- arbitrary JSON schema
export interface Doc {
  paths: Record<string, Record<string, Schema>>;
  components?: { schemas?: Record<string, Schema> };
}

export function deref(doc: Doc, schema: Schema): Schema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s.$ref === 'string'; i++) s = doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')] ?? {};
  return s;
}

/** The alternatives of a union without its `null`, or the schema itself. */
function firstAlternative(doc: Doc, schema: Schema): Schema {
  const s = deref(doc, schema);
  const options = (s.anyOf ?? s.oneOf ?? s.allOf) as Schema[] | undefined;
  if (!options) return s;
  const chosen = options.map((o) => deref(doc, o)).find((o) => o.type !== 'null') ?? {};
  return firstAlternative(doc, chosen);
}

function validString(s: Schema, seed: number): string {
  if (s.format === 'date-time') return '2026-01-01T00:00:00Z';
  const min = (s.minLength as number | undefined) ?? 1;
  const max = (s.maxLength as number | undefined) ?? 64;
  if (typeof s.pattern === 'string') {
    const regex = toRegex(s.pattern);
    try {
      const found = fc.sample(fc.stringMatching(regex, { size: 'xsmall' }), { seed, numRuns: 30 }).find((v) => v.length >= min && v.length <= max);
      if (found !== undefined) return found;
    } catch {
      // A pattern fast-check cannot generate from (lookaheads): fall through to plain letters.
    }
  }
  return 'a'.repeat(Math.min(Math.max(min, 1), max));
}

function toRegex(pattern: string): RegExp {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return new RegExp(pattern);
  }
}

/** A known valid value for a property (ids of seeded resources), or undefined. */
export type KnownValue = (name: string) => string | undefined;

/** A value the schema accepts (best effort: semantic rules beyond the schema may still refuse it). */
export function baselineValue(doc: Doc, schema: Schema, seed: number, known: KnownValue = () => undefined, depth = 0): unknown {
  const s = firstAlternative(doc, schema);
  if (s.default !== undefined) return s.default;
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.find((v) => v !== null) ?? s.enum[0];
  if (s.const !== undefined) return s.const;
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;
  switch (type) {
    case 'string':
      return validString(s, seed);
    case 'integer':
    case 'number': {
      const min = typeof s.minimum === 'number' ? s.minimum : 1;
      const value = Math.max(min, 1);
      return typeof s.maximum === 'number' ? Math.min(value, s.maximum) : value;
    }
    case 'boolean':
      return false;
    case 'array':
      return Array.from({ length: (s.minItems as number | undefined) ?? 0 }, () => baselineValue(doc, s.items ?? {}, seed, known, depth + 1));
    case 'object':
    default: {
      if (depth > 6 || (type === undefined && !s.properties)) return type === undefined ? 'a' : {};
      const required = new Set((s.required ?? []) as string[]);
      const entries = Object.entries((s.properties ?? {}) as Record<string, Schema>).filter(([name]) => required.has(name));
      return Object.fromEntries(entries.map(([name, prop]) => [name, knownAs(known(name), firstAlternative(doc, prop)) ?? baselineValue(doc, prop, seed, known, depth + 1)]));
    }
  }
}

const knownAs = (value: string | undefined, s: Schema): unknown =>
  value === undefined ? undefined : s.type === 'integer' || s.type === 'number' ? Number(value) : value;

export interface BodyField {
  path: string[];
  schema: Schema;
  /** The field is an array: the poison goes inside it as its one item. */
  asItem: boolean;
}

/** Every property of the body (nested objects to depth 3), and each array's items. */
export function bodyFields(doc: Doc, schema: Schema, prefix: string[] = []): BodyField[] {
  const s = firstAlternative(doc, schema);
  if (prefix.length > 3) return [];
  const props = Object.entries((s.properties ?? {}) as Record<string, Schema>);
  if (props.length === 0 && typeof s.additionalProperties === 'object') props.push(['k', s.additionalProperties as Schema]);
  return props.flatMap(([name, prop]) => {
    const path = [...prefix, name];
    const p = firstAlternative(doc, prop);
    const own: BodyField[] = [{ path, schema: p, asItem: false }];
    if (p.type === 'array') own.push({ path, schema: firstAlternative(doc, p.items ?? {}), asItem: true });
    if (p.type === 'object') own.push(...bodyFields(doc, p, path));
    return own;
  });
}
