// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// How long headless chromium takes to open a flame graph page: from the navigation's start
// to the page's first drawing done (body[data-ready]), the median of RUNS fresh pages.
// usage: node load-time.mjs FILE.html|FILE.svg [RUNS]
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { tmpdir } from "node:os";

const file = resolve(process.argv[2]), runs = Number(process.argv[3] || 5);
const dir = mkdtempSync(join(tmpdir(), "hsbpf-chromium-"));
const browser = await chromium.launchPersistentContext(dir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  headless: true, timeout: 180000,	// a busy machine: chromium may take long to start
  viewport: { width: 1280, height: 800 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const times = [], script = [];
for (let i = 0; i < runs; i++) {
  const page = await browser.newPage();
  await page.goto("file://" + file, { waitUntil: "load" });
  if (file.endsWith(".html")) await page.waitForSelector("body[data-ready='1']");
  // the page's own clock: navigation start to now, after a frame has been painted
  times.push(await page.evaluate(() => new Promise(r => requestAnimationFrame(() => r(performance.now())))));
  if (file.endsWith(".html")) script.push(await page.evaluate(() => window.hsbpfFlame.scriptMs));
  await page.close();
}
await browser.close();
rmSync(dir, { recursive: true, force: true });
times.sort((a, b) => a - b);
script.sort((a, b) => a - b);
console.log(`${file}: load ${(times[times.length >> 1] / 1000).toFixed(3)} s median of ${runs} ` +
  `(min ${(times[0] / 1000).toFixed(3)}, max ${(times[times.length - 1] / 1000).toFixed(3)})` +
  (script.length ? `; the page's script ${(script[script.length >> 1] / 1000).toFixed(3)} s` : ""));
