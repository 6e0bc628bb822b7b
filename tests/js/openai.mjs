// The official openai npm client (v6) against cohort: models, chat and completions, whole
// and streamed, and the error classes the SDK maps our errors to.
import OpenAI from 'openai';
import { assert, checkUsage, model, steps, url } from './common.mjs';

const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused', maxRetries: 0 });
const messages = [
  { role: 'system', content: 'You tell short stories.' },
  { role: 'user', content: 'Once upon a time' },
];
let wholeChat;

await steps([
  ['models.list names the served model', async () => {
    const ids = [];
    for await (const m of client.models.list()) ids.push(m.id);
    assert.deepEqual(ids, [model]);
    assert.equal((await client.models.retrieve(model)).id, model);
  }],
  ['chat.completions.create (whole)', async () => {
    const r = await client.chat.completions.create({ model, messages, max_tokens: 24, temperature: 0 });
    assert.equal(r.object, 'chat.completion');
    assert.equal(r.model, model);
    const c = r.choices[0];
    assert.equal(c.message.role, 'assistant');
    assert.ok(c.message.content.length > 0, 'empty content');
    assert.ok(['stop', 'length'].includes(c.finish_reason), c.finish_reason);
    checkUsage(r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens, 24);
    if (c.finish_reason === 'length') assert.equal(r.usage.completion_tokens, 24);
    wholeChat = r;
  }],
  ['chat.completions.create (stream, include_usage)', async () => {
    const stream = await client.chat.completions.create({
      model, messages, max_tokens: 24, temperature: 0, stream: true,
      stream_options: { include_usage: true },
    });
    let text = '', finish = null, usage = null, roles = 0, chunks = 0;
    for await (const chunk of stream) {
      chunks++;
      assert.equal(chunk.object, 'chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      for (const ch of chunk.choices) {
        if (ch.delta.role) roles++;
        text += ch.delta.content ?? '';
        if (ch.finish_reason) finish = ch.finish_reason;
      }
    }
    assert.ok(chunks > 2, `only ${chunks} chunks`);
    assert.equal(roles, 1);
    assert.equal(text, wholeChat.choices[0].message.content, 'greedy stream differs from whole');
    assert.equal(finish, wholeChat.choices[0].finish_reason);
    assert.deepEqual(usage, wholeChat.usage);
  }],
  ['chat.completions.stream helper', async () => {
    const runner = client.chat.completions.stream({ model, messages, max_completion_tokens: 24, temperature: 0 });
    let deltas = '';
    runner.on('content', (d) => { deltas += d; });
    const final = await runner.finalChatCompletion();
    assert.equal(final.choices[0].message.content, wholeChat.choices[0].message.content);
    assert.equal(deltas, final.choices[0].message.content);
  }],
  ['max_completion_tokens stops at the limit', async () => {
    const r = await client.chat.completions.create({ model, messages, max_completion_tokens: 3, temperature: 0 });
    assert.equal(r.choices[0].finish_reason, 'length');
    assert.equal(r.usage.completion_tokens, 3);
  }],
  ['completions.create (whole and stream)', async () => {
    const prompt = 'Once upon a time, there was a little';
    const r = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0 });
    assert.equal(r.object, 'text_completion');
    assert.ok(r.choices[0].text.length > 0, 'empty text');
    checkUsage(r.usage.prompt_tokens, r.usage.completion_tokens, r.usage.total_tokens, 16);
    const stream = await client.completions.create({ model, prompt, max_tokens: 16, temperature: 0, stream: true });
    let text = '', finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, r.choices[0].text);
    assert.equal(finish, r.choices[0].finish_reason);
  }],
  ['tool call round trip (named tool, then the result back)', async () => {
    const tools = [
      { type: 'function', function: { name: 'get_time', description: 'The time now', parameters: { type: 'object', properties: {} } } },
      { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
    ];
    const ask = [{ role: 'user', content: 'What time is it?' }];
    const c = await client.chat.completions.create({
      model, messages: ask, tools, temperature: 0, max_tokens: 48,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const choice = c.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    const call = choice.message.tool_calls?.[0];
    assert.ok(call, JSON.stringify(choice.message));
    assert.ok(call.id.startsWith('call_'), call.id);
    assert.equal(call.type, 'function');
    assert.equal(call.function.name, 'get_time');
    assert.deepEqual(JSON.parse(call.function.arguments), {});
    const back = await client.chat.completions.create({
      model, tools, temperature: 0, max_tokens: 8,
      messages: [...ask, choice.message, { role: 'tool', tool_call_id: call.id, content: '12:00' }],
    });
    assert.ok(['stop', 'length'].includes(back.choices[0].finish_reason));
    assert.equal(typeof back.choices[0].message.content, 'string');
  }],
  ['tool call streamed (tool_choice required)', async () => {
    const stream = await client.chat.completions.create({
      model, messages, temperature: 0, max_tokens: 48, stream: true, tool_choice: 'required',
      tools: [{ type: 'function', function: { name: 'get_time', parameters: { type: 'object', properties: {} } } }],
    });
    let name = '', args = '', finish = null, index = null;
    for await (const chunk of stream) {
      const ch = chunk.choices[0];
      if (!ch) continue;
      for (const tc of ch.delta?.tool_calls ?? []) {
        index = tc.index;
        name += tc.function?.name ?? '';
        args += tc.function?.arguments ?? '';
      }
      if (ch.finish_reason) finish = ch.finish_reason;
    }
    assert.equal(index, 0);
    assert.equal(name, 'get_time');
    assert.deepEqual(JSON.parse(args), {});
    assert.equal(finish, 'tool_calls');
  }],
  ['tools on /v1/completions -> BadRequestError', async () => {
    await assert.rejects(
      client.completions.create({ model, prompt: 'x', tools: [{ type: 'function', function: { name: 'f' } }] }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'tools');
  }],
  ['unknown model -> NotFoundError model_not_found', async () => {
    await assert.rejects(
      client.chat.completions.create({ model: 'no-such-model', messages }),
      (e) => e instanceof OpenAI.NotFoundError && e.code === 'model_not_found');
  }],
  ['n=2 -> BadRequestError naming n', async () => {
    await assert.rejects(
      client.chat.completions.create({ model, messages, n: 2 }),
      (e) => e instanceof OpenAI.BadRequestError && e.param === 'n');
  }],
]);
