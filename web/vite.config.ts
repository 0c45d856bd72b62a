// The web console's build: a single-page app compiled into dist/web, which the RMM server serves at `/`.
// In development (`npm run dev:web`) Vite serves it with hot reload and forwards /api to a running server.
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

export default defineConfig({
  root: import.meta.dirname,
  plugins: [react()],
  build: {
    outDir: '../dist/web',
    emptyOutDir: true,
    // The server's CSP allows no inline script: keep even the module preload polyfill out of index.html.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  server: {
    proxy: { '/api': { target: process.env.RMM_SERVER ?? 'http://127.0.0.1:8080', ws: true } },
  },
});
