// The test characters (scripts/gen_characters.py) load in three.js's GLTFLoader, the
// loader the view page uses: each gives one skinned mesh, with one bone per joint, whose
// bones at rest undo their inverse bind matrices (world * inverse = identity), so the
// mesh is drawn where it was modelled. Run by tests/gltf/run.sh:
//   node tests/view/characters_three.mjs ROOT THREE (three's directory, in the build tree)
import fs from 'node:fs';
import path from 'node:path';

// three's FileLoader reports progress with the DOM's ProgressEvent, which Node lacks.
globalThis.ProgressEvent ??= class extends Event {
  constructor(type, init) {
    super(type);
    Object.assign(this, init);
  }
};

const root = process.argv[2];
const three = process.argv[3];
const { GLTFLoader } = await import(path.join(three, 'examples/jsm/loaders/GLTFLoader.js'));
const { Matrix4 } = await import(path.join(three, 'build/three.module.js'));
const dir = path.join(root, 'tests/data/characters');
let failures = 0;

function parse(data) {
  return new Promise((resolve, reject) => new GLTFLoader().parse(data, '', resolve, reject));
}

for (const file of fs.readdirSync(dir).filter((f) => /\.(glb|vrm|gltf)$/.test(f)).sort()) {
  let data = fs.readFileSync(path.join(dir, file));
  if (file.endsWith('.gltf')) { // external buffers inlined: the loader's fetch reads no file: URL
    const json = JSON.parse(data.toString());
    for (const b of json.buffers) {
      if (!b.uri.startsWith('data:')) {
        b.uri = 'data:application/octet-stream;base64,' + fs.readFileSync(path.join(dir, b.uri)).toString('base64');
      }
    }
    data = JSON.stringify(json);
  } else {
    data = data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
  }
  try {
    const gltf = await parse(data);
    const meshes = [];
    gltf.scene.traverse((o) => { if (o.isSkinnedMesh) meshes.push(o); });
    gltf.scene.updateMatrixWorld(true);
    if (meshes.length !== 1) throw new Error(`${meshes.length} skinned meshes`);
    const { bones, boneInverses } = meshes[0].skeleton;
    let worst = 0;
    bones.forEach((bone, i) => {
      const m = new Matrix4().multiplyMatrices(bone.matrixWorld, boneInverses[i]).elements;
      m.forEach((v, k) => { worst = Math.max(worst, Math.abs(v - (k % 5 === 0 ? 1 : 0))); });
    });
    if (!(worst < 1e-5)) throw new Error(`world * inverse bind is ${worst} from identity`);
    console.log(`${file}: ${bones.length} bones, bind error ${worst.toExponential(1)}`);
  } catch (e) {
    console.log(`${file}: FAILED: ${e.message}`);
    failures++;
  }
}
process.exit(failures ? 1 : 0);
