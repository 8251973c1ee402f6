// Real clients drive `praxis agent serve` with a scripted model (no
// network): the AI SDK's own UI message stream parsing (the transport
// useChat uses, and readUIMessageStream) rebuilds the final message from
// /v1/chat and from the events endpoint with format=vercel; the official
// OpenAI and Anthropic SDKs stream a turn from the drop-in endpoints; a
// reconnection with Last-Event-ID loses and repeats nothing.
//
// PRAXIS_BIN names the praxis binary (built by run.sh).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultChatTransport, readUIMessageStream } from 'ai';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';

const praxis = process.env.PRAXIS_BIN;
if (!praxis) throw new Error('PRAXIS_BIN must name the praxis binary');
const token = 'test-token';

// Every new session replays the script from its first turn: it reasons,
// says something and reads notes.txt, then answers; a follow-up gets the
// third turn.
const script = {
  turns: [
    { reasoning: 'I should read the file first.', text: 'Let me read it.', tool_calls: [{ name: 'read_file', input: { path: 'notes.txt' } }] },
    { text: 'The file says hello world.' },
    { text: 'Follow-up answered.' },
  ],
};

let root, ws, child, base;

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port, ms = 15000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`praxis agent serve exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.on('connect', () => { sock.destroy(); resolve(true); });
      sock.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`praxis agent serve did not listen on ${port}`);
}

before(async () => {
  root = await mkdtemp(join(tmpdir(), 'praxis-agent-clients-'));
  ws = join(root, 'ws');
  await mkdir(ws);
  await writeFile(join(ws, 'notes.txt'), 'hello world\n');
  const scriptFile = join(root, 'script.json');
  await writeFile(scriptFile, JSON.stringify(script));
  const port = await freePort();
  child = spawn(praxis, ['agent', 'serve', `--http=127.0.0.1:${port}`, '--token', token,
    '--provider', 'scripted', '--script', scriptFile, '--workspace', ws, '--sandbox', 'none'],
  { stdio: ['ignore', 'inherit', 'inherit'] });
  base = `http://127.0.0.1:${port}`;
  await waitForPort(port);
});

after(async () => {
  child?.kill('SIGTERM');
  if (root) await rm(root, { recursive: true, force: true });
});

const auth = { Authorization: `Bearer ${token}` };

// lastMessage reads a UI message chunk stream with the AI SDK and returns
// the message it ends with.
async function lastMessage(stream) {
  let last;
  for await (const m of readUIMessageStream({ stream })) last = m;
  return last;
}

// checkTurn checks the message of the script's first turn: reasoning,
// text, the tool part with its output, the answer.
function checkTurn(m) {
  assert.equal(m.role, 'assistant');
  const kinds = m.parts.filter((p) => p.type !== 'step-start').map((p) => p.type);
  assert.deepEqual(kinds, ['reasoning', 'text', 'dynamic-tool', 'text']);
  const [reasoning, text, tool, answer] = m.parts.filter((p) => p.type !== 'step-start');
  assert.equal(reasoning.text, 'I should read the file first.');
  assert.equal(text.text, 'Let me read it.');
  assert.equal(tool.toolName, 'read_file');
  assert.equal(tool.state, 'output-available');
  assert.deepEqual(tool.input, { path: 'notes.txt' });
  assert.match(tool.output, /hello world/);
  assert.equal(answer.text, 'The file says hello world.');
}

test('useChat\'s transport and readUIMessageStream rebuild the turn from /v1/chat', async () => {
  const transport = new DefaultChatTransport({ api: `${base}/v1/chat`, headers: auth });
  const chatId = 'chat-' + Date.now();
  const user = { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'read notes.txt' }] };
  const stream = await transport.sendMessages({ chatId, messages: [user], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
  const m = await lastMessage(stream);
  checkTurn(m);

  // The chat's next message is the session's next turn.
  const next = { id: 'u2', role: 'user', parts: [{ type: 'text', text: 'and then?' }] };
  const stream2 = await transport.sendMessages({ chatId, messages: [user, m, next], trigger: 'submit-message', messageId: undefined, abortSignal: undefined });
  const m2 = await lastMessage(stream2);
  assert.deepEqual(m2.parts.filter((p) => p.type === 'text').map((p) => p.text), ['Follow-up answered.']);

  // No turn runs: nothing to resume.
  assert.equal(await transport.reconnectToStream({ chatId }), null);
});

test('the events endpoint with format=vercel, read by the AI SDK', async () => {
  const res = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ task: 'read notes.txt' }) });
  assert.equal(res.status, 201);
  const { id } = await res.json();
  const transport = new DefaultChatTransport({
    api: `${base}/v1/chat`, headers: auth,
    prepareReconnectToStreamRequest: ({ id }) => ({ api: `${base}/v1/sessions/${id}/events?format=vercel` }),
  });
  const stream = await transport.reconnectToStream({ chatId: id });
  checkTurn(await lastMessage(stream));
});

// sseFrames reads a response's server-sent events, up to max of them.
async function sseFrames(res, max = Infinity) {
  const frames = [];
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let buf = '';
  while (frames.length < max) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += dec.decode(value, { stream: true });
    let cut;
    while ((cut = buf.indexOf('\n\n')) >= 0 && frames.length < max) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const f = { id: undefined, data: [] };
      for (const line of block.split('\n')) {
        if (line.startsWith('id:')) f.id = line.slice(3).trim();
        if (line.startsWith('data:')) f.data.push(line.slice(5).replace(/^ /, ''));
      }
      if (f.data.length) frames.push({ id: f.id, data: f.data.join('\n') });
    }
  }
  await reader.cancel();
  return frames;
}

test('a reconnection with Last-Event-ID loses and repeats nothing', async () => {
  const res = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ task: 'read notes.txt' }) });
  const { id } = await res.json();
  const url = `${base}/v1/sessions/${id}/events?format=vercel`;
  const whole = await sseFrames(await fetch(url, { headers: auth }));
  assert.equal(whole.at(-1).data, '[DONE]');
  for (const cut of [3, Math.floor(whole.length / 2), whole.length - 2]) {
    const first = await sseFrames(await fetch(url, { headers: auth }), cut);
    const lastId = first.findLast((f) => f.id !== undefined).id;
    const upTo = first.slice(0, first.findLastIndex((f) => f.id === lastId) + 1);
    const rest = await sseFrames(await fetch(url, { headers: { ...auth, 'Last-Event-ID': lastId } }));
    assert.deepEqual([...upTo, ...rest].map((f) => f.data), whole.map((f) => f.data), `cut after ${lastId}`);
    // And the AI SDK makes the same message of the joined stream.
    const chunks = [...upTo, ...rest].filter((f) => f.data !== '[DONE]').map((f) => JSON.parse(f.data));
    checkTurn(await lastMessage(new ReadableStream({ start(c) { chunks.forEach((x) => c.enqueue(x)); c.close(); } })));
  }
});

test('the OpenAI SDK streams a turn from /v1/chat/completions', async () => {
  const client = new OpenAI({ baseURL: `${base}/v1`, apiKey: token });
  const stream = await client.chat.completions.create({ model: 'praxis', stream: true, messages: [{ role: 'user', content: 'read notes.txt' }] });
  let content = '', reasoning = '', finish;
  for await (const chunk of stream) {
    const c = chunk.choices[0];
    content += c.delta.content ?? '';
    reasoning += c.delta.reasoning_content ?? '';
    finish = c.finish_reason ?? finish;
  }
  assert.equal(reasoning, 'I should read the file first.');
  assert.match(content, /^Let me read it\./);
  assert.match(content, /> tool read_file \{"path":"notes.txt"\}/);
  assert.ok(content.endsWith('The file says hello world.'), content);
  assert.equal(finish, 'stop');

  const whole = await client.chat.completions.create({ model: 'praxis', messages: [{ role: 'user', content: 'read notes.txt' }] });
  assert.equal(whole.choices[0].message.content, content);
  assert.equal(whole.choices[0].message.tool_calls, undefined);
});

test('the Anthropic SDK streams a turn from /v1/messages', async () => {
  const client = new Anthropic({ baseURL: base, authToken: token, apiKey: null });
  const stream = client.messages.stream({ model: 'praxis', max_tokens: 1024, messages: [{ role: 'user', content: 'read notes.txt' }] });
  let text = '';
  stream.on('text', (t) => { text += t; });
  const m = await stream.finalMessage();
  assert.deepEqual(m.content.map((b) => b.type), ['thinking', 'text']);
  assert.equal(m.content[0].thinking, 'I should read the file first.');
  assert.equal(m.content[1].text, text);
  assert.ok(text.endsWith('The file says hello world.'), text);
  assert.match(text, /> tool read_file/);
  assert.equal(m.stop_reason, 'end_turn');

  const whole = await client.messages.create({ model: 'praxis', max_tokens: 1024, messages: [{ role: 'user', content: 'read notes.txt' }] });
  assert.equal(whole.content.at(-1).text, text);
  assert.ok(!whole.content.some((b) => b.type === 'tool_use'));
});
