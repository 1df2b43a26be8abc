/**
 * The web console's build (`npm run build:web`, run by `prestart`): web/ → web/dist, served by the API
 * at `/` (src/api/console.ts). `npm run dev:web` serves it with hot reload and proxies /graphql (HTTP
 * and WebSocket) and /console to a bootorch on BOOTORCH_URL's origin (default http://127.0.0.1:4000).
 */
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

const api = process.env.BOOTORCH_URL ? new URL(process.env.BOOTORCH_URL).origin : 'http://127.0.0.1:4000';

export default defineConfig({
  root: import.meta.dirname,
  base: '/',
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, chunkSizeWarningLimit: 1024 },
  server: {
    proxy: {
      '/graphql': { target: api, ws: true },
      // The API hands its dev token only to requests whose Host is its own (src/api/console.ts); Vite
      // itself refuses Host names it does not serve (its allowedHosts), so the proxy may present the API's.
      '/console': { target: api, changeOrigin: true },
    },
  },
});
