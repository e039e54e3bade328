/**
 * Debian's chromium, driven by playwright-core, for the tests that look at a page as a person would.
 * The browser comes from the distribution (the only browser build this machine may install): installed
 * with apt-get when missing and running as root, as CI runs.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";

export function ensureChromium(): void {
  if (existsSync(CHROMIUM)) return;
  if (process.getuid?.() !== 0)
    throw new Error(
      `${CHROMIUM} is missing: install Debian's chromium (apt-get install -y chromium) as root`,
    );
  execFileSync("apt-get", ["update", "-qq"], { stdio: "ignore" });
  execFileSync("apt-get", ["install", "-y", "-qq", "chromium"], {
    stdio: "ignore",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (!existsSync(CHROMIUM)) throw new Error(`apt-get install chromium did not provide ${CHROMIUM}`);
}

/**
 * A headless chromium with a fresh, empty profile (playwright's --user-data-dir) removed on close.
 * Offline by construction: no background networking, component updates or sync.
 */
export async function launchChromium(viewport = { width: 1400, height: 1000 }): Promise<{
  context: BrowserContext;
  close: () => Promise<void>;
}> {
  ensureChromium();
  const profile = await mkdtemp(join(tmpdir(), "chromium-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
