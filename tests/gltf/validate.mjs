// The test characters (scripts/gen_characters.py) against the Khronos glTF-Validator:
// no errors (warnings are printed: VRM 0.x's extension name "VRM" is not in glTF's
// PREFIX_name form, as in every real VRM 0.x file).
//   IK_NODE_MODULES=BUILD/npm/gltf/node_modules node tests/gltf/validate.mjs DIR...
// (the package lives in the build tree: an import would look beside this file only)
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const validator = createRequire(path.join(process.env.IK_NODE_MODULES, 'x'))('gltf-validator');

let failures = 0;
for (const dir of process.argv.slice(2)) {
  for (const file of fs.readdirSync(dir).filter((f) => /\.(glb|vrm|gltf)$/.test(f)).sort()) {
    const report = await validator.validateBytes(new Uint8Array(fs.readFileSync(path.join(dir, file))), {
      uri: file,
      externalResourceFunction: (uri) =>
        Promise.resolve(new Uint8Array(fs.readFileSync(path.join(dir, decodeURIComponent(uri))))),
    });
    const { numErrors, numWarnings, messages } = report.issues;
    console.log(`${file}: ${numErrors} errors, ${numWarnings} warnings`);
    for (const m of messages.filter((m) => m.severity <= 1)) {
      console.log(`  ${m.severity === 0 ? 'error' : 'warning'} ${m.code} ${m.pointer ?? ''}: ${m.message}`);
    }
    if (numErrors > 0) failures++;
  }
}
process.exit(failures ? 1 : 0);
