#!/usr/bin/env node
// `ikrig view` in a real browser (Debian's Chromium driven by playwright-core):
//   node tests/view/view.test.cjs IKRIG
// Prints a line per check and "N passed, N failed"; exits 1 when any failed.
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { launchBrowser, startView, stopView } = require('./browser.cjs');

const ROOT = path.resolve(__dirname, '..', '..');
const ikrig = path.resolve(process.argv[2] || '');
let passed = 0, failed = 0;
const t0 = Date.now();

function check(name, ok, detail) {
  if (ok) { passed++; console.log(`ok   ${name}`); } else { failed++; console.log(`FAIL ${name}${detail ? `: ${detail}` : ''}`); }
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const dist = (a, b) => Math.hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]);
// A column-major 4x4's translation.
const at = (m) => [m[12], m[13], m[14]];

// The pixels around a transform (by key) on the page, 60 px each way: [r, g, b, ...].
function pixelsAround(page, key) {
  return page.evaluate((k) => {
    const c = document.querySelector('#view canvas'), r = c.getBoundingClientRect(), s = window.ikrig.screenOf(k);
    const d = document.createElement('canvas');
    d.width = Math.round(r.width); d.height = Math.round(r.height);
    const g = d.getContext('2d');
    g.drawImage(c, 0, 0, d.width, d.height);
    const x0 = Math.max(0, Math.round(s.x - r.left) - 60), y0 = Math.max(0, Math.round(s.y - r.top) - 60);
    return Array.from(g.getImageData(x0, y0, 120, 120).data);
  }, key);
}
// Pixels that differ between two captures, and those of a capture unlike the background.
function differing(a, b) {
  let n = 0;
  for (let i = 0; i < a.length; i += 4) if (Math.abs(a[i] - b[i]) + Math.abs(a[i + 1] - b[i + 1]) + Math.abs(a[i + 2] - b[i + 2]) > 30) n++;
  return n;
}

// Drags the node `name` on the page by (dx, dy) px per step, 10 steps.
async function drag(page, name, dx, dy) {
  const from = await page.evaluate((k) => window.ikrig.screenOf(k), name);
  await page.mouse.move(from.x, from.y);
  await page.mouse.down();
  for (let i = 1; i <= 10; i++) { await page.mouse.move(from.x + dx * i, from.y + dy * i); await sleep(15); }
  await page.mouse.up();
}

// The model's skinned mesh, paused: drawn where the skeleton is (pixels that change when
// it is hidden), and a drag of `target` moves the node of `bone` with the solved bone.
async function skinnedChecks(page, what, owner, bone, target, [dx, dy]) {
  const key = `${owner}.${bone}`;
  await page.click('#pause');
  await within(page, 1000, () => window.ikrig.paused);
  await sleep(200);
  const shown = await pixelsAround(page, key);
  await page.evaluate(() => window.ikrig.setSkin(false));
  await sleep(200);
  const sticks = await pixelsAround(page, key);
  await page.evaluate(() => window.ikrig.setSkin(true));
  await sleep(200);
  const again = await pixelsAround(page, key);
  const changed = differing(shown, sticks);
  check(`${what}: the mesh is drawn where the skeleton is (${changed} of 14400 pixels change when it is hidden)`,
        changed > 150 && differing(shown, again) < changed / 10, `${changed}, ${differing(shown, again)} after showing it again`);
  await page.click('#pause');
  await within(page, 1000, () => !window.ikrig.paused);
  const before = await page.evaluate((b) => window.ikrig.modelMatrix(b), bone);
  await drag(page, target, dx, dy);
  // polled until the node has moved with the drag (a poll before the drag arrives would
  // find the hand on its target, not yet moved)
  const from = before && at(before);
  const follows = await within(page, 3000, ([k, b, t, f]) => {
    const p = window.ikrig.positions, m = window.ikrig.modelMatrix(b);
    const solved = p[k], tgt = p[t];
    if (!m || !solved || !tgt || !f) return null;
    const node = [m[12], m[13], m[14]];
    const d = Math.hypot(solved[0] - tgt[0], solved[1] - tgt[1], solved[2] - tgt[2]);
    const e = Math.hypot(node[0] - solved[0], node[1] - solved[1], node[2] - solved[2]);
    const moved = Math.hypot(node[0] - f[0], node[1] - f[1], node[2] - f[2]);
    return d < 0.03 && e < 1e-4 && moved > 0.05 ? { node, solved, d, e } : null;
  }, [key, bone, target, from]);
  check(`${what}: dragging ${target} moves the mesh's ${bone} with the solved bone`,
        follows && dist(from, follows.node) > 0.05, JSON.stringify({ before: from, follows }));
}

// Polls fn (in the page) until it returns a truthy value or ms pass; the value, or null.
async function within(page, ms, fn, arg) {
  try {
    const h = await page.waitForFunction(fn, arg, { timeout: ms, polling: 20 });
    return await h.jsonValue();
  } catch (e) {
    return null;
  }
}

// An HTTP GET from a given local address: resolves with the status, or the error's code.
function get(host, port, localAddress, urlPath = '/') {
  return new Promise((resolve) => {
    const req = http.get({ host, port, path: urlPath, localAddress, timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', (e) => resolve(e.code || String(e)));
    req.on('timeout', () => { req.destroy(); resolve('timeout'); });
  });
}

// A raw WebSocket client: sends the upgrade, resolves with the socket once `bytes` bytes
// of the answer came (101 and the start of the scene message).
function wsOpen(port, bytes = 2000, localAddress) {
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: '127.0.0.1', port, localAddress });
    let got = 0, head = '';
    const key = crypto.randomBytes(16).toString('base64');
    s.on('connect', () => s.write(`GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: http://127.0.0.1:${port}\r\n` +
                                  `Upgrade: websocket\r\nConnection: Upgrade\r\n` +
                                  `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`));
    s.on('data', (d) => {
      if (got === 0) head = d.toString('latin1', 0, 12);
      got += d.length;
      if (got >= bytes) { s.removeAllListeners('data'); s.pause(); resolve({ s, head }); }
    });
    s.on('error', reject);
    s.on('close', () => resolve({ s, head, closed: true, got }));
    setTimeout(() => reject(new Error('websocket: nothing in 5 s')), 5000);
  });
}

function nonLoopbackAddress() {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list || []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

(async () => {
  if (!fs.existsSync(ikrig)) { console.log(`no ikrig at '${ikrig}'`); process.exit(2); }
  // Scripts of our own on disk, in the built-in scene: the demo's humanoid and walker, and
  // a marker script the test edits.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ikrig-view-'));
  for (const f of ['humanoid.lua', 'walker.lua']) fs.copyFileSync(path.join(ROOT, 'lua/ik/demo', f), path.join(dir, f));
  const marker = path.join(dir, 'marker.lua');
  // The marker is the scene's (a script moves the host's nodes; the scene it sees is a
  // copy, to which it cannot add): a scene module of the test's own, the demo's with one
  // more node, found through IKRIG_LUA_PATH.
  fs.writeFileSync(path.join(dir, 'marker_scene.lua'), `local ik = require("ik")
local demo = require("ik.demo.scene")
local M = { scripts = demo.scripts }
function M.new()
  local scene = demo.new()
  scene.nodes.marker = ik.node{ position = { 0, 0, 0 } }
  return scene
end
return M
`);
  const markerScript = (x) => `-- moves the scene's marker node: the test edits this file\n` +
    `function update(dt)\n  scene.nodes.marker:set_position({ ${x}, 2.5, 0 })\nend\n`;
  fs.writeFileSync(marker, markerScript('0.25'));
  // A chain of our own with a hinge and a cone, above the humanoid, reported with its chain.
  fs.writeFileSync(path.join(dir, 'limits.lua'), `-- a hinged and coned chain the view draws the limits of
local top = ik.vec3(scene.skeletons.humanoid:bone("head_top"):get_position()) + ik.vec3(0, 0.35, 0)
state.chain = state.chain or ik.chain{ positions = { top, top + ik.vec3(0.25, 0, 0), top + ik.vec3(0.5, 0, 0),
                                                     top + ik.vec3(0.75, 0, 0) } }
state.chain:set_constraint(2, ik.hinge{ axis = { 0, 0, 1 }, min = -0.3, max = 1.6 })
state.chain:set_constraint(3, ik.cone{ angle = 0.6 })
state.t = state.t or 0
function update(dt)
  state.t = state.t + dt
  local reached, distance, iterations = state.chain:solve(top + ik.vec3(0.4, 0.3 + 0.1 * math.sin(state.t), 0.1))
  scene.report("limits", reached, distance, iterations, state.chain)
end
`);
  const scripts = ['humanoid.lua', 'walker.lua', 'marker.lua', 'limits.lua'].map((f) => path.join(dir, f));

  const sceneEnv = { IKRIG_LUA_PATH: dir };
  let view = await startView(ikrig, [...scripts, '--scene', 'marker_scene', '--port', '0'], { env: sceneEnv });
  const browser = await launchBrowser();
  const page = await browser.newPage({ viewport: { width: 1000, height: 700 } });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  try {
    // ---- the page loads, frames arrive, the canvas is not blank ----
    await page.goto(view.url);
    // frames arriving, and the demo's skinned humanoid loaded (its shaders compiled), so the rate below is steady
    const started = await within(page, 10000, () => window.ikrig && window.ikrig.frames > 10 && window.ikrig.model &&
                                 (window.ikrig.model.driven > 0 || window.ikrig.model.error) && window.ikrig.frames);
    check('page loads and frames arrive', started, pageErrors.join('; '));
    const f1 = await page.evaluate(() => window.ikrig.frames);
    await sleep(500);
    const f2 = await page.evaluate(() => window.ikrig.frames);
    check('frames keep arriving (~30 a second or more)', f2 - f1 >= 15, `${f2 - f1} in 0.5 s`);
    const pixels = await page.evaluate(() => {
      const c = document.querySelector('#view canvas'), w = 200, h = 140;
      const d = document.createElement('canvas');
      d.width = w; d.height = h;
      const g = d.getContext('2d');
      g.drawImage(c, 0, 0, w, h);
      const px = g.getImageData(0, 0, w, h).data, colours = new Set();
      let notBg = 0;
      for (let i = 0; i < px.length; i += 4) {
        colours.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
        if (Math.abs(px[i] - 0x1d) + Math.abs(px[i + 1] - 0x21) + Math.abs(px[i + 2] - 0x27) > 30) notBg++;
      }
      return { colours: colours.size, notBg, total: w * h };
    });
    check('canvas is not blank', pixels.colours > 20 && pixels.notBg > pixels.total * 0.02, JSON.stringify(pixels));
    check('ground, bones, targets and poles are drawn', await page.evaluate(() =>
      window.ikrig.scene && window.ikrig.scene.ground && window.ikrig.scene.transforms.some((t) => t.role === 'target') &&
      window.ikrig.scene.transforms.some((t) => t.role === 'pole') && window.ikrig.scene.transforms.filter((t) => t.role === 'bone').length > 30));

    // ---- constraint cones and hinge arcs ----
    const shapes = await page.evaluate(() => (window.ikrig.chains || []).filter((c) => c.constraints)
      .map((c) => ({ name: c.name, kinds: c.constraints.map((k) => k.kind), apexes: c.constraints.map((k) => k.apex) })));
    const tail = shapes.find((c) => c.name === 'tail'), own = shapes.find((c) => c.name === 'limits');
    check('the page receives the constraint shapes (the tail\'s four cones, our hinge and cone)',
          shapes.length === 2 && tail && tail.kinds.join() === 'cone,cone,cone,cone' && own && own.kinds.join() === 'hinge,cone',
          JSON.stringify(shapes));
    const limitsDrawn = await page.evaluate(() => window.ikrig.limits);
    check('it draws a cone per cone and an arc per hinge', limitsDrawn && limitsDrawn.cones === 5 && limitsDrawn.arcs === 1,
          JSON.stringify(limitsDrawn));
    // The cones' colour (magenta) and the arcs' (orange) on the page, around each apex: with
    // the limits shown, against the same frame with them hidden (paused, so nothing moves).
    await page.click('#pause');
    await within(page, 1000, () => window.ikrig.paused);
    await sleep(150);
    const colourCount = () => page.evaluate(() => {
      const c = document.querySelector('#view canvas'), r = c.getBoundingClientRect();
      const d = document.createElement('canvas');
      d.width = Math.round(r.width); d.height = Math.round(r.height);
      const g = d.getContext('2d');
      g.drawImage(c, 0, 0, d.width, d.height);
      const px = g.getImageData(0, 0, d.width, d.height).data;
      const count = { cone: 0, arc: 0 };
      for (const ch of window.ikrig.chains) for (const k of ch.constraints || []) {
        const s = window.ikrig.screenOfPoint(k.apex), x0 = Math.round(s.x - r.left), y0 = Math.round(s.y - r.top);
        for (let y = Math.max(0, y0 - 40); y < Math.min(d.height, y0 + 40); y++) {
          for (let x = Math.max(0, x0 - 40); x < Math.min(d.width, x0 + 40); x++) {
            const i = 4 * (y * d.width + x), R = px[i], G = px[i + 1], B = px[i + 2];
            if (k.kind === 'cone' && R - G > 40 && B - G > 30) count.cone++;
            if (k.kind === 'hinge' && R > 150 && R - B > 120 && G - B > 60 && R - G > 60) count.arc++;
          }
        }
      }
      return count;
    });
    const shown = await colourCount();
    await page.evaluate(() => window.ikrig.showLimits(false));
    await sleep(150);
    const hidden = await colourCount();
    await page.evaluate(() => window.ikrig.showLimits(true));
    await page.click('#pause');
    await within(page, 1000, () => !window.ikrig.paused);
    check(`the cones' colour and the arcs' appear on the page where the limits are (${JSON.stringify({ shown, hidden })})`,
          shown.cone - hidden.cone > 30 && shown.arc - hidden.arc > 10, JSON.stringify({ shown, hidden }));

    // ---- dragging the arm's target moves the hand ----
    const before = await page.evaluate(() => ({ target: window.ikrig.positions.reach_target, hand: window.ikrig.positions['humanoid.r_hand'],
                                              at: window.ikrig.screenOf('reach_target') }));
    await page.evaluate(() => window.ikrig.paused || 0);
    const { at } = before;
    await page.mouse.move(at.x, at.y);
    await page.mouse.down();
    for (let i = 1; i <= 10; i++) { await page.mouse.move(at.x - 4 * i, at.y - 4 * i); await sleep(15); }
    await page.mouse.up();
    const dragT = Date.now();
    const moved = await within(page, 1000, () => {
      const p = window.ikrig.positions, hand = p['humanoid.r_hand'], tgt = p.reach_target;
      if (!hand || !tgt) return null;
      const d = Math.hypot(hand[0] - tgt[0], hand[1] - tgt[1], hand[2] - tgt[2]);
      return d < 0.03 ? { hand, tgt, d } : null;
    });
    const followMs = Date.now() - dragT;
    check('dragging the target moves it (the runtime took the drag)', moved && dist(moved.tgt, before.target) > 0.05,
          moved ? `moved ${dist(moved.tgt, before.target).toFixed(3)} m` : 'no');
    check(`the hand follows the dragged target within a second (${followMs} ms)`, moved && dist(moved.hand, before.hand) > 0.05,
          JSON.stringify({ before, moved }));
    const pinned = await page.evaluate(() => window.ikrig.positions.reach_target);
    await sleep(300);
    const still = await page.evaluate(() => window.ikrig.positions.reach_target);
    check('the dragged target stays where it was dropped', dist(pinned, still) < 1e-6);

    // ---- the demo's humanoid, skinned ----
    const demoModel = await within(page, 5000, () => window.ikrig.model && window.ikrig.model.driven > 0 && window.ikrig.model);
    check('the demo humanoid is a skinned mesh, its 23 bones bound and following the solve',
          demoModel && demoModel.url === '/humanoid.glb' && demoModel.skeleton === 'humanoid' && demoModel.skinnedMeshes === 1 &&
          demoModel.bones === 23 && demoModel.boundDriven === 23, JSON.stringify(demoModel));
    await skinnedChecks(page, 'the demo', 'humanoid', 'r_hand', 'reach_target', [4, 4]); // back where it was
    check('the walker stays sticks', await page.evaluate(() => window.ikrig.scene.transforms.some((t) => t.owner === 'walker') &&
          window.ikrig.model.skeleton !== 'walker'));

    // ---- editing a script on disk changes what is drawn ----
    const markerX = () => within(page, 3000, () => window.ikrig.positions.marker && window.ikrig.positions.marker[0]);
    check('the marker script draws its node', Math.abs((await markerX()) - 0.25) < 1e-9);
    fs.writeFileSync(marker, markerScript('1.75'));
    let t = Date.now();
    const edited = await within(page, 1000, () => window.ikrig.positions.marker && Math.abs(window.ikrig.positions.marker[0] - 1.75) < 1e-9);
    check(`a saved edit shows within a second (${Date.now() - t} ms)`, edited);

    // ---- a syntax error: the overlay, with the right line; the rig keeps moving ----
    fs.writeFileSync(marker, '-- broken\nfunction update(dt)\n  local x = = 1\nend\n');
    t = Date.now();
    const overlay = await within(page, 1500, () => {
      const o = document.getElementById('overlay');
      return o.style.display !== 'none' && o.textContent ? o.textContent : null;
    });
    check(`the syntax error shows as an overlay (${Date.now() - t} ms)`, overlay && /marker\.lua:3:/.test(overlay), overlay);
    const a = await page.evaluate(() => ({ f: window.ikrig.lastFrame, walker: window.ikrig.positions['walker.body'], m: window.ikrig.positions.marker }));
    await sleep(400);
    const b = await page.evaluate(() => ({ f: window.ikrig.lastFrame, walker: window.ikrig.positions['walker.body'], m: window.ikrig.positions.marker }));
    check('the rig keeps moving under the overlay (last good version)', b.f > a.f && dist(a.walker, b.walker) > 1e-4 && Math.abs(b.m[0] - 1.75) < 1e-9,
          JSON.stringify({ a, b }));
    fs.writeFileSync(marker, markerScript('-0.5'));
    t = Date.now();
    const cleared = await within(page, 1500, () => document.getElementById('overlay').style.display === 'none' &&
                                 Math.abs(window.ikrig.positions.marker[0] + 0.5) < 1e-9);
    check(`fixing it clears the overlay (${Date.now() - t} ms)`, cleared);

    // ---- pause, step, speed ----
    await page.click('#pause');
    await within(page, 1000, () => window.ikrig.paused);
    const p1 = await page.evaluate(() => window.ikrig.lastFrame);
    await sleep(300);
    const p2 = await page.evaluate(() => window.ikrig.lastFrame);
    await page.click('#step');
    await sleep(200);
    const p3 = await page.evaluate(() => window.ikrig.lastFrame);
    await page.click('#pause');
    check('pause stops the frames, step runs one', p1 === p2 && p3 === p2 + 1, `${p1} ${p2} ${p3}`);

    // ---- not from elsewhere ----
    const other = nonLoopbackAddress();
    if (other) {
      const refusedHttp = await get('127.0.0.1', view.port, other);
      let wsRefused;
      try { const w = await wsOpen(view.port, 12, other); wsRefused = !/ 101/.test(w.head); w.s.destroy(); } catch (e) { wsRefused = true; }
      const fromOther = await get(other, view.port, other);
      check(`a connection from ${other} is refused (HTTP ${refusedHttp}, WebSocket refused: ${wsRefused}, to ${other}: ${fromOther})`,
            refusedHttp === 403 && wsRefused && fromOther !== 200);
      const open = await startView(ikrig, ['--port', '0', '--host', '0.0.0.0', '--frames', '600']);
      const allowed = await get(other, open.port, other);
      await stopView(open);
      check(`with --host 0.0.0.0 it is let in (HTTP ${allowed})`, allowed === 200);
    } else {
      check('no address of this machine but loopback: the peer check is not tested here', true);
    }

    // ---- clients that leave mid-frame, 50 that come and go ----
    const before50 = await page.evaluate(() => window.ikrig.frames);
    const mid = await wsOpen(view.port, 3000);
    mid.s.destroy(); // mid-message: the scene message is far longer
    // 50 at once: those past the connection cap are refused (503), the others get data
    const many = await Promise.all(Array.from({ length: 50 }, () => wsOpen(view.port, 1 + Math.floor(Math.random() * 20000))));
    const in50 = many.filter((w) => / 101/.test(w.head)).length;
    check(`50 clients at once: ${in50} connect and get data, the rest are refused with 503`,
          in50 >= 5 && in50 < 50 && many.every((w) => / 101/.test(w.head) || / 503/.test(w.head)), many.map((w) => w.head).join('|'));
    many.forEach((w, i) => (i % 2 ? w.s.destroy() : w.s.end()));
    await sleep(500);
    const again = await Promise.all(Array.from({ length: 50 }, () => wsOpen(view.port, 500)));
    again.forEach((w) => w.s.destroy());
    await sleep(300);
    const after50 = await page.evaluate(() => window.ikrig.frames);
    check('the server survives them: still running, the page still gets frames, HTTP still answers',
          view.proc.exitCode === null && after50 - before50 > 20 && (await get('127.0.0.1', view.port)) === 200,
          `exit ${view.proc.exitCode}, ${after50 - before50} frames`);

    // ---- --model: a VRM test character and a GLB one, skinned and driven ----
    for (const [file, vrm] of [['vrm0_tpose.vrm', true], ['blender_tpose.glb', false]]) {
      const modelFile = path.join(ROOT, 'tests/data/characters', file);
      const mv = await startView(ikrig, ['--model', modelFile, '--port', '0']);
      const mp = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      const errs = [];
      mp.on('pageerror', (e) => errs.push(String(e)));
      try {
        await mp.goto(mv.url);
        const m = await within(mp, 8000, () => window.ikrig.model && window.ikrig.model.driven > 0 && window.ikrig.model);
        check(`--model ${file}: one skinned mesh, every bone of its skin bound and following the solve`,
              m && m.url === '/model' && m.skeleton === 'model' && m.vrm === vrm && m.skinnedMeshes === 1 && m.bones > 20 &&
              m.boundDriven === m.bones, JSON.stringify(m));
        await skinnedChecks(mp, `--model ${file}`, 'model', 'RightHand', 'right_hand_target', [-5, -4]);
        const served = await mp.evaluate(async () => (await (await fetch('/model')).arrayBuffer()).byteLength);
        const others = [];
        for (const p of ['/model/x', `/${file}`, '/model.glb', '/tests/data/characters/' + file]) others.push(await get('127.0.0.1', mv.port, undefined, p));
        check(`--model ${file}: the file is served at /model, nothing else of it (${others.join(' ')})`,
              served === fs.statSync(modelFile).size && others.every((c) => c === 404), `${served} ${others}`);
        check(`--model ${file}: no errors in the page`, errs.length === 0, errs.join('; '));
      } finally {
        await mp.close();
        await stopView(mv);
      }
    }

    // ---- --model with a .gltf whose buffer is a file of its own: sticks, and why ----
    {
      const mv = await startView(ikrig, ['--model', path.join(ROOT, 'tests/data/characters/mixamo_tpose.gltf'), '--port', '0']);
      const mp = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      try {
        await mp.goto(mv.url);
        const m = await within(mp, 8000, () => window.ikrig.model && window.ikrig.model.error && window.ikrig.frames > 5 && {
          error: window.ikrig.model.error, toast: document.getElementById('toast').textContent,
          button: document.getElementById('skin').style.display, joints: window.ikrig.scene.transforms.filter((t) => t.owner === 'model').length,
        });
        check('--model mixamo_tpose.gltf (its buffer a file of its own): the page says the mesh did not load and draws sticks',
              m && /Failed to load buffer "mixamo_tpose\.bin"/.test(m.error) && /the model did not load/.test(m.toast) &&
              m.button === 'none' && m.joints > 20, JSON.stringify(m));
      } finally {
        await mp.close();
        await stopView(mv);
      }
    }

    // ---- the body scene: dragging the head walks the body after it, lowering it crouches,
    // dragging a hand moves the hand bone ----
    {
      const bv = await startView(ikrig, ['--scene', 'ik.demo.body_scene', '--port', '0']);
      const bp = await browser.newPage({ viewport: { width: 1000, height: 700 } });
      try {
        await bp.goto(bv.url);
        const ready = await within(bp, 10000, () => window.ikrig && window.ikrig.frames > 10 &&
          window.ikrig.positions.head_target && window.ikrig.positions['humanoid.l_foot'] && window.ikrig.frames);
        check('ikrig view --scene ik.demo.body_scene starts and draws its targets', !!ready);
        // every frame the page gets: the feet's heights and the hips'
        await bp.evaluate(() => {
          const rec = window.bodyRecord = { l: [], r: [], hips: [] };
          (function sample() {
            const p = window.ikrig.positions;
            rec.l.push(p['humanoid.l_foot'][1]);
            rec.r.push(p['humanoid.r_foot'][1]);
            rec.hips.push(p['humanoid.hips'][1]);
            requestAnimationFrame(sample);
          })();
        });
        const feetMid = () => bp.evaluate(() => {
          const p = window.ikrig.positions, l = p['humanoid.l_foot'], r = p['humanoid.r_foot'];
          return [(l[0] + r[0]) / 2, (l[2] + r[2]) / 2];
        });
        // paused for the drag, so that the head is not walking (on the session's path)
        // under the pointer while it is picked up
        await bp.click('#pause');
        await within(bp, 1000, () => window.ikrig.paused);
        const startFeet = await feetMid();
        // the head dragged back (-X; the scene's own session walks it forward)
        await drag(bp, 'head_target', -25, 0);
        await sleep(300); // the drag's last moves reach the scene
        await bp.click('#pause');
        await within(bp, 1000, () => !window.ikrig.paused);
        const head = await bp.evaluate(() => window.ikrig.positions.head_target);
        const walked = await within(bp, 8000, (h) => {
          const p = window.ikrig.positions, l = p['humanoid.l_foot'], r = p['humanoid.r_foot'];
          const mx = (l[0] + r[0]) / 2, mz = (l[2] + r[2]) / 2;
          return Math.hypot(mx - h[0], mz - h[2]) < 0.3 ? [mx, mz] : null;
        }, head);
        // where the head is when dragged depends on how far the scene's own session has
        // walked it by then: what is checked is that the dropped head stays put and the
        // feet walk (more than 0.3 m) to stand under it
        const headNow = await bp.evaluate(() => window.ikrig.positions.head_target);
        const away = Math.hypot(head[0] - startFeet[0], head[2] - startFeet[1]);
        check(`dragging the head away walks the body after it (feet from ${JSON.stringify(startFeet)} to ` +
              `${JSON.stringify(walked)}, head dropped at ${JSON.stringify(head)}, now ${JSON.stringify(headNow)})`,
              walked && away > 0.3 && dist(head, headNow) < 1e-6 &&
              Math.hypot(walked[0] - startFeet[0], walked[1] - startFeet[1]) > 0.3);
        await sleep(1000); // standing again
        const feet = await bp.evaluate(() => {
          const rec = window.bodyRecord, n = rec.l.length;
          const lo = [Math.min(...rec.l), Math.min(...rec.r)];
          let both = 0, lUp = 0, rUp = 0;
          for (let i = 0; i < n; i++) {
            const l = rec.l[i] > lo[0] + 0.015, r = rec.r[i] > lo[1] + 0.015;
            if (l && r) both++;
            if (l) lUp++;
            if (r) rUp++;
          }
          return { n, both, lUp, rUp };
        });
        check(`walking, the feet took turns and were never both up (${JSON.stringify(feet)})`,
              feet.n > 30 && feet.lUp > 0 && feet.rUp > 0 && feet.both === 0);
        // the head lowered: the hips come down
        const hipsBefore = await bp.evaluate(() => window.ikrig.positions['humanoid.hips'][1]);
        await drag(bp, 'head_target', 0, 9);
        const headLow = await bp.evaluate(() => window.ikrig.positions.head_target[1]);
        const hipsLow = await within(bp, 3000, (y) => {
          const h = window.ikrig.positions['humanoid.hips'][1];
          return h < y - 0.1 ? h : null;
        }, hipsBefore);
        check(`lowering the head crouches: the hips drop (${hipsBefore.toFixed(3)} -> ${hipsLow}, head at ` +
              `${headLow.toFixed(3)})`, hipsLow !== null);
        // a hand dragged: the hand bone follows it
        const handBefore = await bp.evaluate(() => ({ target: window.ikrig.positions.right_hand_target,
                                                      hand: window.ikrig.positions['humanoid.r_hand'] }));
        await drag(bp, 'right_hand_target', 3, -4);
        const followed = await within(bp, 2000, () => {
          const p = window.ikrig.positions, hand = p['humanoid.r_hand'], t = p.right_hand_target;
          const d = Math.hypot(hand[0] - t[0], hand[1] - t[1], hand[2] - t[2]);
          return d < 0.02 ? { hand, t, d } : null;
        });
        check(`dragging a hand target moves the hand bone onto it (${JSON.stringify({ handBefore, followed })})`,
              followed && dist(followed.t, handBefore.target) > 0.05 && dist(followed.hand, handBefore.hand) > 0.05);
      } finally {
        await bp.close();
        await stopView(bv);
      }
    }

    // ---- ikrig restarts: the page reconnects by itself ----
    const port = view.port;
    await stopView(view);
    await within(page, 2000, () => !window.ikrig.connected);
    view = await startView(ikrig, [...scripts, '--scene', 'marker_scene', '--port', String(port)], { env: sceneEnv });
    t = Date.now();
    const back = await within(page, 5000, () => window.ikrig.connected && window.ikrig.frames);
    const fb = await page.evaluate(() => window.ikrig.frames);
    await sleep(300);
    const fa = await page.evaluate(() => window.ikrig.frames);
    check(`the page reconnects when ikrig restarts (${Date.now() - t} ms)`, back && fa > fb);
    check('no errors in the page', pageErrors.length === 0, pageErrors.join('; '));
  } catch (e) {
    check('the run', false, e && e.stack);
  } finally {
    await browser.close();
    const code = await stopView(view);
    check('ikrig view stops cleanly on SIGTERM', code === 0, `exit ${code}\n${view.output().slice(-2000)}`);
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(`view tests took ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
})();
