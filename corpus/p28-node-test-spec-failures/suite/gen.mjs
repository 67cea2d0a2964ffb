// Writes the test files: many table-driven cases, a few of which expose the helper's bugs.
import { writeFileSync } from 'node:fs';
const parseCases = [];
for (let a = 0; a < 9; a++) for (let b = 0; b < 5; b++) for (let c = 0; c < 6; c++) parseCases.push(`${a}.${b}.${c}`);
let t1 = `import { test, describe } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { parse, compare } from './semver-lite.mjs';\n\n`;
t1 += `describe('parse', () => {\n`;
for (const v of parseCases) { const [a,b,c] = v.split('.'); t1 += `  test('parses ${v}', () => { assert.deepEqual(parse('${v}'), { major: ${a}, minor: ${b}, patch: ${c}, pre: [] }); });\n`; }
t1 += `  test('rejects a two-part version', () => { assert.throws(() => parse('1.2'), TypeError); });\n`;
t1 += `  test('parses build metadata', () => { assert.equal(parse('1.2.3+build.7').patch, 3); });\n`;
t1 += `});\n\ndescribe('compare', () => {\n`;
for (let i = 0; i < parseCases.length - 1; i += 3) t1 += `  test('orders ${parseCases[i]} before ${parseCases[i+1]}', () => { assert.equal(compare('${parseCases[i]}', '${parseCases[i+1]}'), -1); });\n`;
t1 += `  test('orders rc.9 before rc.10', () => { assert.equal(compare('2.0.0-rc.9', '2.0.0-rc.10'), -1); });\n`;
t1 += `  test('release after prerelease', () => { assert.equal(compare('2.0.0', '2.0.0-rc.1'), 1); });\n`;
t1 += `});\n`;
writeFileSync('parse.test.mjs', t1);
let t2 = `import { test, describe } from 'node:test';\nimport assert from 'node:assert/strict';\nimport { satisfies, maxSatisfying, bump } from './semver-lite.mjs';\n\n`;
t2 += `describe('satisfies', () => {\n`;
for (let m = 0; m < 6; m++) for (let p = 0; p < 20; p++) t2 += `  test('1.${m}.${p} satisfies ^1.0.0', () => { assert.ok(satisfies('1.${m}.${p}', '^1.0.0')); });\n`;
t2 += `  test('1.3.0 does not satisfy ~1.2.0', () => { assert.equal(satisfies('1.3.0', '~1.2.0'), false); });\n`;
t2 += `  test('2.0.0 does not satisfy ^1.0.0', () => { assert.equal(satisfies('2.0.0', '^1.0.0'), false); });\n`;
t2 += `});\n\ndescribe('maxSatisfying', () => {\n`;
t2 += `  test('picks the highest caret match', () => { assert.equal(maxSatisfying(['1.2.3', '1.9.0', '2.0.0'], '^1.0.0'), '1.9.0'); });\n`;
t2 += `  test('picks the highest tilde match', () => { assert.equal(maxSatisfying(['1.2.3', '1.2.9', '1.3.0'], '~1.2.0'), '1.2.9'); });\n`;
t2 += `  test('returns null without a match', () => { assert.equal(maxSatisfying(['0.1.0'], '^1.0.0'), null); });\n`;
t2 += `});\n\ndescribe('bump', () => {\n`;
for (const part of ['major','minor','patch']) for (let i = 0; i < 10; i++) t2 += `  test('bumps ${part} of 3.${i}.${i}', () => { assert.match(bump('3.${i}.${i}', '${part}'), /^\\d+\\.\\d+\\.\\d+$/); });\n`;
t2 += `  test('bumps prerelease', () => { assert.equal(bump('3.1.0', 'prerelease'), '3.1.1-0'); });\n`;
t2 += `});\n`;
writeFileSync('range.test.mjs', t2);
