import { createCallers, credentialId, resolveCallerCredentials } from '../../src/identity/callers';
import { resolveConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';
import { createAgentTreeHolder } from '../../src/orchestration/liveTree';
import { namedCaller, NO_TOOLS, OWNER, type Grant } from '../../src/principal';
import { fixedRemoteAgent } from '../support/orchestrationRemote';
import { orchestrationTools } from '../support/orchestrationTools';

/** `a2a.auth.callers` and the plain token lists as principals with grants (issue 11 A). */

const DEFAULT: Grant = { specialists: 'all', remoteAgents: 'all', toolFamilies: ['librarian', 'chronicler'] };
const KNOWN = {
  specialists: ['operator', 'librarian', 'planner'],
  remoteAgents: ['weather'],
  toolFamilies: ['exec', 'fs', 'librarian', 'chronicler'],
};
const auth = (input: unknown) => resolveConfig({ a2a: { auth: input } }).a2a.auth;

describe('configured callers', () => {
  it('names each plain token by its hash with the default grant, and each named caller by its name', () => {
    const callers = createCallers(
      auth({
        bearerTokens: ['plain-token-1'],
        apiKeys: ['plain-key-2'],
        callers: [
          { name: 'ci', bearerTokens: ['ci-token'], grant: { toolFamilies: ['exec'], remoteAgents: [] } },
          { name: 'laptop', apiKeys: ['laptop-key'], owner: true },
        ],
      }),
      { defaultGrant: DEFAULT, known: KNOWN },
    );
    expect(callers.enabled).toBe(true);
    const byValue = Object.fromEntries(callers.credentials.map((c) => [c.value, c.principal]));
    expect(byValue['plain-token-1']).toEqual(namedCaller(credentialId('bearer', 'plain-token-1'), DEFAULT));
    expect(byValue['plain-token-1'].id).toMatch(/^bearer:[0-9a-f]{16}$/);
    expect(byValue['plain-key-2'].id).toMatch(/^apikey:[0-9a-f]{16}$/);
    // A field the grant leaves out keeps the default's.
    expect(byValue['ci-token']).toEqual(
      namedCaller('ci', { specialists: 'all', remoteAgents: [], toolFamilies: ['exec'] }),
    );
    expect(byValue['laptop-key']).toBe(OWNER);
    // Stored ids come back as the principal with today's grant; an unknown one gets the default, never more.
    expect(callers.byId('ci').grant?.toolFamilies).toEqual(['exec']);
    expect(callers.byId('owner')).toBe(OWNER);
    expect(callers.byId('bearer:0000000000000000')).toEqual(namedCaller('bearer:0000000000000000', DEFAULT));
  });

  it('stops the start naming the key path of an unknown name or a credential given twice', () => {
    let error: ConfigError | undefined;
    try {
      createCallers(
        auth({
          bearerTokens: ['same-token'],
          callers: [
            {
              name: 'x',
              bearerTokens: ['same-token'],
              grant: { specialists: ['operatr'], toolFamilies: ['shell'], remoteAgents: ['nowhere'] },
            },
          ],
        }),
        { defaultGrant: DEFAULT, known: KNOWN },
      );
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error?.issues).toEqual([
      'a2a.auth.callers[0].grant.specialists: unknown name "operatr" (known: operator, librarian, planner)',
      'a2a.auth.callers[0].grant.remoteAgents: unknown name "nowhere" (known: weather)',
      'a2a.auth.callers[0].grant.toolFamilies: unknown name "shell" (known: exec, fs, librarian, chronicler)',
      "a2a.auth.bearerTokens[0]: this credential is already another caller's",
    ]);
  });

  it('refuses a caller without credentials, an owner with a grant, and the name "owner" in the config', () => {
    const issues = (input: unknown) => {
      try {
        auth(input);
        return '';
      } catch (err) {
        return (err as ConfigError).issues.join('\n');
      }
    };
    expect(issues({ callers: [{ name: 'empty' }] })).toMatch(/callers\[0\].*at least one bearer token or API key/);
    expect(issues({ callers: [{ name: 'both', apiKeys: ['k-1234'], owner: true, grant: {} }] })).toMatch(
      /an owner caller reaches everything/,
    );
    expect(issues({ callers: [{ name: 'owner', apiKeys: ['k-1234'] }] })).toMatch(/"owner" is reserved/);
    expect(
      issues({
        callers: [
          { name: 'twin', apiKeys: ['k-1'] },
          { name: 'twin', apiKeys: ['k-2'] },
        ],
      }),
    ).toMatch(/caller names must be unique/);
  });

  it("resolves {{secret:NAME}} credentials from the owner's vault, naming the key path of one it cannot read", async () => {
    const vault: Record<string, string> = { CI_TOKEN: 'from-the-vault' };
    const resolve = async (text: string) =>
      text.replace(/\{\{secret:([A-Z_]+)\}\}/g, (_, name: string) => {
        if (!(name in vault)) throw new Error(`unknown secret "${name}"`);
        return vault[name];
      });
    const resolved = await resolveCallerCredentials(
      auth({ callers: [{ name: 'ci', bearerTokens: ['{{secret:CI_TOKEN}}'] }] }),
      resolve,
    );
    expect(resolved?.callers[0].bearerTokens).toEqual(['from-the-vault']);
    await expect(
      resolveCallerCredentials(auth({ callers: [{ name: 'ci', apiKeys: ['{{secret:MISSING}}'] }] }), resolve),
    ).rejects.toMatchObject({ issues: ['a2a.auth.callers[0].apiKeys[0]: unknown secret "MISSING"'] });
  });
});

describe("a caller's agent tree", () => {
  const tools = orchestrationTools('exec_shell', 'fs_read', 'rag_retrieve', 'memory_store');
  const family: Record<string, string> = {
    exec_shell: 'exec',
    fs_read: 'fs',
    rag_retrieve: 'librarian',
    memory_store: 'chronicler',
  };
  const holder = createAgentTreeHolder({
    tools: () => tools,
    familyOf: (name) => family[name],
    remoteAgents: [
      fixedRemoteAgent({ name: 'weather', description: 'forecasts' }),
      fixedRemoteAgent({ name: 'stocks', description: 'quotes' }),
    ],
  });
  const names = (principal = OWNER) => holder.current(principal).subAgents.map((agent) => agent.name);

  it('keeps only the granted specialists, their granted tools and the granted remote agents', () => {
    expect(names()).toEqual(['operator', 'librarian', 'planner', 'chronicler', 'weather', 'stocks']);
    const peer = namedCaller('peer', { specialists: 'all', remoteAgents: ['weather'], toolFamilies: ['librarian'] });
    expect(names(peer)).toEqual(['librarian', 'planner', 'weather']);
    expect(holder.current(peer).instruction).not.toContain('stocks');
    const narrow = namedCaller('narrow', { specialists: ['operator'], remoteAgents: [], toolFamilies: ['fs'] });
    const operator = holder.current(narrow).subAgents[0];
    expect(operator.kind === 'llm' && operator.tools.map((t) => t.name)).toEqual(['fs_read']);
    expect(names(namedCaller('none', NO_TOOLS))).toEqual(['planner']);
  });
});
