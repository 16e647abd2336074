import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

/**
 * The web client, built into web/dist and served by the service at `/`.
 * VITE_API_BASE (build time) points a copy hosted on another origin at the
 * API; unset, the page calls its own origin.
 */
export default defineConfig({
  plugins: [react()],
  build: { outDir: 'dist', emptyOutDir: true, sourcemap: false },
  server: { proxy: { '/api': 'http://127.0.0.1:3000', '/v1': 'http://127.0.0.1:3000' } },
});
