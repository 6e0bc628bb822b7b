// Against `cohort serve --api-key KEY --slots 1` (the key in COHORT_API_KEY): each SDK gets
// its own 401 for a wrong key, the right key works, and a stream the client aborts ends its
// generation on the server and frees the only slot, so the next request runs at once.
import Anthropic from '@anthropic-ai/sdk';
import { Ollama } from 'ollama';
import OpenAI from 'openai';

import { assert, model, steps, url } from './common.mjs';

const key = process.env.COHORT_API_KEY;
if (!key) {
  console.error('set COHORT_API_KEY');
  process.exit(2);
}
const wrong = `${key}-but-wrong`;
const messages = [{ role: 'user', content: 'Tell me a long story.' }];

// One sample of the Prometheus text at /metrics, e.g. metric('cohort_active_slots').
async function metric(name) {
  const res = await fetch(`${url}/metrics`, { headers: { Authorization: `Bearer ${key}` } });
  assert.equal(res.status, 200, `/metrics answered ${res.status}`);
  const line = (await res.text()).split('\n').find((l) => l.startsWith(`${name} `));
  assert.ok(line, `no ${name} in /metrics`);
  return Number(line.slice(name.length + 1));
}

async function waitFor(what, predicate, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (await predicate()) return;
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const openai = new OpenAI({ baseURL: `${url}/v1`, apiKey: key, maxRetries: 0 });

await steps([
  ['openai: wrong key -> AuthenticationError (401)', async () => {
    const bad = new OpenAI({ baseURL: `${url}/v1`, apiKey: wrong, maxRetries: 0 });
    await assert.rejects(bad.chat.completions.create({ model, messages, max_tokens: 4 }),
      (e) => e instanceof OpenAI.AuthenticationError && e.status === 401);
  }],
  ['anthropic: wrong key -> AuthenticationError (401, authentication_error)', async () => {
    const bad = new Anthropic({ baseURL: url, apiKey: wrong, maxRetries: 0 });
    await assert.rejects(bad.messages.create({ model, max_tokens: 4, messages }),
      (e) => e instanceof Anthropic.AuthenticationError && e.status === 401 &&
        e.error?.error?.type === 'authentication_error');
  }],
  ['ollama: wrong key -> ResponseError 401', async () => {
    const bad = new Ollama({ host: url, headers: { Authorization: `Bearer ${wrong}` } });
    await assert.rejects(bad.chat({ model, messages, options: { num_predict: 4 } }),
      (e) => e.name === 'ResponseError' && e.status_code === 401);
  }],
  ['the right key works in all three', async () => {
    const c = await openai.chat.completions.create({ model, messages, max_tokens: 4 });
    assert.ok(c.choices[0].message.content.length > 0);
    const a = await new Anthropic({ baseURL: url, apiKey: key, maxRetries: 0 })
      .messages.create({ model, max_tokens: 4, messages });
    assert.equal(a.type, 'message');
    const o = await new Ollama({ host: url, headers: { Authorization: `Bearer ${key}` } })
      .chat({ model, messages, options: { num_predict: 4 } });
    assert.equal(o.done, true);
  }],
  ['openai: an aborted stream is cancelled and frees the only slot', async () => {
    assert.equal(await metric('cohort_slots'), 1, 'run the server with --slots 1');
    const cancelled = 'cohort_generations_total{outcome="cancelled"}';
    const before = await metric(cancelled);
    const stream = await openai.chat.completions.create({
      model, messages, max_tokens: 1000, temperature: 0, stream: true,
    });
    let chunks = 0;
    for await (const chunk of stream) {
      assert.ok(chunk.choices.length <= 1);
      if (++chunks === 3) break;  // leaving the loop aborts the request
    }
    assert.equal(chunks, 3);
    // The server notices the closed connection at its next token and ends the generation.
    await waitFor('the generation counted as cancelled',
      async () => (await metric(cancelled)) === before + 1, 5000);
    await waitFor('the slot free again', async () => (await metric('cohort_active_slots')) === 0,
      5000);
    // With the slot free, a short request runs now instead of after 1000 tokens.
    const t0 = Date.now();
    const c = await openai.chat.completions.create({ model, messages, max_tokens: 4 });
    assert.ok(c.usage.completion_tokens <= 4);
    console.log(`     next request answered in ${Date.now() - t0} ms`);
  }],
]);
