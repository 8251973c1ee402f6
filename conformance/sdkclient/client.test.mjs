// A real MCP client, written against the official TypeScript SDK, drives
// `praxis serve` over stdio and over streamable HTTP the way an agent
// would: list the tools, read a file, edit it with the anchors from that
// read, and check the bytes on disk and every structured result against
// the tool's output schema.
//
// PRAXIS_BIN names the praxis binary (built by run.sh).
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, writeFile, readFile, rm } from 'node:fs/promises';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
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

// Each transport: how to connect a client to a server serving ws.
const transports = {
  stdio: async (ws) => {
    const transport = new StdioClientTransport({
      command: praxis,
      args: ['serve', '--workspace', ws],
      stderr: 'inherit',
    });
    return { transport, stop: async () => {} };
  },
  http: async (ws) => {
    const port = await freePort();
    const child = spawn(praxis, ['serve', `--http=127.0.0.1:${port}`, '--workspace', ws], {
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
    let ws, client, server, tools;
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
      await writeFile(join(ws, 'notes.txt'), original);
      server = await connectTo(ws);
      client = new Client({ name: 'praxis-sdk-check', version: '1.0.0' });
      await client.connect(server.transport);
    });

    after(async () => {
      await client?.close();
      await server?.stop();
      if (ws) await rm(ws, { recursive: true, force: true });
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

    test('a path outside the workspace is an error result, not a protocol error', async () => {
      const res = await client.callTool({ name: 'read_file', arguments: { path: '../../etc/passwd' } });
      assert.equal(res.isError, true);
      assert.match(res.content[0].text, /^E_[A-Z_]+/);
    });

    test('an unknown tool is a JSON-RPC error', async () => {
      await assert.rejects(
        client.callTool({ name: 'no_such_tool', arguments: {} }),
        (err) => err instanceof McpError,
      );
    });
  });
}
