import { defineConfig } from "vite";

// The console is served by the gateway at /console/ from files embedded in
// its binary (gateway/internal/console/dist, committed like gen/), so the
// build writes there. No CDN: everything is bundled.
export default defineConfig({
  base: "/console/",
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "../../gateway/internal/console/dist",
    emptyOutDir: true,
    target: "es2022",
    assetsDir: "assets",
    reportCompressedSize: false,
    modulePreload: { polyfill: false },
  },
});
