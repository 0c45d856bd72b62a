// PGlite's WebAssembly module, compiled once per process, and its file-system bundle, read once. Left to
// itself every PGlite.create reads the 9 MB module and compiles it again, and reads the 6 MB bundle: about
// half a second of CPU per database opened. A server opens one database, but the test suite opens
// hundreds per run in a few long-lived worker processes, and backup/restore several.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

export interface PgliteArtifacts {
  pgliteWasmModule: WebAssembly.Module;
  /** A new database's initdb (a module of its own, small). */
  initdbWasmModule: WebAssembly.Module;
  fsBundle: Blob;
}

const resolvePackageFile = createRequire(import.meta.url).resolve;
// The global's functions are not in the server's type libraries (no DOM), only its types are.
const wasm = (globalThis as unknown as { WebAssembly: { compile(bytes: Uint8Array): Promise<WebAssembly.Module> } }).WebAssembly;
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
