import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["{packages,functions,scripts}/**/test/**/*.test.ts"],
    exclude: ["**/node_modules/**", "**/dist/**"],
    // Integration tests start emulators on loopback; a shared two-core machine needs headroom.
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
