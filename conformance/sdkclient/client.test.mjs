// A real MCP client, written against the official TypeScript SDK, drives
// `praxis serve` over stdio and over streamable HTTP the way an agent
// would: list the tools, read a file, edit it with the anchors from that
// read, and check the bytes on disk; then call every tool, to succeed and
// to fail, with the SDK validating every structured result against the
// tool's output schema. Then subscribe to a file read through the engine,
// change it on disk, and get notifications/resources/updated and, in the
// next tool result, the change notice.
//
// PRAXIS_BIN names the praxis binary (built by run.sh).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, writeFile, readFile, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import Ajv from 'ajv';

const praxis = process.env.PRAXIS_BIN;
if (!praxis) throw new Error('PRAXIS_BIN must name the praxis binary');

const original = 'alpha\nbeta\ngamma\n';

// freePort asks the kernel for an unused loopback port.
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

async function waitForPort(port, child, ms = 10000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`praxis serve --http exited with ${child.exitCode}`);
    const ok = await new Promise((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.on('connect', () => { sock.destroy(); resolve(true); });
      sock.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`praxis serve --http did not listen on ${port}`);
}

// Each transport: how to connect a client to a server serving ws with
// the config file cfg (which enables the shell without isolation, so that
// bash and its jobs can be called).
const transports = {
  stdio: async (ws, cfg) => {
    const transport = new StdioClientTransport({
      command: praxis,
      args: ['serve', '--workspace', ws, '--config', cfg],
      stderr: 'inherit',
    });
    return { transport, stop: async () => {} };
  },
  http: async (ws, cfg) => {
    const port = await freePort();
    const child = spawn(praxis, ['serve', `--http=127.0.0.1:${port}`, '--workspace', ws, '--config', cfg], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    await waitForPort(port, child);
    const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`));
    return {
      transport,
      stop: async () => {
        if (child.exitCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      },
    };
  },
};

// parseRead returns the header and the anchors of a hashline read_file text.
function parseRead(text) {
  const [header, ...rest] = text.split('\n');
  const lines = [];
  for (const l of rest) {
    const m = /^(\d+):([0-9a-z]+)\|(.*)$/.exec(l);
    if (m) lines.push({ n: Number(m[1]), tag: m[2], anchor: `${m[1]}:${m[2]}`, text: m[3] });
  }
  return { header, lines };
}

for (const [name, connectTo] of Object.entries(transports)) {
  describe(`praxis serve over ${name}`, () => {
    let ws, cfgDir, client, server, tools;
    const ajv = new Ajv({ strict: false, allErrors: true });

    // validated checks a structured result against the tool's output schema.
    function validated(tool, result) {
      const schema = tools.get(tool).outputSchema;
      assert.ok(schema, `${tool} declares an output schema`);
      assert.ok(result.structuredContent, `${tool} returned structuredContent`);
      const validate = ajv.compile(schema);
      assert.ok(validate(result.structuredContent),
        `${tool} structuredContent matches its output schema: ${ajv.errorsText(validate.errors)}`);
      return result.structuredContent;
    }

    before(async () => {
      ws = await mkdtemp(join(tmpdir(), `praxis-sdkclient-${name}-`));
      cfgDir = await mkdtemp(join(tmpdir(), `praxis-sdkclient-cfg-`));
      const cfg = join(cfgDir, 'config.yaml');
      await writeFile(cfg, 'sandbox:\n  shell: true\n  isolation: none\n');
      await writeFile(join(ws, 'notes.txt'), original);
      await writeFile(join(ws, 'watched file.txt'), 'before\n');
      await mkdir(join(ws, '.praxis', 'memory'), { recursive: true });
      await writeFile(join(ws, '.praxis', 'memory', 'style.md'), 'Tabs, not spaces.\n');
      await mkdir(join(ws, '.praxis', 'skills', 'release'), { recursive: true });
      await writeFile(join(ws, '.praxis', 'skills', 'release', 'SKILL.md'),
        '---\nname: release\ndescription: Cut a release.\n---\nSee [the checklist](CHECKLIST.md).\n');
      await writeFile(join(ws, '.praxis', 'skills', 'release', 'CHECKLIST.md'), '1. Tag.\n2. Changelog.\n');
      server = await connectTo(ws, cfg);
      client = new Client({ name: 'praxis-sdk-check', version: '1.0.0' });
      await client.connect(server.transport);
    });

    after(async () => {
      await client?.close();
      await server?.stop();
      if (ws) await rm(ws, { recursive: true, force: true });
      if (cfgDir) await rm(cfgDir, { recursive: true, force: true });
    });

    test('lists tools with descriptions, schemas and explicit annotations', async () => {
      const { tools: list } = await client.listTools();
      tools = new Map(list.map((t) => [t.name, t]));
      for (const want of ['read_file', 'edit_file', 'write_file']) {
        assert.ok(tools.has(want), `tool ${want} is listed (got ${[...tools.keys()].join(', ')})`);
      }
      for (const t of list) {
        assert.ok(t.description && t.description.length > 20, `${t.name} has a description`);
        assert.equal(t.inputSchema.type, 'object', `${t.name} input schema is an object`);
        for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
          assert.equal(typeof t.annotations?.[hint], 'boolean', `${t.name} sets ${hint} explicitly`);
        }
      }
      assert.equal(tools.get('read_file').annotations.readOnlyHint, true);
      assert.equal(tools.get('read_file').annotations.destructiveHint, false);
    });

    test('reads, edits with anchors from the read, and the bytes on disk follow', async () => {
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'notes.txt' } });
      assert.notEqual(read.isError, true, JSON.stringify(read.content));
      const meta = validated('read_file', read);
      assert.equal(meta.total_lines, 3);
      assert.equal(meta.eol, 'lf');
      const text = read.content.find((c) => c.type === 'text')?.text;
      assert.ok(text, 'read_file returns text content');
      const { lines } = parseRead(text);
      assert.deepEqual(lines.map((l) => l.text), ['alpha', 'beta', 'gamma']);

      const edit = await client.callTool({
        name: 'edit_file',
        arguments: {
          path: 'notes.txt',
          ops: [
            { op: 'replace_line', tag: lines[1].anchor, new_text: 'BETA' },
            { op: 'insert_after', tag: lines[2].anchor, new_text: 'delta\nepsilon' },
          ],
        },
      });
      assert.notEqual(edit.isError, true, JSON.stringify(edit.content));
      const out = validated('edit_file', edit);
      assert.equal(out.dry_run, false);
      assert.equal(out.files.length, 1);
      assert.equal(out.files[0].previous_version, meta.version);
      assert.equal(out.files[0].total_lines, 5);

      const bytes = await readFile(join(ws, 'notes.txt'), 'utf8');
      assert.equal(bytes, 'alpha\nBETA\ngamma\ndelta\nepsilon\n');

      // The anchor of the replaced line is stale now: refused, nothing written.
      const stale = await client.callTool({
        name: 'edit_file',
        arguments: { path: 'notes.txt', ops: [{ op: 'delete_line', tag: lines[1].anchor }] },
      });
      assert.equal(stale.isError, true);
      assert.match(stale.content[0].text, /^E_ANCHOR_STALE/);
      assert.equal(await readFile(join(ws, 'notes.txt'), 'utf8'), bytes);
    });

    test('write_file and list_dir results match their output schemas', async () => {
      const body = 'one\r\ntwo\r\n';
      const wrote = await client.callTool({ name: 'write_file', arguments: { path: 'sub/new.txt', content: body } });
      assert.notEqual(wrote.isError, true, JSON.stringify(wrote.content));
      if (tools.get('write_file').outputSchema) validated('write_file', wrote);
      assert.equal(await readFile(join(ws, 'sub', 'new.txt'), 'utf8'), body);

      const listed = await client.callTool({ name: 'list_dir', arguments: { depth: 2 } });
      assert.notEqual(listed.isError, true, JSON.stringify(listed.content));
      if (tools.get('list_dir').outputSchema) validated('list_dir', listed);
      const text = listed.content.map((c) => c.text ?? '').join('\n');
      assert.match(text, /notes\.txt/);
      assert.match(text, /new\.txt/);
    });

    // The SDK's callTool validates structuredContent against the tool's
    // outputSchema itself (and throws when it does not match, or when a
    // successful call of a tool with an outputSchema carries none); each
    // success is checked again with ajv, and each failure must be an error
    // result with an E_ code, not a protocol error.
    test('every tool, called to succeed and to fail, returns results its output schema admits', async () => {
      const calls = [
        ['read_file', { path: 'notes.txt', offset: 2, limit: 1 }, true],
        ['read_file', { path: 'missing.txt' }, false],
        ['read_file', { path: 'notes.txt', offset: 0 }, false],
        ['write_file', { path: 'w/new.txt', content: 'x\n' }, true],
        ['write_file', { path: 'w/new.txt', content: 'y\n', expect_version: 'stale' }, false],
        ['list_dir', { depth: 2 }, true],
        ['list_dir', { path: 'notes.txt' }, false],
        ['edit_file', { path: 'w/new.txt', dry_run: true, ops: [{ op: 'append', new_text: 'z' }] }, true],
        ['edit_file', { path: 'w/new.txt', ops: [{ op: 'delete_line', tag: '1:00000000' }] }, false],
        ['patch_file', { patch: '--- a/w/new.txt\n+++ b/w/new.txt\n@@ -1 +1 @@\n-x\n+patched\n' }, true],
        ['patch_file', { patch: '*** Begin Patch\n*** Update File: w/new.txt\n@@\n-absent\n+y\n*** End Patch\n' }, false],
        ['glob', { pattern: '**/*.txt' }, true],
        ['glob', { pattern: '{a' }, false],
        ['grep', { pattern: 'alpha', output: 'count' }, true],
        ['grep', { pattern: '(' }, false],
        ['bash', { command: 'echo out; echo err >&2; exit 5' }, true],
        ['bash', { command: 'sleep 60', background: true }, true],
        ['bash', { command: 'true', cwd: '../..' }, false],
        ['job_output', { job: 1 }, true],
        ['job_kill', { job: '1' }, true],
        ['job_output', { job: '1', since: 0 }, true],
        ['job_kill', { job: '42' }, false],
        ['job_output', { job: '42' }, false],
        ['write_memory', { key: 'project/build', content: 'make test', mode: 'append' }, true],
        ['write_memory', { key: '/bad', content: 'x' }, false],
        ['read_memory', { key: 'style' }, true],
        ['read_memory', { key: 'nothing' }, true],
        ['read_memory', { key: 'a//b' }, false],
        ['list_memory', {}, true],
        ['search_memory', { query: 'tabs' }, true],
        ['search_memory', { query: '  ' }, false],
        ['delete_memory', { key: 'style' }, true],
        ['delete_memory', { key: 'style' }, false],
        ['list_skills', {}, true],
        ['load_skill', { name: 'release' }, true],
        ['load_skill', { name: 'nope' }, false],
        ['read_skill_file', { name: 'release', path: 'CHECKLIST.md' }, true],
        ['read_skill_file', { name: 'release', path: '../../notes.txt' }, false],
      ];
      const succeeded = new Set();
      for (const [tool, args, ok] of calls) {
        const what = `${tool} ${JSON.stringify(args)}`;
        const res = await client.callTool({ name: tool, arguments: args });
        const text = res.content?.find((c) => c.type === 'text')?.text ?? '';
        if (ok) {
          assert.notEqual(res.isError, true, `${what}: ${text}`);
          validated(tool, res);
          succeeded.add(tool);
        } else {
          assert.equal(res.isError, true, `${what} should fail: ${text}`);
          assert.match(text, /^E_[A-Z_]+: /, `${what}: the error text starts with its code`);
          assert.equal(res.structuredContent, undefined, `${what}: an error result carries no structuredContent`);
        }
      }
      for (const t of tools.keys()) {
        assert.ok(succeeded.has(t), `tool ${t} was called successfully`);
      }
    });

    test('a path outside the workspace is an error result, not a protocol error', async () => {
      const res = await client.callTool({ name: 'read_file', arguments: { path: '../../etc/passwd' } });
      assert.equal(res.isError, true);
      assert.match(res.content[0].text, /^E_[A-Z_]+/);
    });

    test('subscribes to a file, is told when it changes on disk, and the next result carries the notice', async () => {
      assert.equal(client.getServerCapabilities().resources?.subscribe, true, 'the server advertises resources.subscribe');
      const path = join(ws, 'watched file.txt');
      const uri = pathToFileURL(path).href;
      assert.match(uri, /watched%20file\.txt$/);
      const read = await client.callTool({ name: 'read_file', arguments: { path: 'watched file.txt' } });
      assert.notEqual(read.isError, true, JSON.stringify(read.content));

      const updates = [];
      let wake = () => {};
      client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updates.push(n.params.uri); wake(); });
      await client.subscribeResource({ uri });
      await assert.rejects(client.subscribeResource({ uri: 'file:///etc/passwd' }), (err) => err instanceof McpError,
        'a file outside the workspace cannot be subscribed to');

      await writeFile(path, 'after\n');
      const deadline = Date.now() + 10000;
      while (!updates.includes(uri)) {
        assert.ok(Date.now() < deadline, `no notifications/resources/updated for ${uri} within 10s (got ${updates})`);
        await new Promise((r) => { wake = r; setTimeout(r, 100); });
      }
      const res = await client.readResource({ uri });
      assert.equal(res.contents[0].text, 'after\n');

      // The change is told once, in the text and _meta of a result.
      let notices;
      while (!notices) {
        assert.ok(Date.now() < deadline, 'no tool result carried the notice within 10s');
        const r = await client.callTool({ name: 'list_dir', arguments: {} });
        validated('list_dir', r);
        notices = r._meta?.['praxis/notices'];
        if (notices) {
          assert.equal(notices.length, 1);
          assert.equal(notices[0].path, 'watched file.txt');
          assert.equal(notices[0].kind, 'changed');
          assert.ok(r.content[0].text.endsWith('\n' + notices[0].text), r.content[0].text);
          assert.match(notices[0].text, /^notice: watched file\.txt changed on disk \([0-9a-f]{16} → [0-9a-f]{16}\): /);
        }
      }
      await client.unsubscribeResource({ uri });
    });

    test('an unknown tool is a JSON-RPC error', async () => {
      await assert.rejects(
        client.callTool({ name: 'no_such_tool', arguments: {} }),
        (err) => err instanceof McpError,
      );
    });
  });
}
