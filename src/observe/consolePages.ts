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

/**
 * The console itself: four regions the script fills from `/console/api`.
 * `auth`: credentials are configured (the chat sends the owner's token);
 * `signedIn`: a session cookie is held (a sign-out button is offered).
 */
export function consoleShell(nodeName: string, options: { auth: boolean; signedIn: boolean }): string {
  const { signedIn } = options;
  const signOut = signedIn
    ? `<form method="post" action="/console/logout" class="signout"><button type="submit">Sign out</button></form>`
    : '';
  return page(
    `${nodeName} · lango console`,
    `<header><h1>${escapeHtml(nodeName)} <span class="muted">lango console</span></h1>
<p id="live" class="muted" role="status">connecting…</p>${signOut}</header>
<main>
<section id="agents" aria-labelledby="agents-title">
<h2 id="agents-title">Agents</h2>
<div id="graph" class="graph"></div>
<div id="card" class="card" hidden><h3 id="card-title">Card</h3><pre id="card-body"></pre>
<button type="button" id="card-close">Close card</button></div>
</section>
<section id="chat" aria-labelledby="chat-title">
<h2 id="chat-title">Chat</h2>
<div id="chat-log" class="chat-log" aria-live="polite"></div>
<form id="chat-form" class="chat-form">
<label for="chat-input">Message</label>
<input id="chat-input" name="message" autocomplete="off" required>
<label for="chat-token" id="chat-token-label" hidden>Owner token for the A2A endpoint</label>
<input id="chat-token" type="password" autocomplete="off" hidden>
<button type="submit" id="chat-send">Send</button>
</form>
</section>
<section id="tasks" aria-labelledby="tasks-title">
<h2 id="tasks-title">Tasks</h2>
<div class="filters">
<label for="filter-state">State</label>
<select id="filter-state"><option value="">any</option><option value="running">running</option>
<option value="completed">completed</option><option value="failed">failed</option>
<option value="aborted">aborted</option><option value="input-required">input-required</option></select>
<label for="filter-caller">Caller</label>
<input id="filter-caller" placeholder="owner, bearer:…" autocomplete="off">
</div>
<table class="list"><caption class="muted">Recent turns, newest first</caption>
<thead><tr><th scope="col">Task</th><th scope="col">State</th><th scope="col">Caller</th><th scope="col">Agent</th>
<th scope="col">Started</th><th scope="col">Took</th></tr></thead>
<tbody id="task-rows"></tbody></table>
</section>
<section id="timeline" aria-labelledby="timeline-title">
<h2 id="timeline-title">Timeline</h2>
<p id="timeline-empty" class="muted">Choose a task to see its steps.</p>
<table class="list" id="timeline-table" hidden>
<thead><tr><th scope="col">At</th><th scope="col">Step</th><th scope="col">Agent</th><th scope="col">Took</th>
<th scope="col">Tokens / hops</th><th scope="col">Arguments → result</th></tr></thead>
<tbody id="timeline-rows"></tbody></table>
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
