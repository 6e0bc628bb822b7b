// The official @anthropic-ai/sdk client against cohort: messages whole and streamed (the
// SDK dispatches on the SSE event names), count_tokens, and the error classes.
import Anthropic from '@anthropic-ai/sdk';
import { assert, checkUsage, model, steps, url } from './common.mjs';

const client = new Anthropic({ baseURL: url, apiKey: 'unused', maxRetries: 0 });
const request = {
  model,
  max_tokens: 24,
  temperature: 0,
  system: 'You tell short stories.',
  messages: [{ role: 'user', content: 'Once upon a time' }],
};
let whole;

await steps([
  ['messages.create (whole)', async () => {
    const m = await client.messages.create(request);
    assert.equal(m.type, 'message');
    assert.equal(m.role, 'assistant');
    assert.equal(m.model, model);
    assert.equal(m.content[0].type, 'text');
    assert.ok(m.content[0].text.length > 0, 'empty text');
    assert.ok(['end_turn', 'max_tokens'].includes(m.stop_reason), m.stop_reason);
    checkUsage(m.usage.input_tokens, m.usage.output_tokens, undefined, 24);
    if (m.stop_reason === 'max_tokens') assert.equal(m.usage.output_tokens, 24);
    whole = m;
  }],
  ['messages.stream (events, text, finalMessage)', async () => {
    const stream = client.messages.stream(request);
    let text = '';
    stream.on('text', (t) => { text += t; });
    const final = await stream.finalMessage();
    assert.equal(text, whole.content[0].text, 'greedy stream differs from whole');
    assert.equal(final.content[0].text, text);
    assert.equal(final.stop_reason, whole.stop_reason);
    assert.equal(final.usage.output_tokens, whole.usage.output_tokens);
  }],
  ['messages.create stream:true (raw events)', async () => {
    const events = [];
    for await (const ev of await client.messages.create({ ...request, stream: true })) events.push(ev.type);
    assert.equal(events[0], 'message_start');
    assert.equal(events.at(-1), 'message_stop');
    assert.ok(events.includes('content_block_delta'));
  }],
  ['messages.countTokens matches usage.input_tokens', async () => {
    const { max_tokens, temperature, ...countable } = request;
    const r = await client.messages.countTokens(countable);
    assert.equal(r.input_tokens, whole.usage.input_tokens);
  }],
  ['stop_sequences', async () => {
    const word = whole.content[0].text.trim().split(/\s+/)[1];
    if (!word) return;
    const m = await client.messages.create({ ...request, stop_sequences: [word] });
    assert.equal(m.stop_reason, 'stop_sequence');
    assert.equal(m.stop_sequence, word);
    assert.ok(!m.content[0].text.includes(word));
  }],
  ['unknown model -> NotFoundError', async () => {
    await assert.rejects(client.messages.create({ ...request, model: 'claude-nope' }),
      (e) => e instanceof Anthropic.NotFoundError && e.status === 404);
  }],
  ['tool_use round trip (tool_choice tool, then tool_result)', async () => {
    const tools = [{ name: 'get_time', description: 'The time now', input_schema: { type: 'object', properties: {} } }];
    const m = await client.messages.create({ ...request, max_tokens: 64, tools, tool_choice: { type: 'tool', name: 'get_time' } });
    assert.equal(m.stop_reason, 'tool_use');
    const use = m.content.find((b) => b.type === 'tool_use');
    assert.ok(use, JSON.stringify(m.content));
    assert.ok(use.id.startsWith('toolu_'), use.id);
    assert.equal(use.name, 'get_time');
    assert.deepEqual(use.input, {});
    const back = await client.messages.create({
      ...request, tools,
      messages: [...request.messages, { role: 'assistant', content: m.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '12:00' }] }],
    });
    assert.equal(back.content[0].type, 'text');
    assert.ok(['end_turn', 'max_tokens'].includes(back.stop_reason), back.stop_reason);
  }],
  ['tool_use streamed (tool_choice any)', async () => {
    const stream = client.messages.stream({
      ...request, max_tokens: 64, tool_choice: { type: 'any' },
      tools: [{ name: 'get_time', input_schema: { type: 'object', properties: {} } }],
    });
    const final = await stream.finalMessage();
    assert.equal(final.stop_reason, 'tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    assert.ok(use, JSON.stringify(final.content));
    assert.equal(use.name, 'get_time');
    assert.deepEqual(use.input, {});
  }],
  ['server tools -> BadRequestError', async () => {
    await assert.rejects(client.messages.create({
      ...request, tools: [{ type: 'web_search_20250305', name: 'web_search' }],
    }), (e) => e instanceof Anthropic.BadRequestError);
  }],
]);
