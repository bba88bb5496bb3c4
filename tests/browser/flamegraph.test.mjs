// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// hsbpf's flame graph pages in a real browser: Debian's chromium, headless, driven by
// playwright-core. Each kind (flame, icicle, diff, and a profile without stacks) is made
// from the fixture profiles of known stacks (flame-fixtures), loaded, and checked through
// the page's own controls: hovering a frame shows its known share and the report's 95%
// interval, a click zooms, the search box sums the matches. Screenshots go to SHOTS.
// usage: node flamegraph.test.mjs HSBPF FLAME_FIXTURES WORKDIR [SHOTS]
import { chromium } from "playwright-core";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import assert from "node:assert/strict";

const [hsbpf, fixtures, work, shots] = process.argv.slice(2);
if (!hsbpf || !fixtures || !work) {
  console.error("usage: node flamegraph.test.mjs HSBPF FLAME_FIXTURES WORKDIR [SHOTS]");
  process.exit(2);
}
mkdirSync(work, { recursive: true });
if (shots) mkdirSync(shots, { recursive: true });
execFileSync(fixtures, [work]);
const expected = JSON.parse(readFileSync(join(work, "expected.json"), "utf8"));
const run = args => execFileSync(hsbpf, args, { stdio: ["ignore", "pipe", "pipe"] });
run(["flamegraph", "-i", join(work, "base.data"), "-o", join(work, "flame.html")]);
run(["flamegraph", "-i", join(work, "base.data"), "--inverted", "-o", join(work, "icicle.html")]);
run(["flamegraph", "--diff", join(work, "base.data"), join(work, "new.data"), "--compare", "shares", "-o", join(work, "diff.html")]);
run(["flamegraph", "-i", join(work, "flat.data"), "-o", join(work, "flat.html")]);

const profileDir = mkdtempSync(join(tmpdir(), "hsbpf-chromium-"));
// a fresh profile folder (playwright passes it as --user-data-dir)
const browser = await chromium.launchPersistentContext(profileDir, {
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  timeout: 180000,	// a busy machine: chromium may take long to start
  headless: true,
  viewport: { width: 1280, height: 420 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
let failures = 0;
async function check(label, fn) {
  try {
    await fn();
    console.log(`ok   ${label}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${label}: ${e.message}`);
  }
}

async function open(file) {
  const page = await browser.newPage();
  page.setDefaultTimeout(120000);
  const requests = [];
  page.on("request", r => { if (!r.url().startsWith("file:")) requests.push(r.url()); });
  const errors = [];
  page.on("pageerror", e => errors.push(e.message));
  await page.goto("file://" + join(work, file));
  await page.waitForSelector("body[data-ready='1']", { timeout: 120000 });
  assert.deepEqual(errors, [], "script errors");
  assert.deepEqual(requests, [], "the page asked the network");
  return page;
}

const frames = page => page.evaluate(() => window.hsbpfFlame.frames());
async function frameOf(page, name) {
  const f = (await frames(page)).find(f => f.name === name);
  assert.ok(f, `frame ${name} not drawn`);
  return f;
}
async function hover(page, name) {
  const f = await frameOf(page, name);
  await page.mouse.move(f.x + f.w / 2, f.y + f.h / 2);
  await page.waitForSelector("#tip", { state: "visible" });
  return page.textContent("#tip");
}
async function search(page, text) {
  await page.fill("#search", "");
  await page.type("#search", text);
  return (await page.textContent("#matched")).trim();
}

for (const kind of ["flame", "icicle"]) {
  await check(`${kind}: known frames, shares and intervals; zoom; search`, async () => {
    const page = await open(`${kind}.html`);
    const W = (await frameOf(page, "all")).w;
    for (const [name, e] of Object.entries(expected)) {
      const f = await frameOf(page, name);
      assert.ok(Math.abs(f.w / W - e.share / 100) < 0.002, `${name} width ${f.w / W}`);
      const tip = await hover(page, name);
      assert.match(tip, new RegExp(`samples: ${e.count}\\b`), tip);
      assert.ok(tip.includes(`share: ${e.share.toFixed(2)}% (95% CI \u00b1${e.ci.toFixed(2)}%)`), tip);
    }
    const main = await frameOf(page, "fg_main"), hash = await frameOf(page, "fg_hash");
    if (kind === "flame") assert.ok(hash.y < main.y, "flame: callees above callers");
    else assert.ok(hash.y > main.y, "icicle: callees below callers");
    if (shots) await page.screenshot({ path: join(shots, `flamegraph-${kind}.png`) });
    // zoom: fg_compute fills the width, fg_hash takes 400/600 of it
    const c = await frameOf(page, "fg_compute");
    await page.mouse.click(c.x + c.w / 2, c.y + c.h / 2);
    assert.equal(await page.evaluate(() => window.hsbpfFlame.zoomed()), "fg_compute");
    const zc = await frameOf(page, "fg_compute"), zh = await frameOf(page, "fg_hash");
    assert.ok(Math.abs(zc.w - W) < 1, `zoomed frame spans the width: ${zc.w} of ${W}`);
    assert.ok(Math.abs(zh.w / zc.w - 400 / 600) < 0.002, `fg_hash in the zoom: ${zh.w / zc.w}`);
    assert.ok(!(await frames(page)).some(f => f.name === "fg_idle"), "fg_idle outside the zoom");
    assert.match(await hover(page, "fg_hash"), /share: 40\.00%/, "shares stay of all samples");
    assert.match(await page.textContent("#status"), /zoomed to fg_compute/);
    if (shots && kind === "flame") await page.screenshot({ path: join(shots, "flamegraph-zoom.png") });
    await page.click("#reset");
    assert.equal(await page.evaluate(() => window.hsbpfFlame.zoomed()), "all");
    assert.ok((await frames(page)).some(f => f.name === "fg_idle"), "reset shows everything");
    // search: the page's own box; matches under a match count once
    assert.equal(await search(page, "fg_hash"), `Matched: ${expected.fg_hash.share.toFixed(2)}%`);
    assert.equal(await search(page, "/^fg_(hash|sort)$/"), "Matched: 60.00%");
    assert.equal(await search(page, "read"), "Matched: 30.00%", "fg_read_file and its callees once");
    assert.equal(await search(page, "VFS"), "Matched: 30.00%", "any case");
    if (shots && kind === "flame") await page.screenshot({ path: join(shots, "flamegraph-search.png") });
    // colour by object: a toggle that redraws without losing frames
    await page.selectOption("#colorby", "object");
    assert.equal((await frames(page)).length, (await page.evaluate(() => window.hsbpfFlame.nodes)));
    await page.close();
  });
}

await check("diff: significant frames coloured, others grey; the test named", async () => {
  const page = await open("diff.html");
  const legend = await page.textContent("#legend");
  assert.match(legend, /Benjamini-Hochberg/);
  assert.match(legend, /z-test/);
  // NEW's widths
  const W = (await frameOf(page, "all")).w;
  assert.ok(Math.abs((await frameOf(page, "fg_hash")).w / W - 0.25) < 0.002);
  let tip = await hover(page, "fg_hash");
  assert.match(tip, /base: 400 samples, 40\.00%/, tip);
  assert.match(tip, /new: 250 samples, 25\.00%/, tip);
  assert.match(tip, /change: -15\.00%/, tip);
  assert.match(tip, /\ssignificant/, tip);
  tip = await hover(page, "fg_sort");
  assert.match(tip, /change: \+1\.00%/, tip);
  assert.match(tip, /not significant/, tip);
  // colours read back from the canvas: fg_hash blue, fg_read_file red, fg_sort grey
  const pixel = async name => {
    const f = await frameOf(page, name);
    return page.evaluate(([x, y]) => {
      const cv = document.getElementById("fg"), r = cv.getBoundingClientRect(), d = window.devicePixelRatio || 1;
      return Array.from(cv.getContext("2d").getImageData((x - r.left) * d, (y - r.top) * d, 1, 1).data);
    }, [f.x + 2, f.y + 2]);
  };
  const [hr, , hb] = await pixel("fg_hash"), [rr, , rb] = await pixel("fg_read_file"), s = await pixel("fg_sort");
  assert.ok(hb > hr + 40, `fg_hash blue: ${hr},${hb}`);
  assert.ok(rr > rb + 40, `fg_read_file red: ${rr},${rb}`);
  assert.ok(s[0] === s[1] && s[1] === s[2], `fg_sort grey: ${s}`);
  assert.equal(await search(page, "fg_read"), "Matched: 44.00%", "matches sum NEW's shares");
  await page.fill("#search", "");
  await page.type("#search", " ");
  if (shots) await page.screenshot({ path: join(shots, "flamegraph-diff.png") });
  await page.close();
});

await check("flat: a profile without stacks, grouped by object", async () => {
  const page = await open("flat.html");
  const W = (await frameOf(page, "all")).w;
  assert.ok(Math.abs((await frameOf(page, "fg_hash")).w / W - 0.4) < 0.002);
  assert.ok(Math.abs((await frameOf(page, "[kernel.kallsyms]")).w / W - 0.3) < 0.002);
  assert.match(await hover(page, "flame-fixtures"), /share: 70\.00%/);
  await page.close();
});

await browser.close();
rmSync(profileDir, { recursive: true, force: true });
if (failures) {
  console.log(`${failures} check(s) failed`);
  process.exit(1);
}
console.log("all browser checks passed");
