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
      '/console': { target: api },
    },
  },
});
