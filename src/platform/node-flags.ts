// The Node.js flags and the environment the server runs with: in `npm start`, the Docker image and the
// systemd unit of docs/deploy.md (test/node-flags.test.ts keeps the three in step with these lists), and
// in the benches' real server. A V8 flag that sizes the heap is read when the process starts, so it
// cannot be set from src/main.ts as the heap's growth factor is (heap-growth.ts).
//
// --max-semi-space-size=32: the young generation's two halves at up to 32 MB instead of Node's 16.
// With 10,000 agents at one heartbeat a minute the server allocates about 2.2 times what a bare HTTP
// server does per heartbeat, so with 16 MB it collected its young generation twice as often as the bare
// stand-in, and each collection copied the heartbeats then waiting for their batch's commit: about 60
// collections and 300 ms in a minute, 5–6× the bare stand-in's. With 32 MB, 31 collections and 122–179
// ms, as many as the bare stand-in with Node's default; the server's CPU and its heartbeat p99 did not
// get worse (bench/README.md, 2026-11-28). Before the heap's growth factor was raised (heap-growth.ts) a
// bigger young generation set off full collections instead: V8 marks the old generation when the room
// left in it is smaller than the young generation. The price: up to 32 MB more resident memory when the
// young generation is at its largest.
//
// Not --enable-source-maps: with it Node reads and keeps the source map of every module it loads, ours
// and the dependencies', which held 26 MiB of an idle server's 272 MiB resident memory on the embedded
// database (2026-11-30, measured from outside). Stack traces then name dist/'s JavaScript, which tsc
// keeps close to the TypeScript (the same functions in the same order); its .map files are beside it.
export const SERVER_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];

// MALLOC_MMAP_THRESHOLD_=131072: glibc's malloc gives every block of 128 KiB or more a mapping of its own,
// returned to the system when freed, as its default does until the first such block is freed; then it
// raises that threshold to the freed block's size (up to 32 MiB) and the trim threshold to twice it, and
// keeps what it freed since. Starting up frees blocks of megabytes (malloc_stats: up to 43 MiB in six
// mappings at once), so an idle server on the embedded database held 80–110 MiB that malloc had freed
// and kept (120–148 MiB taken from the system, 36 MiB in use) and read 246–273 MiB resident. Naming
// the threshold fixes it (glibc then adjusts neither): 83 MiB taken, 36 in use, and 205–207 MiB
// resident in the same runs; the memory bench read 213 idle and 346 with 1,000 agents instead of 263
// and 395 (bench/history/2026-11-30.md). It costs a mapping for each large block, which the server
// allocates rarely (batched statements, large answers): B1 showed no cost. It is an environment
// variable because glibc reads it when the process starts; other C libraries ignore it.
export const SERVER_NODE_ENV: Readonly<Record<string, string>> = { MALLOC_MMAP_THRESHOLD_: '131072' };
