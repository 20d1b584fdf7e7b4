#!/usr/bin/env node
// mockapi.js - a mock of the Anthropic Messages API for the real Claude Code CLI.
//
//   node mockapi.js --log FILE [--dump FILE] [--ppid PID]
//
// Listens on 127.0.0.1 on a free port, prints one line "PORT <n>" on stdout
// when ready, and runs until SIGTERM/SIGINT (exit status 0), until the
// process PID given by --ppid is gone, or for 30 minutes at most.
// No dependencies beyond Node >= 18.
//
// The reply is scripted by the latest user prompt (tests/README.md): the
// last text block of the latest user message that has one, leaving out the
// CLI's own <system-reminder> blocks, its "Continue from where you left
// off." and its "[Your previous response had no visible output...]".
//
//   MOCK: STEP || STEP || ...      the k-th request holding this exact line
//                                  gets the k-th step; the last one repeats
//                                  (counted per line text, for the life of
//                                  the server)
//   MOCK-USAGE: INPUT OUTPUT       token counts of each reply (1000 100),
//                                  in message_start and message_delta
//
// Steps:
//   reply TEXT            assistant text TEXT ("\n" is a newline)
//   bash CMD => TEXT      a Bash tool_use running CMD (stop_reason tool_use);
//                         the request carrying its tool_result gets TEXT and
//                         uses no step
//   tool NAME JSON => TEXT
//                         a tool_use of tool NAME with the input object JSON
//                         (which may hold "=>", not "||"); then TEXT as for
//                         bash
//   error STATUS          HTTP STATUS with an Anthropic error body and
//                         x-should-retry: false: 529 overloaded_error,
//                         429 rate_limit_error, 500 api_error,
//                         401 authentication_error ("invalid x-api-key"),
//                         also 400, 403, 404, 413
//   limit SECONDS [CLAIM] a subscriber usage limit: HTTP 429 with
//                         anthropic-ratelimit-unified-status: rejected,
//                         -reset: now + SECONDS (epoch seconds) and
//                         -representative-claim: CLAIM (default five_hour;
//                         seven_day, seven_day_opus, seven_day_sonnet).
//                         The CLI says "You've hit your session limit ·
//                         resets 5:41am (UTC)" (weekly/Opus/Sonnet limit for
//                         the other claims) and prints a rate_limit_event
//                         line only in OAuth mode: ANTHROPIC_API_KEY unset
//                         and CLAUDE_CODE_OAUTH_TOKEN set to anything (an
//                         API key wins over the token).  With an API key it
//                         is a plain "API Error: Request rejected (429) · ..."
//                         Without the claim header, OAuth mode says "Server
//                         is temporarily limiting requests (not your usage
//                         limit)".
//   hang SECONDS          nothing at all (not even headers) for SECONDS,
//                         then a reply of an empty text
//   long BYTES            a reply of BYTES "x" (at most 256 MiB)
// No MOCK line: the reply is "ok".  An unknown step replies with a text
// saying so.
//
// Requests that use no step:
//   - session titles (no tools; output_config.format json_schema with a
//     title, or a system/prompt asking for a title, without the main
//     prompt's environment section): {"title": "Mock title"}
//   - the last user message carries a tool_result: the bash step's TEXT
//   - the CLI's nudge after an empty reply (it asks once more in the same
//     turn, appending "[Your previous response had no visible output...]"):
//     an empty text again, at once, so the turn ends with result ""
//   - a request without streaming right after a streamed one of the same
//     session and line (the CLI's fallback after a 404 on the stream):
//     the step just served, again
//
// Every POST /v1/messages is logged to --log as one JSON line:
//   time           ISO time of arrival
//   model          the model id on the wire
//   stream         the request asked for SSE
//   n_messages     messages.length: the CLI sends one "system" message too,
//                  so a fresh prompt has 2, and each turn adds 2 (4 with a
//                  tool call)
//   session        the X-Claude-Code-Session-Id header (or null)
//   title_request  a session-title request
//   prompt         the latest prompt (as above)
//   prompts        the prompt of every user message, oldest first
//   step           reply, bash, tool, error, limit, hang, unknown, default
//                  (no MOCK line), title, tool-followup, empty-followup
//   status         the HTTP status sent
//   mock           the MOCK line's steps (the text after "MOCK:") or null
//   index          the step used, counted from 1 (null when none was)
//   retry          true for the non-streaming fallback request
//   reset          for limit: the reset time sent (epoch seconds)
//   input_tokens, output_tokens   the usage sent
//   tools          the names of the request's tools (what --allowedTools,
//                  --disallowedTools and --mcp-config left the model)
//   tool_results   the tool_result blocks of the latest user message, as
//                  { text, is_error }: what a tool (or a hook's denial) told
//                  the model
//   context        the other text blocks of that message when it carries
//                  tool results: the CLI's system reminders, where hooks'
//                  additionalContext and blocking PostToolUse reasons go
//   system_tail    the last 2000 characters of the system prompt (where
//                  --append-system-prompt ends up)
//
// Other endpoints: HEAD or GET / -> 200, POST /v1/messages/count_tokens ->
// {"input_tokens": 1000}, anything else -> 404 not_found_error.
// --dump FILE appends every request whole (headers and body), for debugging.
'use strict';

const http = require('http');
const fs = require('fs');
const crypto = require('crypto');

const args = process.argv.slice(2);
let logFile = null;
let dumpFile = null;
let watchPid = 0;
for (let i = 0; i < args.length; i++) {
  const a = args[i];
  if (a === '--log') logFile = args[++i];
  else if (a === '--dump') dumpFile = args[++i];
  else if (a === '--ppid') watchPid = parseInt(args[++i], 10) || 0;
  else {
    process.stderr.write(`mockapi: unknown argument: ${a}\n` +
      'usage: node mockapi.js --log FILE [--dump FILE] [--ppid PID]\n');
    process.exit(2);
  }
}
if (!logFile) {
  process.stderr.write('usage: node mockapi.js --log FILE [--dump FILE] [--ppid PID]\n');
  process.exit(2);
}
fs.writeFileSync(logFile, '', { flag: 'a' });

// Texts the CLI adds to a prompt's user message by itself: after a failed
// or killed turn on --resume, and after an empty reply (it then asks once
// more within the same turn).
const CONTINUE_TEXT = 'Continue from where you left off.';
const NUDGE_PREFIX = '[Your previous response had no visible output.';
const counters = new Map();      // MOCK line text -> requests seen
const lastServed = new Map();    // MOCK line text -> { stream, session }
const pendingTools = new Map();  // tool_use id -> TEXT of its bash step
const timers = new Set();        // hang timers, cleared on shutdown

function rid(prefix) {
  return prefix + crypto.randomBytes(12).toString('hex');
}

function appendLine(file, obj) {
  try {
    fs.appendFileSync(file, JSON.stringify(obj) + '\n');
  } catch (e) {
    process.stderr.write(`mockapi: cannot write ${file}: ${e.message}\n`);
  }
}

// The text blocks of a message, as strings.
function textsOf(msg) {
  if (!msg) return [];
  if (typeof msg.content === 'string') return [msg.content];
  if (!Array.isArray(msg.content)) return [];
  return msg.content
    .filter((b) => b && b.type === 'text' && typeof b.text === 'string')
    .map((b) => b.text);
}

// The last text block of a message is the CLI's nudge after an empty reply.
function isNudge(msg) {
  const t = textsOf(msg).filter((x) => x.trim() !== '');
  return t.length > 0 && t[t.length - 1].trim().startsWith(NUDGE_PREFIX);
}

function hasToolResult(msg) {
  return !!(msg && Array.isArray(msg.content) &&
    msg.content.some((b) => b && b.type === 'tool_result'));
}

// A text block that is a prompt: not the CLI's "Continue from where you
// left off." and not a bare <system-reminder> it injects.
function isPromptText(t) {
  const s = t.trim();
  if (s === '' || s === CONTINUE_TEXT || s.startsWith(NUDGE_PREFIX)) return false;
  if (/^<system-reminder>[\s\S]*<\/system-reminder>$/.test(s) && !/^\s*MOCK:/m.test(s)) return false;
  return true;
}

// The latest prompt: the last prompt text block of the latest user message
// that has one ("" if none).  It is the last block, not the whole message,
// because on --resume after a failed turn the CLI merges the unanswered
// prompt and the new one into one user message of two text blocks.
function latestPrompt(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (!m || m.role !== 'user') continue;
    const texts = textsOf(m).filter(isPromptText);
    if (texts.length) return texts[texts.length - 1];
  }
  return '';
}

// The prompt of every user message that has one, oldest first: the
// history the model sees.
function allPrompts(messages) {
  const out = [];
  for (const m of messages) {
    if (!m || m.role !== 'user') continue;
    const texts = textsOf(m).filter(isPromptText);
    if (texts.length) out.push(...texts);
  }
  return out;
}

function systemText(system) {
  if (typeof system === 'string') return system;
  if (Array.isArray(system)) return system.map((b) => (b && b.text) || '').join('\n');
  return '';
}

// The text of a tool_result block: its string content, or its text blocks.
function toolResultText(b) {
  if (typeof b.content === 'string') return b.content;
  if (Array.isArray(b.content)) return b.content.map((x) => (x && x.text) || '').join('\n');
  return '';
}

function isTitleRequest(body) {
  const tools = body.tools;
  if (Array.isArray(tools) && tools.length > 0) return false;
  const fmt = body.output_config && body.output_config.format;
  if (fmt && fmt.type === 'json_schema') {
    const props = fmt.schema && fmt.schema.properties;
    if (props && props.title) return true;
  }
  const sys = systemText(body.system);
  // A turn given no tools (raymond.evaluate's, --tools "") still has the
  // CLI's whole system prompt, which mentions titles; a title request has
  // no environment section.
  if (sys.includes('Primary working directory')) return false;
  const last = (body.messages || []).filter((m) => m && m.role === 'user').pop();
  const text = sys + '\n' + textsOf(last).join('\n');
  return /\btitle\b/i.test(text);
}

function unescape(s) {
  return s.replace(/\\n/g, '\n');
}

function parseStep(s) {
  s = s.trim();
  const m = /^(\S+)(?:\s+([\s\S]*))?$/.exec(s);
  const kind = m ? m[1] : '';
  const rest = m && m[2] !== undefined ? m[2] : '';
  switch (kind) {
    case 'reply':
      return { kind, text: unescape(rest) };
    case 'bash': {
      const at = rest.indexOf('=>');
      if (at < 0) return { kind, command: rest.trim(), text: '' };
      return { kind, command: rest.slice(0, at).trim(), text: unescape(rest.slice(at + 2).trim()) };
    }
    case 'tool': {
      // tool NAME JSON => TEXT: the JSON ends at the first "=>" after which
      // what came before parses (a command may itself hold "=>").
      const w = /^(\S+)\s*([\s\S]*)$/.exec(rest.trim());
      if (!w) return { kind: 'unknown', text: `mockapi: unknown step: ${s}` };
      const tail = w[2];
      for (let at = tail.indexOf('=>'); ; at = tail.indexOf('=>', at + 2)) {
        const json = at < 0 ? tail : tail.slice(0, at);
        try {
          const input = JSON.parse(json);
          if (input && typeof input === 'object' && !Array.isArray(input)) {
            return { kind, name: w[1], input, text: at < 0 ? '' : unescape(tail.slice(at + 2).trim()) };
          }
        } catch (e) { /* try the next "=>" */ }
        if (at < 0) return { kind: 'unknown', text: `mockapi: unknown step: ${s}` };
      }
    }
    case 'error':
      return { kind, status: parseInt(rest, 10) || 500 };
    case 'limit': {
      // An optional second word names the limit (five_hour, seven_day,
      // seven_day_opus, seven_day_sonnet); anything else is ignored.
      const w = rest.trim().split(/\s+/);
      const claim = /^[a-z][a-z0-9_]*$/.test(w[1] || '') ? w[1] : 'five_hour';
      return { kind, seconds: parseInt(w[0], 10) || 0, claim };
    }
    case 'hang':
      return { kind, seconds: parseFloat(rest) || 0 };
    case 'long':
      return { kind, text: 'x'.repeat(Math.min(parseInt(rest, 10) || 0, 256 * 1024 * 1024)) };
    default:
      return { kind: 'unknown', text: `mockapi: unknown step: ${s}` };
  }
}

function findLine(text, re) {
  for (const line of text.split('\n')) {
    const m = re.exec(line);
    if (m) return m;
  }
  return null;
}

function usageOf(prompt) {
  const m = findLine(prompt, /^\s*MOCK-USAGE:\s*(\d+)\s+(\d+)\s*$/);
  return m ? { input: parseInt(m[1], 10), output: parseInt(m[2], 10) } : { input: 1000, output: 100 };
}

const ERRORS = {
  400: ['invalid_request_error', 'Invalid request'],
  401: ['authentication_error', 'invalid x-api-key'],
  403: ['permission_error', 'Permission denied'],
  404: ['not_found_error', 'Not found'],
  413: ['request_too_large', 'Request too large'],
  429: ['rate_limit_error', 'Rate limited'],
  500: ['api_error', 'Internal server error'],
  529: ['overloaded_error', 'Overloaded'],
};

function errorBody(status, type, message) {
  const [t, m] = ERRORS[status] || ['api_error', 'Internal server error'];
  return JSON.stringify({
    type: 'error',
    error: { type: type || t, message: message || m },
    request_id: rid('req_mock_'),
  });
}

function sendError(res, status, extraHeaders, type, message) {
  const body = errorBody(status, type, message);
  res.writeHead(status, Object.assign({
    'content-type': 'application/json',
    'request-id': rid('req_mock_'),
    'x-should-retry': 'false',
    'content-length': Buffer.byteLength(body),
  }, extraHeaders || {}));
  res.end(body);
}

function usageJson(u) {
  return {
    input_tokens: u.input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: u.output,
  };
}

// Send a message of content blocks, as SSE or as plain JSON.
function sendMessage(res, body, blocks, stopReason, u) {
  const model = body.model || 'claude-mock';
  const id = rid('msg_mock_');
  if (!res.writable) return;
  if (!body.stream) {
    const out = JSON.stringify({
      id, type: 'message', role: 'assistant', model,
      content: blocks, stop_reason: stopReason, stop_sequence: null,
      usage: usageJson(u),
    });
    res.writeHead(200, {
      'content-type': 'application/json',
      'request-id': rid('req_mock_'),
      'content-length': Buffer.byteLength(out),
    });
    res.end(out);
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': rid('req_mock_'),
  });
  const ev = (type, data) => {
    data.type = type;
    res.write(`event: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  ev('message_start', {
    message: {
      id, type: 'message', role: 'assistant', model, content: [],
      stop_reason: null, stop_sequence: null, usage: usageJson(u),
    },
  });
  blocks.forEach((b, index) => {
    if (b.type === 'text') {
      ev('content_block_start', { index, content_block: { type: 'text', text: '' } });
      if (b.text !== '') {
        ev('content_block_delta', { index, delta: { type: 'text_delta', text: b.text } });
      }
    } else if (b.type === 'tool_use') {
      ev('content_block_start', {
        index, content_block: { type: 'tool_use', id: b.id, name: b.name, input: {} },
      });
      ev('content_block_delta', {
        index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(b.input) },
      });
    }
    ev('content_block_stop', { index });
  });
  ev('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: usageJson(u),
  });
  ev('message_stop', {});
  res.end();
}

function sendText(res, body, text, u) {
  sendMessage(res, body, [{ type: 'text', text }], 'end_turn', u);
}

function handleMessages(req, res, raw, url) {
  let body;
  try {
    body = JSON.parse(raw);
  } catch (e) {
    sendError(res, 400, null, 'invalid_request_error', 'mockapi: body is not JSON');
    return;
  }
  if (dumpFile) {
    appendLine(dumpFile, { time: new Date().toISOString(), url, headers: req.headers, body });
  }
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const prompt = latestPrompt(messages);
  const title = isTitleRequest(body);
  const entry = {
    time: new Date().toISOString(),
    model: body.model || null,
    stream: !!body.stream,
    n_messages: messages.length,
    session: req.headers['x-claude-code-session-id'] || null,
    title_request: title,
    prompt,
    prompts: allPrompts(messages),
    step: null,
    status: 200,
    tools: Array.isArray(body.tools) ? body.tools.map((t) => t && t.name) : [],
    tool_results: [],
    context: [],
    system_tail: systemText(body.system).slice(-2000),
    mock: null,
    index: null,
  };
  const u = usageOf(prompt);
  const log = () => {
    entry.input_tokens = u.input;
    entry.output_tokens = u.output;
    appendLine(logFile, entry);
  };

  if (title) {
    entry.step = 'title';
    log();
    sendText(res, body, '{"title": "Mock title"}', u);
    return;
  }

  const mockLine = findLine(prompt, /^\s*MOCK:\s*(.*?)\s*$/);
  const key = mockLine ? mockLine[1] : null;
  entry.mock = key;

  // The last user message (the CLI puts a "system" message after it).
  const last = messages.filter((m) => m && m.role === 'user').pop();
  if (last && hasToolResult(last)) {
    entry.tool_results = last.content.filter((b) => b && b.type === 'tool_result')
      .map((b) => ({ text: toolResultText(b), is_error: !!b.is_error }));
    entry.context = textsOf(last);
  }
  if (last && last.role === 'user' && hasToolResult(last)) {
    // The follow-up of a bash step: the text promised with the tool call.
    entry.step = 'tool-followup';
    let text = null;
    for (const b of last.content) {
      if (b && b.type === 'tool_result' && pendingTools.has(b.tool_use_id)) {
        text = pendingTools.get(b.tool_use_id);
        pendingTools.delete(b.tool_use_id);
      }
    }
    if (text === null && key) {
      // Not ours (say, another server's): the bash step last served.
      const steps = key.split('||');
      const n = Math.max(1, counters.get(key) || 1);
      const st = parseStep(steps[Math.min(n, steps.length) - 1]);
      text = st.kind === 'bash' || st.kind === 'tool' ? st.text : '';
    }
    if (text === null) text = 'ok';
    log();
    sendText(res, body, text, u);
    return;
  }

  if (last && last.role === 'user' && isNudge(last)) {
    // The CLI asks again after an empty reply (a hang, or "reply" of
    // nothing): the same turn, so no step is used; answer empty again,
    // at once, which ends the turn with an empty result.
    entry.step = 'empty-followup';
    log();
    sendText(res, body, '', u);
    return;
  }

  if (!key) {
    entry.step = 'default';
    log();
    sendText(res, body, 'ok', u);
    return;
  }

  // A request without streaming right after a streamed one of the same
  // session and MOCK line is the CLI's retry of a stream that failed (a
  // 404): the same turn, so it gets the step just served again.
  let n = counters.get(key) || 0;
  const prev = lastServed.get(key);
  if (!body.stream && n > 0 && prev && prev.stream && prev.session === entry.session) {
    entry.retry = true;
  } else {
    n += 1;
    counters.set(key, n);
  }
  lastServed.set(key, { stream: entry.stream, session: entry.session });
  entry.index = n;
  const steps = key.split('||');
  const step = parseStep(steps[Math.min(n, steps.length) - 1]);
  entry.step = step.kind;

  switch (step.kind) {
    case 'reply':
    case 'long':
    case 'unknown':
      log();
      sendText(res, body, step.text, u);
      return;
    case 'bash':
    case 'tool': {
      const id = rid('toolu_mock_');
      pendingTools.set(id, step.text);
      log();
      const name = step.kind === 'bash' ? 'Bash' : step.name;
      const input = step.kind === 'bash'
        ? { command: step.command, description: 'Run a command for the mock' } : step.input;
      sendMessage(res, body, [{ type: 'tool_use', id, name, input }], 'tool_use', u);
      return;
    }
    case 'error':
      entry.status = step.status;
      log();
      sendError(res, step.status);
      return;
    case 'limit': {
      const reset = Math.floor(Date.now() / 1000) + step.seconds;
      entry.status = 429;
      entry.reset = reset;
      log();
      sendError(res, 429, {
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(reset),
        'anthropic-ratelimit-unified-representative-claim': step.claim,
      }, 'rate_limit_error', 'This request would exceed your account\'s rate limit. Please try again later.');
      return;
    }
    case 'hang': {
      log();
      const t = setTimeout(() => {
        timers.delete(t);
        sendText(res, body, '', u);
      }, step.seconds * 1000);
      timers.add(t);
      res.on('close', () => { clearTimeout(t); timers.delete(t); });
      return;
    }
  }
}

const server = http.createServer((req, res) => {
  const url = req.url || '/';
  const path = url.split('?')[0];
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('error', () => {});
  res.on('error', () => {});
  req.on('end', () => {
    const raw = Buffer.concat(chunks).toString('utf8');
    if (req.method === 'HEAD' || (req.method === 'GET' && path === '/')) {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(req.method === 'HEAD' ? undefined : 'mockapi\n');
      return;
    }
    if (req.method === 'POST' && path === '/v1/messages') {
      handleMessages(req, res, raw, url);
      return;
    }
    if (dumpFile) {
      appendLine(dumpFile, { time: new Date().toISOString(), method: req.method, url, headers: req.headers, raw });
    }
    if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
      const out = JSON.stringify({ input_tokens: 1000 });
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(out);
      return;
    }
    sendError(res, 404, { 'x-should-retry': 'false' }, 'not_found_error', `mockapi: no route for ${req.method} ${path}`);
  });
});

function shutdown() {
  for (const t of timers) clearTimeout(t);
  server.close();
  process.exit(0);
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
setTimeout(shutdown, 30 * 60 * 1000);
if (watchPid > 0) {
  setInterval(() => {
    try {
      process.kill(watchPid, 0);
    } catch (e) {
      if (e.code === 'ESRCH') shutdown();
    }
  }, 1000).unref();
}

server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`PORT ${server.address().port}\n`);
});
