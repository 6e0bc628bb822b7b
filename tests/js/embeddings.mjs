// Embeddings through the official clients against cohort: the openai SDK's
// embeddings.create (by default it asks for base64 and decodes the float32 bytes itself;
// "float" and an explicit "base64" as well), token-id inputs, dimensions and errors, and the
// ollama client's embed and legacy embeddings. With COHORT_REF_URL (a one-node server of the
// same model) the embeddings must match that server's within kTolerance: the 2-node CTest
// sets it, so a cluster's embeddings equal one node's.
import OpenAI from 'openai';
import { Ollama } from 'ollama';
import { assert, model, steps, url } from './common.mjs';

// Largest difference allowed per value between the cluster and one node: unit vectors whose
// sums tensor parallelism only reorders (float32 rounding, ~1e-6 seen).
const kTolerance = 1e-4;
const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
const ollama = new Ollama({ host: url });
const texts = ['Once upon a time, there was a little girl named Lily.', 'The dog ran to the park.'];
let floats;

function checkUnit(e, dim) {
  assert.ok(Array.isArray(e), `not an array: ${typeof e}`);
  if (dim !== undefined) assert.equal(e.length, dim);
  const norm = Math.hypot(...e);
  assert.ok(Math.abs(norm - 1) < 1e-5, `norm ${norm}`);
}

function maxDiff(a, b) {
  assert.equal(a.length, b.length);
  return Math.max(...a.map((x, i) => Math.abs(x - b[i])));
}

function decodeBase64(s) {
  const buf = Buffer.from(s, 'base64');
  return Array.from(new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4));
}

async function expectStatus(promise, status, pattern) {
  try {
    await promise;
  } catch (err) {
    assert.equal(err.status ?? err.status_code, status, String(err));
    if (pattern) assert.match(String(err.message ?? err.error), pattern);
    return;
  }
  assert.fail(`expected HTTP ${status}`);
}

await steps([
  ['embeddings.create (SDK default: base64, decoded by the SDK)', async () => {
    const r = await client.embeddings.create({ model, input: texts });
    assert.equal(r.object, 'list');
    assert.equal(r.model, model);
    assert.equal(r.data.length, 2);
    assert.deepEqual(r.data.map((d) => d.index), [0, 1]);
    for (const d of r.data) checkUnit(d.embedding, r.data[0].embedding.length);
    assert.ok(r.data[0].embedding.length > 0);
    assert.ok(r.usage.prompt_tokens > 0);
    assert.equal(r.usage.total_tokens, r.usage.prompt_tokens);
    assert.ok(maxDiff(r.data[0].embedding, r.data[1].embedding) > 1e-3, 'two texts, one vector');
    floats = r.data.map((d) => d.embedding);
  }],
  ['encoding_format float and explicit base64 give the same vectors', async () => {
    const f = await client.embeddings.create({ model, input: texts, encoding_format: 'float' });
    const b = await client.embeddings.create({ model, input: texts, encoding_format: 'base64' });
    for (let i = 0; i < 2; ++i) {
      assert.equal(typeof b.data[i].embedding, 'string');
      assert.deepEqual(f.data[i].embedding.map(Math.fround), floats[i]);
      assert.deepEqual(decodeBase64(b.data[i].embedding), floats[i]);
    }
  }],
  ['token ids and dimensions', async () => {
    const ids = await client.embeddings.create({ model, input: [[1, 400, 20], [1, 30]] });
    assert.equal(ids.data.length, 2);
    assert.equal(ids.usage.prompt_tokens, 5);
    const d = await client.embeddings.create({ model, input: texts[0], dimensions: 8 });
    checkUnit(d.data[0].embedding, 8);
  }],
  ['errors: unknown model 404, empty input 400, too long 400 naming the context', async () => {
    await expectStatus(client.embeddings.create({ model: 'no-such-model', input: 'a' }), 404);
    await expectStatus(client.embeddings.create({ model, input: '' }), 400);
    const long = [Array(100000).fill(1)];
    await expectStatus(client.embeddings.create({ model, input: long }), 400, /context holds \d+/);
    await expectStatus(client.embeddings.create({ model, input: 'a', dimensions: 1 << 20 }), 400);
  }],
  ['ollama.embed and the legacy ollama.embeddings', async () => {
    const r = await ollama.embed({ model, input: texts });
    assert.equal(r.model, model);
    assert.equal(r.embeddings.length, 2);
    for (let i = 0; i < 2; ++i) assert.ok(maxDiff(r.embeddings[i], floats[i]) < 1e-6);
    assert.ok(r.prompt_eval_count > 0);
    const one = await ollama.embed({ model, input: texts[1] });
    assert.ok(maxDiff(one.embeddings[0], floats[1]) < 1e-6);
    const legacy = await ollama.embeddings({ model, prompt: texts[0] });
    assert.ok(maxDiff(legacy.embedding, floats[0]) < 1e-6);
    const cut = await ollama.embed({ model, input: 'once upon a time '.repeat(3000) });
    checkUnit(cut.embeddings[0]);
    await expectStatus(
      ollama.embed({ model, input: 'once upon a time '.repeat(3000), truncate: false }), 400);
    await expectStatus(ollama.embed({ model: 'no-such-model', input: 'a' }), 404);
  }],
  ['the same vectors as one node (COHORT_REF_URL)', async () => {
    const ref = process.env.COHORT_REF_URL;
    if (!ref) return;
    const one = new OpenAI({ baseURL: `${ref}/v1`, apiKey: 'unused', maxRetries: 0 });
    const r = await one.embeddings.create({ model, input: texts });
    const diffs = r.data.map((d, i) => maxDiff(d.embedding, floats[i]));
    console.log(`     cluster vs one node: max |diff| ${Math.max(...diffs).toExponential(2)}`);
    for (const diff of diffs) assert.ok(diff <= kTolerance, `diff ${diff} > ${kTolerance}`);
  }],
]);
