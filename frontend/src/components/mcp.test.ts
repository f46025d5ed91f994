// @vitest-environment jsdom
// MCP in the window: the tool card (server, hints, images, links; a saved card reads
// its answer from the journal), the approval card's per-tool and per-server answers,
// Settings' servers (import, add, test), the chat's MCP menu, prompts in the slash
// list and resources attached to a message. Through App with the fake backend where
// it takes more than one component.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import App from '../App.svelte';
import type { ToolView } from '../lib/cards';
import { splitCommandLine, joinCommandLine, type McpContent } from '../lib/mcp';
import { McpJournal } from '../lib/mcpjournal';
import type { ApprovalData } from '../lib/protocol';
import { fakeApi, session } from '../test/fakeApi';
import { findElement } from '../test/dom';
import ApprovalCard from './ApprovalCard.svelte';
import ToolCard from './ToolCard.svelte';
import { MCP_JOURNAL_KEY } from '../lib/mcpjournal';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

beforeAll(() => {
  Element.prototype.scrollIntoView ??= function () {};
  const proto = HTMLDialogElement.prototype as HTMLDialogElement & { showModal?: () => void };
  if (typeof proto.showModal !== 'function') {
    proto.showModal = function (this: HTMLDialogElement) {
      this.setAttribute('open', '');
    };
    proto.close = function (this: HTMLDialogElement) {
      this.removeAttribute('open');
    };
  }
});

function block(p: Partial<McpContent>): McpContent {
  return { type: 'text', text: '', mime_type: '', data: '', size: 0, omitted: '', uri: '', name: '', title: '', description: '', ...p };
}

function mcpTool(p: Partial<ToolView> = {}): ToolView {
  return {
    id: 't1', name: 'every__get-tiny-image', keyArg: '', status: 'done', isError: false, duration: 0.05, output: 'preview', diff: '', editDiff: null,
    mcp: { server: 'every', tool: 'get-tiny-image', title: 'Get Tiny Image Tool', annotations: { read_only: true, destructive: false, idempotent: true, open_world: false } },
    mcpResult: {
      server: 'every', tool: 'get-tiny-image', is_error: false, structured: '',
      content: [
        block({ text: "Here's the image you requested:" }),
        block({ type: 'image', mime_type: 'image/png', data: PNG, size: 68 }),
        block({ type: 'image', mime_type: 'image/svg+xml', data: 'PHN2Zz48L3N2Zz4=', size: 11 }),
        block({ type: 'resource_link', uri: 'https://example.com/doc', name: 'doc', description: 'a document' }),
        block({ type: 'resource_link', uri: 'file:///etc/passwd', name: 'passwd' }),
      ],
    },
    ...p,
  };
}

describe('the MCP tool card', () => {
  it('names the server and tool, shows the hints, and opens on an image', () => {
    const { container } = render(ToolCard, { tool: mcpTool() });
    expect(container.querySelector('.server')?.textContent).toBe('every');
    expect(screen.getByText('Get Tiny Image Tool')).toBeTruthy();
    expect(screen.getByText('read-only')).toBeTruthy();
    const imgs = container.querySelectorAll('img');
    // The PNG shows; the SVG (it can carry script) does not.
    expect(imgs.length).toBe(1);
    expect(imgs[0].getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    expect(container.textContent).toContain("Here's the image you requested:");
    // An http(s) link is a link; a file URI is text.
    const links = container.querySelectorAll('a');
    expect(links.length).toBe(1);
    expect(links[0].getAttribute('href')).toBe('https://example.com/doc');
    expect(container.textContent).toContain('file:///etc/passwd');
  });

  it('a saved card reads what the server answered from its turn\'s journal', async () => {
    const read = vi.fn(async () => [
      { event: 'tool', data: { tid: 'c1', mcp: { server: 'fs', tool: 'write_file', title: 'Write File', annotations: { read_only: false, destructive: true } } } },
      { event: 'tool_complete', data: { tid: 'c1', mcp: { server: 'fs', tool: 'write_file', is_error: false, content: [{ type: 'text', text: 'wrote a.txt' }] } } },
    ]);
    const journal = new McpJournal(read);
    const saved: ToolView = {
      id: 'c1', name: 'fs__write_file', keyArg: '', status: 'done', isError: false, duration: null, output: 'wrote a.txt', diff: '', editDiff: null,
      mcp: { server: 'fs', tool: 'write_file', title: '', annotations: { read_only: false, destructive: true, idempotent: false, open_world: true } }, streamId: 's1',
    };
    const { container } = render(ToolCard, { props: { tool: saved }, context: new Map([[MCP_JOURNAL_KEY, journal]]) });
    await waitFor(() => expect(screen.getByText('Write File')).toBeTruthy());
    expect(screen.getByText('destructive')).toBeTruthy();
    expect(read).toHaveBeenCalledWith('s1', 0);
    expect(container.querySelector('.server')?.textContent).toBe('fs');
  });
});

describe('a saved MCP card whose text starts with "Error:"', () => {
  const saved = (output: string): ToolView => ({
    id: 'c1', name: 'lint__run', keyArg: '', status: 'done', isError: false, duration: null, output, diff: '', editDiff: null,
    mcp: { server: 'lint', tool: 'run', title: '', annotations: { read_only: true, destructive: false, idempotent: true, open_world: false } }, streamId: 's1',
  });

  it('is not failed when the journal says the server answered without an error', async () => {
    const read = vi.fn(async () => [
      { event: 'tool_complete', data: { tid: 'c1', mcp: { server: 'lint', tool: 'run', is_error: false, content: [{ type: 'text', text: 'Error: 3 problems in a.go' }] } } },
    ]);
    const { container } = render(ToolCard, { props: { tool: saved('Error: 3 problems in a.go') }, context: new Map([[MCP_JOURNAL_KEY, new McpJournal(read)]]) });
    await waitFor(() => expect(read).toHaveBeenCalled());
    await waitFor(() => expect(container.querySelector('.tool')?.classList.contains('error')).toBe(false));
    expect(container.textContent).not.toContain('failed');
  });

  it('is failed when the journal says so, or, knowing no answer, when its text is the runtime\'s error', async () => {
    const read = vi.fn(async () => [
      { event: 'tool_complete', data: { tid: 'c1', mcp: { server: 'lint', tool: 'run', is_error: true, content: [{ type: 'text', text: 'boom' }] } } },
    ]);
    const a = render(ToolCard, { props: { tool: saved('Error: boom') }, context: new Map([[MCP_JOURNAL_KEY, new McpJournal(read)]]) });
    await waitFor(() => expect(a.container.querySelector('.tool')?.classList.contains('error')).toBe(true));
    a.unmount();
    const none = vi.fn(async () => []);
    const b = render(ToolCard, { props: { tool: saved('Error: the server exited') }, context: new Map([[MCP_JOURNAL_KEY, new McpJournal(none)]]) });
    await waitFor(() => expect(b.container.querySelector('.tool')?.classList.contains('error')).toBe(true));
  });
});

describe('the MCP approval card', () => {
  const approval: ApprovalData = {
    approval_id: 'ap_1', command: 'fs · Write File', description: 'Create or overwrite a file', pattern: 'mcp:fs/write_file', timeout_s: 300, expires_at: 0, pending_count: 1,
    kind: 'mcp', mcp: { server: 'fs', tool: 'write_file', title: 'Write File', annotations: { read_only: false, destructive: true, idempotent: false, open_world: false } },
    args: { path: '/w/a.txt', content: 'hello' }, choices: ['once', 'session', 'always', 'always_server', 'deny'], sandbox: 'local server, sandboxed (workspace-write, no network)',
  };

  it('shows the tool, its hints and arguments, and answers per tool or per server', async () => {
    const onrespond = vi.fn();
    render(ApprovalCard, { approval, startedAt: Date.now(), armDelayMs: 0, onrespond, onyolo: () => {} });
    expect(screen.getByRole('heading', { name: 'Use this MCP tool?' })).toBeTruthy();
    expect(screen.getByText('destructive')).toBeTruthy();
    expect(screen.getByLabelText('Arguments').textContent).toContain('"path": "/w/a.txt"');
    expect(document.body.textContent).toContain('local server, sandboxed');
    const labels = screen.getAllByRole('button').map((b) => b.textContent?.trim());
    expect(labels.slice(0, 5)).toEqual(['Allow once', 'Allow in this chat', 'Always allow this tool', 'Always allow this server', 'Deny']);
    await userEvent.click(screen.getByRole('button', { name: 'Always allow this server' }));
    expect(onrespond).toHaveBeenCalledWith('always_server');
  });

  it("a server's sampling request says it uses the chat's model, shows the prompt, and offers no per-server answer", async () => {
    const onrespond = vi.fn();
    render(ApprovalCard, {
      approval: {
        approval_id: 'ap_3', command: "every · sampling (uses the chat's model)", description: "The MCP server every asks the chat's model (m) to answer: write a haiku",
        pattern: 'mcp-sampling:every', timeout_s: 300, expires_at: 0, pending_count: 1, choices: ['once', 'session', 'deny'],
        kind: 'mcp', mcp: { server: 'every', tool: 'sampling', title: "Ask the chat's model", annotations: { read_only: false, destructive: true, idempotent: false, open_world: true } },
        args: { system_prompt: 'You are a helpful test server.', messages: [{ role: 'user', text: 'write a haiku' }], max_tokens: 60 },
      },
      startedAt: Date.now(), armDelayMs: 0, onrespond, onyolo: () => {},
    });
    expect(screen.getByRole('heading', { name: "Let this MCP server use the chat's model?" })).toBeTruthy();
    expect(screen.queryByText('destructive')).toBeNull();
    expect(document.body.textContent).not.toContain('Always allow this server');
    expect(screen.getByLabelText('Arguments').textContent).toContain('"text": "write a haiku"');
    const labels = screen.getAllByRole('button').map((b) => b.textContent?.trim());
    expect(labels.slice(0, 3)).toEqual(['Allow once', 'Allow in this chat', 'Deny']);
    await userEvent.click(screen.getByRole('button', { name: 'Deny' }));
    expect(onrespond).toHaveBeenCalledWith('deny');
  });

  it('a command card offers only the choices the agent allows', () => {
    render(ApprovalCard, {
      approval: { approval_id: 'ap_2', command: 'curl x', description: 'needs the network', pattern: 'sandbox_network', timeout_s: 300, expires_at: 0, pending_count: 1, choices: ['once', 'deny'] },
      startedAt: Date.now(), armDelayMs: 0, onrespond: () => {}, onyolo: () => {},
    });
    expect(screen.queryByRole('button', { name: 'Always allow' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Allow once' })).toBeTruthy();
  });
});

async function mount(setup?: (f: ReturnType<typeof fakeApi>) => void) {
  const f = fakeApi();
  f.sessions.set('a', session('a', 5, { title: 'Notes', runtime: 'builtin' }));
  setup?.(f);
  render(App, { backend: f.api, armDelayMs: 0 });
  const user = userEvent.setup();
  // Up: the chat is open and its MCP servers read.
  await waitFor(() => {
    expect(screen.getByRole('heading', { name: 'Notes' })).toBeTruthy();
    expect(f.api.getChatMcp).toHaveBeenCalledWith('a');
  });
  return { f, user };
}

function addServer(f: ReturnType<typeof fakeApi>, name: string) {
  f.mcp.servers.push({ name, transport: 'stdio', command: 'node', args: ['server.js'], env: [], cwd: '', url: '', headers: [], enabled: true, allow_read_only: false, sandbox: '', disabled_tools: [], writable_paths: [] });
}

describe('MCP servers in Settings', () => {
  it('imports a pasted mcpServers configuration and tests a server', async () => {
    const { f, user } = await mount();
    await user.click(screen.getByRole('button', { name: /settings/i }));
    await user.click(await screen.findByRole('button', { name: 'Import JSON…' }));
    const box = await screen.findByLabelText('MCP configuration (JSON)');
    await fireEvent.input(box, { target: { value: '{"mcpServers": {"files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/me"]}}}' } });
    await user.click(screen.getByRole('button', { name: 'Import' }));
    await waitFor(() => expect(f.api.importMcpServers).toHaveBeenCalled());
    const dlg = await findElement('dialog.mcp-import');
    await waitFor(() => expect(within(dlg).getByRole('status').textContent).toContain('Added: files'));
    await user.click(screen.getByRole('button', { name: 'Done' }));
    const row = await findElement('[data-mcp-server="files"]');
    await waitFor(() => expect(row.textContent).toContain('npx -y @modelcontextprotocol/server-filesystem /home/me'));
    await user.click(within(row).getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(row.textContent).toContain('Connected'));
    expect(row.textContent).toContain('read_file');
    expect(row.textContent).toContain('/files:summarise');
  });

  it('adds a server with a secret variable and turns it off for every chat', async () => {
    const { f, user } = await mount();
    await user.click(screen.getByRole('button', { name: /settings/i }));
    await user.click(await screen.findByRole('button', { name: 'Add server…' }));
    const dlg = await findElement<HTMLDialogElement>('dialog.mcp-server[open]');
    await user.type(within(dlg).getByLabelText('Name'), 'gh');
    await user.type(within(dlg).getByLabelText('Command'), 'npx -y "@modelcontextprotocol/server-github"');
    await user.click(within(dlg).getByRole('button', { name: '+ Add' }));
    await user.type(within(dlg).getByLabelText('Environment variables: name 1'), 'GITHUB_TOKEN');
    await user.type(within(dlg).getByLabelText('Environment variables: value 1'), 'ghp_secret');
    await user.click(within(dlg).getByRole('checkbox', { name: 'secret' }));
    await user.click(within(dlg).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(f.api.saveMcpServer).toHaveBeenCalled());
    const saved = f.api.saveMcpServer.mock.calls[0][0];
    expect(saved).toMatchObject({ name: 'gh', transport: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-github'] });
    expect(saved.env).toEqual([{ name: 'GITHUB_TOKEN', value: 'ghp_secret', secret: true, has_value: false }]);
    await user.click(await screen.findByRole('checkbox', { name: 'gh on in every chat' }));
    await waitFor(() => expect(f.api.setMcpServerEnabled).toHaveBeenCalledWith('gh', false));
  });

  it("edits a sandboxed server's writable folders and shows where Test says it may write", async () => {
    const { f, user } = await mount((f) => addServer(f, 'memory'));
    f.api.testMcpServer.mockImplementationOnce(async (c) => ({
      name: c.name, ok: true, tools: [], prompts: [], resources: [], took_ms: 5,
      writable: ['/srv/node_modules/@modelcontextprotocol/server-memory', '/data/memory'],
      withheld: [{ path: '/home/me/code/tool', reason: 'it is a git repository (it holds .git), whose hooks and settings run outside the sandbox' }],
    }));
    await user.click(screen.getByRole('button', { name: /settings/i }));
    const row = await findElement('[data-mcp-server="memory"]');
    await user.click(within(row).getByRole('button', { name: 'Edit' }));
    const dlg = await findElement<HTMLDialogElement>('dialog.mcp-server[open]');
    await user.type(within(dlg).getByLabelText(/Writable folders/), '/data/memory{Enter} /data/other ');
    await user.click(within(dlg).getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(dlg.querySelector('[data-mcp-writable]')?.textContent).toContain('/srv/node_modules/@modelcontextprotocol/server-memory'));
    expect(f.api.testMcpServer.mock.calls[0][0].writable_paths).toEqual(['/data/memory', '/data/other']);
    // A folder the sandbox keeps read-only is named with why and how to allow it.
    const held = dlg.querySelector('[data-mcp-withheld]')?.textContent ?? '';
    expect(held).toContain('/home/me/code/tool');
    expect(held).toContain('git repository');
    expect(held).toContain('writable folders');
    // Without a sandbox the field is gone: nothing is confined.
    await user.selectOptions(within(dlg).getByLabelText('Runs'), 'off');
    expect(within(dlg).queryByLabelText(/Writable folders/)).toBeNull();
  });
});

describe('MCP in a chat', () => {
  it("turns a server off in the chat's menu", async () => {
    const { f, user } = await mount((f) => addServer(f, 'every'));
    await user.click(await screen.findByRole('button', { name: /^MCP/ }));
    await user.selectOptions(await screen.findByLabelText('every in this chat'), 'off');
    await waitFor(() => {
      expect(f.api.setChatMcpServer).toHaveBeenCalledWith('a', 'every', 'off');
      expect(screen.getByRole('button', { name: /^MCP/ }).textContent).toContain('0');
    });
  });

  it('offers the servers\' prompts in the slash list and puts the rendered prompt in the message', async () => {
    const { f, user } = await mount((f) => addServer(f, 'every'));
    const box = screen.getByRole('textbox', { name: /message/i });
    await user.type(box, '/summ');
    await waitFor(() => expect(screen.getByRole('option', { name: /\/every:summarise/ })).toBeTruthy());
    await user.keyboard('{Enter}');
    // The prompt has an argument: asked for before it is rendered.
    const style = await screen.findByLabelText('style');
    await user.type(style, 'short{Enter}');
    await waitFor(() => {
      expect(f.api.getMcpPrompt).toHaveBeenCalledWith('a', 'every', 'summarise', { style: 'short' });
      expect((box as HTMLTextAreaElement).value).toBe('Prompt summarise of every in short style.');
    });
    expect(f.api.startTurn).not.toHaveBeenCalled();
  });

  it('attaches a resource to the next message', async () => {
    const { f, user } = await mount((f) => addServer(f, 'every'));
    await user.click(await screen.findByRole('button', { name: '+ MCP resource' }));
    await user.click(await screen.findByRole('button', { name: /notes\.txt/ }));
    expect(await screen.findByRole('button', { name: 'Remove notes.txt' })).toBeTruthy();
    await user.type(screen.getByRole('textbox', { name: /message/i }), 'summarise this{Enter}');
    await waitFor(() => expect(f.api.startTurn).toHaveBeenCalled());
    const text = f.api.startTurn.mock.calls[0][1] as string;
    expect(text).toContain('summarise this');
    expect(text).toContain('Resource file:///notes.txt (MCP server every):');
    expect(text).toContain('contents of file:///notes.txt');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Remove notes.txt' })).toBeNull());
  });
});

describe('command lines', () => {
  it('split and join keep quoted arguments', () => {
    expect(splitCommandLine(`npx -y "@scope/pkg" '/home/my docs' a\\ b ""`)).toEqual(['npx', '-y', '@scope/pkg', '/home/my docs', 'a b', '']);
    const args = ['node', '/x y/index.js', "it's", ''];
    expect(splitCommandLine(joinCommandLine(args))).toEqual(args);
  });
});
