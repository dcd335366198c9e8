// Shared by the view tests and the screenshot script: starts `ikrig view` and Debian's
// Chromium (playwright-core with executablePath: its own browser download does not work
// here), with flags that keep it off the network.
'use strict';
const { spawn } = require('node:child_process');
const { chromium } = require('playwright-core');

const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

// playwright-core gives every launch a fresh, empty user data dir of its own (and will not
// take --user-data-dir here).
async function launchBrowser() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--use-gl=angle', '--use-angle=swiftshader',
           '--enable-unsafe-swiftshader'],
  });
}

// Starts `ikrig view ARGS`; resolves with { proc, port, url, output() } once it prints
// its address.
function startView(ikrig, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const proc = spawn(ikrig, ['view', ...args], { cwd: opts.cwd, env: { ...process.env, ...(opts.env || {}) },
                                                    stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', done = false;
    const timer = setTimeout(() => { if (!done) { done = true; proc.kill('SIGKILL'); reject(new Error(`ikrig view did not start:\n${out}`)); } }, 15000);
    const onData = (d) => {
      out += d;
      const m = /view at (http:\/\/\S+:(\d+)\/)/.exec(out);
      if (m && !done) {
        done = true;
        clearTimeout(timer);
        resolve({ proc, url: m[1], port: Number(m[2]), output: () => out });
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => { if (!done) { done = true; clearTimeout(timer); reject(new Error(`ikrig view exited ${code}:\n${out}`)); } });
  });
}

function stopView(v) {
  return new Promise((resolve) => {
    if (v.proc.exitCode !== null || v.proc.signalCode !== null) return resolve(v.proc.exitCode);
    const t = setTimeout(() => v.proc.kill('SIGKILL'), 5000);
    v.proc.on('exit', (code) => { clearTimeout(t); resolve(code); });
    v.proc.kill('SIGTERM');
  });
}

module.exports = { launchBrowser, startView, stopView };
