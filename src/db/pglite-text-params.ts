// Long text parameters (a heartbeat's system text: tens of KB) go to PGlite as UTF-8 bytes in the binary
// format, which for `text` is those very bytes (PostgreSQL's textrecv checks them as text input would).
// Given a string instead, PGlite's protocol writer walks it in JavaScript, character by character, twice
// to measure its UTF-8 length, then encodes it. On two-byte strings (any non-ASCII character, as Windows
// software names and German hostnames have) that cost about 0.5 ms a heartbeat, twice what executing the
// batch's statement costs a heartbeat: batches of 50 bodies of 30 KB with one non-ASCII character each,
// 1,347-1,590 µs of CPU per heartbeat as strings, 860-989 µs as bytes (bench/README.md, 2026-11-27).
// The same goes for `json` (the heartbeat batch's rows, heartbeat-batch-statement.ts: tens of KB for a
// large batch), whose binary format is its text too; not for jsonb, whose binary format has a version
// byte. Short values keep PGlite's own serializer, and so do the elements of a text[] (PGlite's array
// serializer looks the element's serializer up at each call, and an array literal must be text).
//
// A bytea parameter given as bytes goes the same way, as itself: PGlite's own bytea serializer writes it
// as a hex literal one byte at a time (Array.from, toString(16), padStart, join), about 3 ms for a
// heartbeat body of 30 KB, which the batch sends as bytea (heartbeat-batch-statement.ts).
//
// PGlite sends any Uint8Array a serializer returns as a binary parameter (its protocol writer's branch
// for ArrayBuffer views); its Serializer type says string, hence the cast. test/agents-heartbeat.test.ts
// stores and serves such bodies byte for byte on both databases.
import { types, type PGlite } from '@electric-sql/pglite';

/** PostgreSQL's type oid of text[]. */
const TEXT_ARRAY = 1009;

/** Below this many UTF-16 units, PGlite's string path costs less than making a Buffer. */
const LONG_TEXT_UNITS = 1024;

/** Makes the instance send text and json parameters of LONG_TEXT_UNITS or more as UTF-8 bytes, and bytea as its bytes. */
export function sendLongTextAsBytes(pglite: PGlite): void {
  const asString = pglite.serializers[types.TEXT] ?? String;
  pglite.serializers[types.TEXT] = longAsBytes(asString);
  pglite.serializers[types.JSON] = longAsBytes(pglite.serializers[types.JSON] ?? JSON.stringify);
  pglite.serializers[TEXT_ARRAY] = (value: unknown) => types.arraySerializer(value, asString, TEXT_ARRAY);
  const byteaAsHex = pglite.serializers[types.BYTEA] ?? String;
  pglite.serializers[types.BYTEA] = (value: unknown) => (value instanceof Uint8Array ? (value as unknown as string) : byteaAsHex(value));
}

/** `serialize`, except for a long string: its UTF-8 bytes (sent in the binary format); bytes as they are. */
function longAsBytes(serialize: (value: unknown) => string): (value: unknown) => string {
  return (value) => {
    if (value instanceof Uint8Array) return value as unknown as string;
    return typeof value === 'string' && value.length >= LONG_TEXT_UNITS ? (Buffer.from(value, 'utf8') as unknown as string) : serialize(value);
  };
}
