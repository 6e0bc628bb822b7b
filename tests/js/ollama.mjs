// The official ollama npm client against cohort: version, tags, ps, show, chat and generate
// (streamed, which is Ollama's default, and whole), and ResponseError for unknown models.
import { Ollama } from 'ollama';
import { assert, checkUsage, model, steps, url } from './common.mjs';

const ollama = new Ollama({ host: url });
const messages = [{ role: 'user', content: 'Once upon a time' }];
const options = { temperature: 0, num_predict: 24 };
let wholeChat;

await steps([
  ['version is semver', async () => {
    const { version } = await ollama.version();
    assert.match(version, /^\d+\.\d+\.\d+$/);
  }],
  ['list and ps name the model', async () => {
    const tags = await ollama.list();
    assert.deepEqual(tags.models.map((m) => m.name), [model]);
    assert.ok(tags.models[0].size > 0);
    const ps = await ollama.ps();
    assert.equal(ps.models[0].model, model);
  }],
  ['show', async () => {
    const s = await ollama.show({ model });
    assert.equal(s.details.format, 'gguf');
    assert.ok(s.model_info['general.architecture']);
  }],
  ['chat (whole)', async () => {
    const r = await ollama.chat({ model, messages, options, stream: false });
    assert.equal(r.done, true);
    assert.equal(r.message.role, 'assistant');
    assert.ok(r.message.content.length > 0, 'empty content');
    assert.ok(['stop', 'length'].includes(r.done_reason), r.done_reason);
    checkUsage(r.prompt_eval_count, r.eval_count, undefined, 24);
    wholeChat = r;
  }],
  ['chat (stream)', async () => {
    let text = '', last;
    for await (const part of await ollama.chat({ model, messages, options, stream: true })) {
      text += part.message.content;
      last = part;
    }
    assert.equal(last.done, true);
    assert.equal(text, wholeChat.message.content, 'greedy stream differs from whole');
    assert.equal(last.eval_count, wholeChat.eval_count);
  }],
  ['generate (whole and stream)', async () => {
    const prompt = 'Once upon a time, there was a little';
    const r = await ollama.generate({ model, prompt, raw: true, options: { temperature: 0, num_predict: 8 }, stream: false });
    assert.ok(r.response.length > 0, 'empty response');
    checkUsage(r.prompt_eval_count, r.eval_count, undefined, 8);
    let text = '';
    for await (const part of await ollama.generate({ model, prompt, raw: true, options: { temperature: 0, num_predict: 8 }, stream: true })) {
      text += part.response;
    }
    assert.equal(text, r.response);
  }],
  ['chat with tools and a tool result in the history', async () => {
    const r = await ollama.chat({
      model, options, stream: false,
      tools: [{ type: 'function', function: { name: 'get_time', description: 'The time now', parameters: { type: 'object', properties: {} } } }],
      messages: [...messages,
        { role: 'assistant', content: '', tool_calls: [{ function: { name: 'get_time', arguments: {} } }] },
        { role: 'tool', content: '12:00', tool_name: 'get_time' }],
    });
    assert.equal(r.done, true);
    assert.equal(typeof r.message.content, 'string');
  }],
  ['unknown model -> ResponseError 404', async () => {
    await assert.rejects(ollama.chat({ model: 'llama3', messages, stream: false }),
      (e) => e.name === 'ResponseError' && e.status_code === 404);
  }],
]);
