const escapeHtml = (text: string) =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Script and styles come from the node itself only: no inline code, no third party. */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
  "form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

function page(title: string, body: string, view: string, auth = false): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/console/assets/console.css">
<script type="module" src="/console/assets/console.js"></script>
</head>
<body data-view="${view}" data-auth="${auth}">
${body}
</body>
</html>
`;
}

/** The console's views, as tabs: id and label. */
const VIEWS: ReadonlyArray<[string, string]> = [
  ['chat', 'Chat'],
  ['tasks', 'Tasks'],
  ['agents', 'Agents'],
  ['tools', 'Tools'],
  ['memory', 'Memory'],
];

/** Task states the task table can be filtered by. */
const STATES = [
  'working',
  'completed',
  'failed',
  'canceled',
  'input-required',
  'auth-required',
  'rejected',
  'submitted',
];

/**
 * The console itself: five views as tabs (chat with its conversations and
 * the agent to talk to; tasks, a turn's waterfall, the step inspector and
 * replays; the agent graph, remote agents and replicas; the tool runner;
 * memory and knowledge per caller) the script fills from `/console/api`. `auth`: credentials are configured (the chat sends the
 * owner's token); `signedIn`: a session cookie is held (a sign-out button
 * is offered).
 */
export function consoleShell(nodeName: string, options: { auth: boolean; signedIn: boolean }): string {
  const { signedIn } = options;
  const signOut = signedIn
    ? `<form method="post" action="/console/logout" class="signout"><button type="submit">Sign out</button></form>`
    : '';
  const tabs = VIEWS.map(
    ([id, label], i) =>
      `<button type="button" role="tab" id="tab-${id}" aria-controls="view-${id}" aria-selected="${i === 0}"` +
      ` tabindex="${i === 0 ? 0 : -1}">${label}</button>`,
  ).join('');
  const states = STATES.map((s) => `<option value="${s}">${s}</option>`).join('');
  return page(
    `${nodeName} · lango console`,
    `<header class="top">
<h1>${escapeHtml(nodeName)} <span class="muted">lango console</span></h1>
<nav aria-label="Console views"><div role="tablist" id="tabs" aria-label="Console views">${tabs}</div></nav>
<p id="live" class="muted live" role="status">connecting…</p>${signOut}</header>
<main class="views">
<section id="view-chat" class="view chat-view" role="tabpanel" aria-labelledby="tab-chat">
<aside class="panel conversations" aria-labelledby="conversations-title">
<h2 id="conversations-title">Conversations</h2>
<button type="button" id="new-conversation">New conversation</button>
<label for="conversation-search" class="visually-hidden">Search conversations</label>
<input id="conversation-search" type="search" autocomplete="off" placeholder="Search conversations">
<div id="conversation-groups" class="conversation-groups"></div>
</aside>
<div id="chat" class="panel chat-main">
<div class="chat-head">
<h2 id="chat-title">New conversation</h2>
<label for="chat-agent">Talk to</label>
<select id="chat-agent"><option value="">the orchestrator</option></select>
</div>
<div id="chat-log" class="chat-log" role="log" aria-live="polite" aria-labelledby="chat-title" tabindex="0"></div>
<form id="chat-form" class="chat-form">
<label for="chat-input" class="visually-hidden">Message</label>
<input id="chat-input" name="message" autocomplete="off" placeholder="Ask the node…" required>
<label for="chat-token" id="chat-token-label" hidden>Owner token for the A2A endpoint</label>
<input id="chat-token" type="password" autocomplete="off" hidden>
<button type="submit" id="chat-send">Send</button>
</form>
</div>
</section>
<section id="view-tasks" class="view tasks-view" role="tabpanel" aria-labelledby="tab-tasks" hidden>
<div id="tasks" class="panel">
<h2 id="tasks-title">Tasks</h2>
<div class="filters">
<label for="filter-state">State</label>
<select id="filter-state"><option value="">any</option>${states}</select>
<label for="filter-caller">Caller</label>
<input id="filter-caller" placeholder="exact caller: owner, bearer:…" autocomplete="off">
</div>
<table class="list"><caption class="muted">Stored tasks and recent turns of every replica, newest first</caption>
<thead><tr><th scope="col">Asked</th><th scope="col">State</th><th scope="col">Agent</th><th scope="col">Caller</th>
<th scope="col">Replica</th><th scope="col">Started</th><th scope="col">Took</th></tr></thead>
<tbody id="task-rows"></tbody></table>
</div>
<div id="timeline" class="panel" role="region" aria-labelledby="timeline-title">
<h2 id="timeline-title">Turns</h2>
<p id="timeline-empty" class="muted">Choose a task or a turn to see it as a waterfall: each agent, model call, tool
and remote call with when it started and how long it took.</p>
<div id="turns"></div>
</div>
<div id="inspector" class="panel" role="region" aria-labelledby="inspector-title">
<h2 id="inspector-title">Step</h2>
<div id="inspector-body"><p class="muted">Choose a step of the waterfall: a model step shows what it was sent
(system prompt, messages, tools offered) and what it answered.</p></div>
</div>
<div id="replay" class="panel" role="region" aria-labelledby="replay-title" hidden>
<h2 id="replay-title">Replay</h2>
<div id="replay-body"></div>
</div>
</section>
<section id="view-agents" class="view agents-view" role="tabpanel" aria-labelledby="tab-agents" hidden>
<div id="peers" class="panel">
<h2 id="peers-title">Remote agents</h2>
<p id="peers-status" class="muted" role="status"></p>
<p id="peers-empty" class="muted" hidden>No remote agents are configured (<code>a2a.remoteAgents</code>).</p>
<table class="list" id="peers-table"><thead><tr><th scope="col">Agent</th><th scope="col">Health</th>
<th scope="col">Breaker</th><th scope="col">Failures</th><th scope="col">Last probe</th><th scope="col">Next probe</th>
<th scope="col">Latency</th><th scope="col">Last error</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody id="peer-rows"></tbody></table>
</div>
<div id="replicas" class="panel">
<h2 id="replicas-title">Replicas</h2>
<p id="replicas-alone" class="muted" hidden>This node runs alone on its SQLite file: there are no replicas.</p>
<table class="list" id="replicas-table" hidden><thead><tr><th scope="col">Replica</th><th scope="col">Heartbeat</th>
<th scope="col">Heartbeat age</th><th scope="col">Started</th></tr></thead><tbody id="replica-rows"></tbody></table>
</div>
<div id="agents" class="panel">
<h2 id="agents-title">Agent graph</h2>
<div class="graph-row">
<div id="graph" class="graph"><p class="muted">Laying out the graph…</p></div>
<div id="card" class="card" hidden><h3 id="card-title">Card</h3><pre id="card-body"></pre>
<button type="button" id="card-close">Close card</button></div>
</div>
</div>
</section>
<section id="view-tools" class="view tools-view" role="tabpanel" aria-labelledby="tab-tools" hidden>
<div class="panel tools-panel">
<div>
<h2 id="tools-title">Run a tool</h2>
<p class="muted">Runs as the owner through the node's runner: the same checks, redaction and timeline as a model's call.</p>
<form id="tool-form" class="tool-form">
<label for="tool-select">Tool</label>
<select id="tool-select"><option value="">Loading tools…</option></select>
<p id="tool-description" class="muted"></p>
<fieldset><legend>Arguments</legend><div id="tool-fields" class="fields"></div></fieldset>
<button type="submit" id="tool-run" disabled>Run tool</button>
</form>
</div>
<div id="tool-result-box" class="result" hidden>
<h3 id="tool-result-title">Result</h3>
<div id="tool-result" role="status"></div>
<div id="tool-approval"></div>
</div>
</div>
</section>
<section id="view-memory" class="view memory-view" role="tabpanel" aria-labelledby="tab-memory" hidden>
<div class="panel memory-filters">
<h2 id="memory-title">Memory and knowledge</h2>
<div class="filters">
<label for="memory-caller">Caller</label><select id="memory-caller"></select>
<label for="knowledge-query">Search knowledge</label>
<input id="knowledge-query" type="search" autocomplete="off" placeholder="words to find">
</div>
</div>
<div class="panel"><h3 id="knowledge-title">Knowledge</h3><ul id="knowledge-list" class="rows" aria-labelledby="knowledge-title"></ul></div>
<div class="panel"><h3 id="triples-title">Graph statements</h3><p id="graph-note" class="muted"></p>
<ul id="triple-list" class="rows" aria-labelledby="triples-title"></ul></div>
<div class="panel"><h3 id="observations-title">Observations</h3>
<ul id="observation-list" class="rows" aria-labelledby="observations-title"></ul></div>
<div class="panel"><h3 id="reflections-title">Reflections</h3>
<ul id="reflection-list" class="rows" aria-labelledby="reflections-title"></ul></div>
</section>
</main>`,
    'console',
    options.auth,
  );
}

/** The sign-in form (status 401): the owner's bearer token, checked by the node. */
export function signInPage(reason: string): string {
  return page(
    'Sign in · lango console',
    `<main class="narrow">
<h1>Sign in to the lango console</h1>
<p role="alert">${escapeHtml(reason)}</p>
<form method="post" action="/console/login" id="signin">
<label for="token">Owner token (a bearer token of <code>a2a.auth</code> that belongs to the owner)</label>
<input id="token" name="token" type="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
</main>`,
    'signin',
  );
}

/** What a refused browser sees: the status, why, and what to do. Never a stack trace. */
export function refusalPage(status: 401 | 403 | 500, message: string): string {
  const title = { 401: 'Not signed in', 403: 'Not allowed', 500: 'Console unavailable' }[status];
  const next =
    status === 500
      ? ''
      : `<p><a href="/console">Back to the sign-in form</a></p>
<p class="muted">The console is for the node's owner: without <code>a2a.auth</code> only on a loopback address,
with it by an owner credential.</p>`;
  return page(
    `${title} · lango console`,
    `<main class="narrow">
<h1>${status} · ${title}</h1>
<p role="alert">${escapeHtml(message)}</p>
${next}
</main>`,
    'refused',
  );
}
