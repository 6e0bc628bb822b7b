// Several models through the official ollama client, against `cohort serve --models-dir DIR
// --max-loaded 1` (COHORT_MODELS: the names it offers, comma-separated): list names them
// all, a chat to each in turn answers while ps shows only the one just used, and a generate
// without a prompt but with keep_alive 0 unloads it.
import { Ollama } from 'ollama';
import { assert, steps, url } from './common.mjs';

const models = (process.env.COHORT_MODELS ?? '').split(',').filter(Boolean);
const ollama = new Ollama({ host: url });
const loadedNames = async () => (await ollama.ps()).models.map((m) => m.name);

await steps([
  ['two models offered', async () => {
    assert.equal(models.length, 2, `COHORT_MODELS=${process.env.COHORT_MODELS}`);
    const tags = await ollama.list();
    assert.deepEqual(tags.models.map((m) => m.name).sort(), [...models].sort());
  }],
  ['chats alternate between the models, one loaded at a time', async () => {
    for (const model of [...models, ...models]) {
      const r = await ollama.chat({
        model,
        messages: [{ role: 'user', content: 'Once upon a time' }],
        options: { temperature: 0, num_predict: 6 },
        stream: false,
      });
      assert.equal(r.done, true, model);
      assert.equal(r.model, model);
      assert.ok(r.eval_count > 0, `${model}: nothing generated`);
      assert.deepEqual(await loadedNames(), [model]);
    }
  }],
  ['ps reports size and expiry', async () => {
    const ps = await ollama.ps();
    assert.equal(ps.models.length, 1);
    assert.ok(ps.models[0].size > 0);
    assert.ok(ps.models[0].expires_at, 'no expires_at');
  }],
  ['keep_alive 0 unloads', async () => {
    const [current] = await loadedNames();
    const r = await ollama.generate({ model: current, prompt: '', keep_alive: 0 });
    assert.equal(r.done_reason, 'unload');
    assert.deepEqual(await loadedNames(), []);
  }],
  ['an unknown model is a ResponseError 404', async () => {
    await assert.rejects(
      ollama.chat({ model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] }),
      (err) => err.status_code === 404);
  }],
]);
