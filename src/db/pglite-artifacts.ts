// PGlite's WebAssembly module, compiled once per process, and its file-system bundle, read once. Left to
// itself every PGlite.create reads the 9 MB module and compiles it again, and reads the 6 MB bundle: about
// half a second of CPU per database opened. A server opens one database, but the test suite opens
// hundreds per run in a few long-lived worker processes, and backup/restore several.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/**
 * A compiled WebAssembly module. The global `WebAssembly` namespace is declared only by the DOM and
 * web-worker type libraries, which the server does not load (tsconfig.build.json compiles it without
 * them), so its type is named here; PGlite takes it as it is.
 */
type CompiledWasm = object;

export interface PgliteArtifacts {
  pgliteWasmModule: CompiledWasm;
  /** A new database's initdb (a module of its own, small). */
  initdbWasmModule: CompiledWasm;
  fsBundle: Blob;
}

const resolvePackageFile = createRequire(import.meta.url).resolve;
// Neither the global's functions nor its types are in the server's type libraries (no DOM).
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<CompiledWasm> } }).WebAssembly;
let loading: Promise<PgliteArtifacts> | undefined;

/** The compiled module and the bundle, shared by every PGlite instance of this process. */
export function pgliteArtifacts(): Promise<PgliteArtifacts> {
  loading ??= (async () => {
    const [pglite, initdb, bundle] = await Promise.all(['pglite.wasm', 'initdb.wasm', 'pglite.data'].map((file) => readFile(resolvePackageFile(`@electric-sql/pglite/${file}`))));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all([wasm.compile(pglite!), wasm.compile(initdb!)]);
    return { pgliteWasmModule, initdbWasmModule, fsBundle: new Blob([bundle!]) };
  })();
  // A failed read is not remembered: the next open tries again (and reports its own error).
  loading.catch(() => (loading = undefined));
  return loading;
}
