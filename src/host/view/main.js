// The page of `ikrig view`: draws the scene that ikrig streams over a WebSocket (/ws),
// sends drags, pause, step and speed back. Messages: see src/host/ikrig_view.c.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';
import { GLTFLoader } from 'three/addons/loaders/GLTFLoader.js';
import { VRMLoaderPlugin } from '@pixiv/three-vrm';

const $ = (id) => document.getElementById(id);

// ---- three.js ----
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio || 1);
renderer.setSize(window.innerWidth, window.innerHeight);
$('view').appendChild(renderer.domElement);
const scene3 = new THREE.Scene();
scene3.background = new THREE.Color(0x1d2127);
const camera = new THREE.PerspectiveCamera(45, window.innerWidth / window.innerHeight, 0.02, 500);
camera.position.set(2, 2.5, 6);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = true;
scene3.add(new THREE.HemisphereLight(0xdde8ff, 0x303030, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.6);
sun.position.set(4, 8, 5);
scene3.add(sun);
const grid = new THREE.GridHelper(40, 40, 0x3a4450, 0x2a323c);
scene3.add(grid);
addEventListener('resize', () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

const TRAIL = 300; // points per trail
const mat = {
  joint: new THREE.MeshStandardMaterial({ color: 0xf2c14e, roughness: 0.5 }),
  target: new THREE.MeshStandardMaterial({ color: 0xff4d4d, emissive: 0x401010 }),
  pole: new THREE.MeshStandardMaterial({ color: 0x4d8dff, emissive: 0x102040 }),
  node: new THREE.MeshStandardMaterial({ color: 0x9aa5b1 }),
  ground: new THREE.MeshStandardMaterial({ color: 0x6b7f5e, roughness: 0.95, side: THREE.DoubleSide,
                                           flatShading: true }),
};
// Constraint limits: cones (apex at the joint, opening along +Y, unit height and base
// radius: scaled per shape) and hinge arcs.
const CONE_COLOUR = 0xff3dd0, ARC_COLOUR = 0xffa126, ARC_POINTS = 33;
const limitMat = {
  cone: new THREE.MeshBasicMaterial({ color: CONE_COLOUR, transparent: true, opacity: 0.3, side: THREE.DoubleSide,
                                      depthWrite: false }),
  rim: new THREE.LineBasicMaterial({ color: CONE_COLOUR }),
  arc: new THREE.LineBasicMaterial({ color: ARC_COLOUR }),
  fan: new THREE.MeshBasicMaterial({ color: ARC_COLOUR, transparent: true, opacity: 0.25, side: THREE.DoubleSide,
                                     depthWrite: false }),
};
const coneGeo = new THREE.ConeGeometry(1, 1, 32, 1, true).translate(0, -0.5, 0).rotateX(Math.PI);
const rimGeo = new THREE.BufferGeometry().setFromPoints(Array.from({ length: 48 }, (_, i) =>
  new THREE.Vector3(Math.cos(i / 48 * 2 * Math.PI), 1, Math.sin(i / 48 * 2 * Math.PI))));
const geo = {
  joint: new THREE.SphereGeometry(0.022, 12, 8),
  target: new THREE.SphereGeometry(0.05, 16, 12),
  pole: new THREE.OctahedronGeometry(0.05),
  node: new THREE.BoxGeometry(0.04, 0.04, 0.04),
};

// ---- the scene as last described by ikrig ----
let world = null; // { group, transforms, meshes, bones, trails, draggable }
const state = {
  connected: false, frames: 0, lastFrame: null, scene: null, positions: {}, errors: {}, events: [], scripts: [],
  paused: false, speed: 1,
};
window.ikrig = state; // for the tests and the curious

function keyOf(t) { return t.owner ? `${t.owner}.${t.name}` : t.name; }

function buildScene(msg) {
  if (world) {
    scene3.remove(world.group);
    world.group.traverse((o) => { if (o.geometry && !Object.values(geo).includes(o.geometry)) o.geometry.dispose(); });
  }
  const group = new THREE.Group();
  const meshes = [], draggable = [], trails = [];
  msg.transforms.forEach((t, i) => {
    let m;
    if (t.role === 'bone') m = new THREE.Mesh(geo.joint, mat.joint);
    else if (t.role === 'target') m = new THREE.Mesh(geo.target, mat.target);
    else if (t.role === 'pole') m = new THREE.Mesh(geo.pole, mat.pole);
    else m = new THREE.Mesh(geo.node, mat.node);
    m.userData = { index: i, key: keyOf(t), transform: t };
    group.add(m);
    meshes.push(m);
    if (t.role === 'target' || t.role === 'pole') draggable.push(m);
    if (t.trail) {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(TRAIL * 3), 3));
      g.setDrawRange(0, 0);
      const line = new THREE.Line(g, new THREE.LineBasicMaterial({ color: 0x59d0c5 }));
      line.frustumCulled = false;
      group.add(line);
      trails.push({ index: i, line, n: 0 });
    }
  });
  // bones: a segment from each bone to its parent
  const pairs = msg.transforms.map((t, i) => [i, t.parent]).filter(([, p]) => p >= 0);
  const bg = new THREE.BufferGeometry();
  bg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(pairs.length * 6), 3));
  const bones = new THREE.LineSegments(bg, new THREE.LineBasicMaterial({ color: 0xf5f0e6 }));
  bones.frustumCulled = false;
  group.add(bones);
  if (msg.ground && msg.ground.triangles && msg.ground.triangles.length) {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(msg.ground.vertices), 3));
    g.setIndex(msg.ground.triangles);
    g.computeVertexNormals();
    const ground = new THREE.Mesh(g, mat.ground);
    ground.name = 'ground';
    group.add(ground);
  }
  scene3.add(group);
  const first = !world;
  world = { group, transforms: msg.transforms, meshes, bones, pairs, trails, draggable };
  state.scene = msg;
  $('title').textContent = `ikrig view · ${msg.name}`;
  if (msg.model) loadModel(msg.model); else dropModel();
  $('skin').style.display = msg.model ? '' : 'none';
  return first;
}

// ---- the skinned mesh of a skeleton (the scene's "model": a glTF, GLB or VRM file) ----
// Each of its nodes that the skeleton has a bone of (by the importer's names) takes the
// bone's solved world position and rotation, with its own rest world scale; the nodes
// between them keep their rest transform relative to their parents.
let skin = null; // { url, skeleton, root, nodes: [{ object, name, scale }], meshes, error }
state.showSkin = true;
state.model = null;

// The importer's node names (src/scene/ik_gltf.c): the file's, made unique.
function importerNames(json) {
  const taken = new Set();
  return (json.nodes || []).map((n, i) => {
    const raw = typeof n.name === 'string' && n.name !== '' ? n.name : null;
    for (let attempt = 0; ; attempt++) {
      const c = attempt === 0 ? (raw || `node${i}`) : attempt === 1 ? `${raw || 'node'}#${i}` : `${raw || 'node'}#${i}.${attempt}`;
      if (!taken.has(c)) { taken.add(c); return c; }
    }
  });
}

function dropModel() {
  if (skin && skin.root) scene3.remove(skin.root);
  skin = null;
  state.model = null;
}

function loadModel(desc) {
  if (skin && skin.url === desc.url && skin.skeleton === desc.skeleton) return;
  dropModel();
  const entry = { url: desc.url, skeleton: desc.skeleton, root: null, nodes: [], meshes: [], error: null };
  skin = entry;
  state.model = { url: desc.url, skeleton: desc.skeleton, loaded: false, error: null };
  const loader = new GLTFLoader();
  loader.register((parser) => new VRMLoaderPlugin(parser));
  loader.load(desc.url, (gltf) => {
    if (skin !== entry) return;
    const root = gltf.scene, names = importerNames(gltf.parser.json), at = new THREE.Vector3(), turn = new THREE.Quaternion();
    root.updateMatrixWorld(true);
    root.traverse((o) => {
      if (o === root) return;
      const a = gltf.parser.associations.get(o), scale = new THREE.Vector3();
      o.matrixWorld.decompose(at, turn, scale);
      entry.nodes.push({ object: o, name: a && a.nodes !== undefined ? names[a.nodes] : null, scale });
      if (o.isSkinnedMesh) { o.frustumCulled = false; entry.meshes.push(o); }
    });
    entry.root = root;
    root.visible = state.showSkin;
    scene3.add(root);
    state.model = { url: desc.url, skeleton: desc.skeleton, loaded: true, error: null, vrm: !!gltf.userData.vrm,
                    skinnedMeshes: entry.meshes.length, bones: entry.meshes.reduce((n, m) => n + m.skeleton.bones.length, 0),
                    driven: 0 };
  }, undefined, (e) => {
    if (skin !== entry) return;
    entry.error = String(e && e.message || e);
    state.model.error = entry.error;
    $('skin').style.display = 'none'; // the sticks stay
    toast(`the model did not load: ${entry.error}`);
  });
}

const worldOf = new THREE.Matrix4(), parentInverse = new THREE.Matrix4();
const solvedAt = new THREE.Vector3(), solvedTurn = new THREE.Quaternion();
function poseModel(pose) {
  if (!skin || !skin.root) return;
  const bones = pose.skeletons && pose.skeletons[skin.skeleton];
  if (!bones) return;
  const driven = new Set();
  for (const n of skin.nodes) { // parents first
    const o = n.object, v = n.name !== null ? bones[n.name] : null;
    if (v) {
      worldOf.compose(solvedAt.set(v[0], v[1], v[2]), solvedTurn.set(v[3], v[4], v[5], v[6]), n.scale);
      parentInverse.copy(o.parent.matrixWorld).invert();
      o.matrix.multiplyMatrices(parentInverse, worldOf);
      o.matrix.decompose(o.position, o.quaternion, o.scale);
      driven.add(o);
    } else {
      o.updateMatrix();
    }
    o.matrixWorld.multiplyMatrices(o.parent.matrixWorld, o.matrix);
  }
  // how many nodes follow the solve, and how many of the skins' bones are among them
  state.model.driven = driven.size;
  state.model.boundDriven = skin.meshes.reduce((k, m) => k + m.skeleton.bones.filter((b) => driven.has(b)).length, 0);
}

function skinShown() { return !!(skin && skin.root && state.showSkin); }
state.setSkin = (on) => {
  state.showSkin = on;
  if (skin && skin.root) skin.root.visible = on;
  $('skin').textContent = on ? 'sticks' : 'skin';
};
// For the tests: a node's world matrix in the model, by the importer's name.
state.modelMatrix = (name) => {
  const n = skin && skin.nodes.find((x) => x.name === name);
  return n ? n.object.matrixWorld.toArray() : null;
};

function frameCamera(pose) {
  const box = new THREE.Box3();
  for (const m of world.meshes) box.expandByPoint(m.position);
  const c = box.getCenter(new THREE.Vector3()), size = box.getSize(new THREE.Vector3()).length();
  controls.target.copy(c);
  camera.position.set(c.x + size * 0.25, c.y + size * 0.35, c.z + size * 0.9 + 1);
  controls.update();
  void pose;
}

function applyFrame(msg) {
  if (!world) return;
  const pose = msg.pose, tr = world.transforms;
  tr.forEach((t, i) => {
    const v = t.owner ? pose.skeletons[t.owner] && pose.skeletons[t.owner][t.name] : pose.nodes[t.name];
    if (!v) return;
    const m = world.meshes[i];
    if (!(dragging && dragging.mesh === m)) m.position.set(v[0], v[1], v[2]);
    m.quaternion.set(v[3], v[4], v[5], v[6]);
    state.positions[keyOf(t)] = [v[0], v[1], v[2]];
  });
  poseModel(pose);
  // a skeleton drawn skinned: no sticks (its segments collapse, its joints hide)
  const skinned = skinShown() ? skin.skeleton : null;
  const bp = world.bones.geometry.attributes.position;
  world.pairs.forEach(([i, p], k) => {
    const a = world.meshes[i].position, b = tr[i].owner === skinned ? a : world.meshes[p].position;
    bp.setXYZ(2 * k, a.x, a.y, a.z);
    bp.setXYZ(2 * k + 1, b.x, b.y, b.z);
  });
  bp.needsUpdate = true;
  tr.forEach((t, i) => { if (t.role === 'bone') world.meshes[i].visible = t.owner !== skinned; });
  if (msg.updated) {
    for (const tr of world.trails) {
      const p = world.meshes[tr.index].position, a = tr.line.geometry.attributes.position;
      if (tr.n === TRAIL) { a.array.copyWithin(0, 3); tr.n--; }
      a.setXYZ(tr.n++, p.x, p.y, p.z);
      a.needsUpdate = true;
      tr.line.geometry.setDrawRange(0, tr.n);
    }
  }
  for (const ev of pose.events || []) onEvent(ev);
  state.frames++;
  state.lastFrame = pose.frame;
  state.paused = msg.paused;
  state.speed = msg.speed;
  state.chains = pose.chains;
  drawLimits(pose.chains);
  $('frame').textContent = pose.frame;
  $('time').textContent = pose.t.toFixed(2);
  $('pause').textContent = msg.paused ? 'play' : 'pause';
  $('chains').innerHTML = (pose.chains || []).map((c) =>
    `<tr><td>${esc(c.name)}</td><td class="${c.reached ? 'yes' : 'no'}">${c.reached ? 'yes' : 'no'}</td>` +
    `<td>${c.iterations == null ? '–' : c.iterations}</td><td>${c.distance == null ? '–' : c.distance.toExponential(1)}</td></tr>`).join('');
  $('tips').innerHTML = world.trails.map((t) => {
    const k = world.meshes[t.index].userData.key, p = state.positions[k];
    return `<div data-tip="${esc(k)}">${esc(k)}: ${p ? p.map((x) => x.toFixed(3)).join(' ') : '-'}</div>`;
  }).join('');
}

function esc(s) { return String(s).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]); }

// ---- constraint cones and hinge arcs, from the chains reported with their chain ----
const limits = { group: new THREE.Group(), cones: [], arcs: [] };
scene3.add(limits.group);
const Y = new THREE.Vector3(0, 1, 0);
const vec = (a) => new THREE.Vector3(a[0], a[1], a[2]);

function coneMesh(k) {
  if (!limits.cones[k]) {
    const m = new THREE.Mesh(coneGeo, limitMat.cone);
    m.add(new THREE.LineLoop(rimGeo, limitMat.rim));
    m.name = 'constraint-cone';
    m.renderOrder = 1;
    limits.group.add(m);
    limits.cones[k] = m;
  }
  return limits.cones[k];
}

function arcObject(k) {
  if (!limits.arcs[k]) {
    const line = new THREE.Line(new THREE.BufferGeometry(), limitMat.arc);
    line.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array((ARC_POINTS + 2) * 3), 3));
    const fan = new THREE.Mesh(new THREE.BufferGeometry(), limitMat.fan);
    fan.geometry.setAttribute('position', new THREE.BufferAttribute(new Float32Array((ARC_POINTS + 1) * 3), 3));
    fan.geometry.setIndex(Array.from({ length: ARC_POINTS - 1 }, (_, i) => [0, i + 1, i + 2]).flat());
    line.frustumCulled = fan.frustumCulled = false;
    line.name = 'constraint-arc';
    line.renderOrder = 1;
    line.add(fan);
    limits.group.add(line);
    limits.arcs[k] = line;
  }
  return limits.arcs[k];
}

// Draws every shape of the frame: a cone of half-angle `angle` about `direction`, as
// long as its bone; an arc about `axis` from `min` to `max`, measured from
// `direction` flattened into the hinge's plane, as a line and a translucent fan.
function drawLimits(chains) {
  let nc = 0, na = 0;
  for (const c of chains || []) {
    for (const s of c.constraints || []) {
      const len = s.length > 0 ? s.length : 0.1, apex = vec(s.apex), dir = vec(s.direction).normalize();
      if (s.kind === 'cone') {
        const m = coneMesh(nc++), a = Math.min(s.angle, Math.PI);
        m.position.copy(apex);
        m.quaternion.setFromUnitVectors(Y, dir);
        m.scale.set(len * Math.max(Math.sin(a), 1e-3), len * Math.cos(a) || 1e-3, len * Math.max(Math.sin(a), 1e-3));
        m.visible = true;
      } else if (s.kind === 'hinge') {
        const line = arcObject(na++), axis = vec(s.axis).normalize();
        const e1 = dir.clone().addScaledVector(axis, -dir.dot(axis));
        if (e1.lengthSq() < 1e-12) { // the parent along the axis: any perpendicular will do
          e1.set(1, 0, 0).cross(axis);
          if (e1.lengthSq() < 1e-6) e1.set(0, 1, 0).cross(axis);
        }
        e1.normalize();
        const e2 = axis.clone().cross(e1), p = line.geometry.attributes.position;
        const fan = line.children[0].geometry.attributes.position;
        p.setXYZ(0, apex.x, apex.y, apex.z);
        fan.setXYZ(0, apex.x, apex.y, apex.z);
        for (let i = 0; i < ARC_POINTS; i++) {
          const t = s.min + (s.max - s.min) * i / (ARC_POINTS - 1);
          const q = apex.clone().addScaledVector(e1, len * Math.cos(t)).addScaledVector(e2, len * Math.sin(t));
          p.setXYZ(i + 1, q.x, q.y, q.z);
          fan.setXYZ(i + 1, q.x, q.y, q.z);
        }
        p.setXYZ(ARC_POINTS + 1, apex.x, apex.y, apex.z);
        p.needsUpdate = fan.needsUpdate = true;
        line.visible = true;
      }
    }
  }
  limits.cones.forEach((m, i) => { m.visible = i < nc; });
  limits.arcs.forEach((m, i) => { m.visible = i < na; });
  state.limits = { cones: nc, arcs: na, colours: { cone: CONE_COLOUR, arc: ARC_COLOUR } };
}

// For the tests: hide or show every cone and arc, and a point's place on the page.
state.showLimits = (on) => { limits.group.visible = on; };
state.screenOfPoint = (p) => screenOf(vec(p));

// ---- reloads and errors ----
let toastTimer = 0;
function toast(text) {
  $('toast').textContent = text;
  $('toast').style.display = 'block';
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { $('toast').style.display = 'none'; }, 2000);
}
function showErrors() {
  const list = Object.values(state.errors);
  $('overlay').textContent = list.join('\n');
  $('overlay').style.display = list.length ? 'block' : 'none';
}
function onEvent(ev) {
  state.events.push(ev);
  if (state.events.length > 100) state.events.shift();
  const s = ev.script || '?';
  if (ev.kind === 'error' || ev.kind === 'paused') {
    state.errors[s] = ev.message || `${s}: ${ev.kind}`;
    showErrors();
  } else if (ev.kind === 'reload' || ev.kind === 'resumed' || ev.kind === 'load') {
    if (ev.kind !== 'load') toast(`${ev.kind} ${s}`);
    delete state.errors[s];
    showErrors();
  } else if (ev.kind === 'removed') {
    toast(`${s} was removed; its last version keeps running`);
  }
}

// ---- the connection, made again whenever it drops ----
let ws = null;
function send(obj) { if (ws && ws.readyState === 1) ws.send(JSON.stringify(obj)); }
function connect() {
  ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws`);
  ws.onopen = () => {
    state.connected = true;
    state.errors = {};
    showErrors();
    $('status').textContent = 'live';
    $('status').className = '';
  };
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data);
    if (msg.type === 'scene') {
      state.needFraming = buildScene(msg);
    } else if (msg.type === 'scripts') {
      // on connecting and when one changes: the stopped ones' errors (the events say the rest)
      state.scripts = msg.scripts;
      for (const s of msg.scripts) if (s.error && s.status !== 'running') state.errors[s.path] = s.error;
      showErrors();
    } else if (msg.type === 'frame') {
      applyFrame(msg);
      if (state.needFraming) { frameCamera(msg.pose); state.needFraming = false; }
    }
  };
  ws.onclose = () => {
    state.connected = false;
    $('status').textContent = 'reconnecting…';
    $('status').className = 'off';
    setTimeout(connect, 500);
  };
}
connect();

// ---- controls ----
$('pause').onclick = () => send({ type: 'pause', paused: !state.paused });
$('step').onclick = () => send({ type: 'step' });
$('skin').onclick = () => state.setSkin(!state.showSkin);
$('speed').oninput = (e) => {
  const v = Number(e.target.value);
  $('speedval').textContent = `${v.toFixed(1)}×`;
  send({ type: 'speed', value: v });
};

// ---- dragging targets and poles ----
const raycaster = new THREE.Raycaster();
const pointer = new THREE.Vector2();
let dragging = null; // { mesh, plane }
function pick(e) {
  const r = renderer.domElement.getBoundingClientRect();
  pointer.set(((e.clientX - r.left) / r.width) * 2 - 1, -((e.clientY - r.top) / r.height) * 2 + 1);
  raycaster.setFromCamera(pointer, camera);
}
function hitDraggable(e) {
  if (!world) return null;
  pick(e);
  // generous: a target 5 cm across is hard to hit, so also take the nearest one within 14 px
  const hits = raycaster.intersectObjects(world.draggable, false);
  if (hits.length) return hits[0].object;
  let best = null, bestD = 14;
  for (const m of world.draggable) {
    const s = screenOf(m.position);
    const d = Math.hypot(s.x - e.clientX, s.y - e.clientY);
    if (d < bestD) { best = m; bestD = d; }
  }
  return best;
}
renderer.domElement.addEventListener('pointerdown', (e) => {
  const m = hitDraggable(e);
  if (!m) return;
  const normal = camera.getWorldDirection(new THREE.Vector3()).negate();
  dragging = { mesh: m, plane: new THREE.Plane().setFromNormalAndCoplanarPoint(normal, m.position) };
  controls.enabled = false;
  renderer.domElement.setPointerCapture(e.pointerId);
  e.preventDefault();
});
renderer.domElement.addEventListener('pointermove', (e) => {
  if (!dragging) {
    renderer.domElement.style.cursor = hitDraggable(e) ? 'grab' : '';
    return;
  }
  pick(e);
  const p = new THREE.Vector3();
  if (raycaster.ray.intersectPlane(dragging.plane, p)) {
    dragging.mesh.position.copy(p);
    send({ type: 'move', node: dragging.mesh.userData.transform.name, position: [p.x, p.y, p.z] });
  }
});
function endDrag() {
  dragging = null;
  controls.enabled = true;
}
renderer.domElement.addEventListener('pointerup', endDrag);
renderer.domElement.addEventListener('pointercancel', endDrag);
renderer.domElement.addEventListener('dblclick', (e) => {
  const m = hitDraggable(e);
  if (m) { send({ type: 'release', node: m.userData.transform.name }); toast(`${m.userData.transform.name} follows the scene again`); }
});

// Where a point (or a transform, by key) is on the page, in CSS pixels.
function screenOf(v) {
  const p = v.clone().project(camera), r = renderer.domElement.getBoundingClientRect();
  return { x: r.left + (p.x + 1) / 2 * r.width, y: r.top + (1 - p.y) / 2 * r.height };
}
state.screenOf = (key) => {
  if (!world) return null;
  const m = world.meshes.find((x) => x.userData.key === key);
  return m ? screenOf(m.position) : null;
};

function animate() {
  requestAnimationFrame(animate);
  controls.update();
  renderer.render(scene3, camera);
}
animate();
