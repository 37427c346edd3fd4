import { capabilityDescription, toolCapability } from '../../src/orchestration/capabilities';
import { orchestrationTools } from '../support/orchestrationTools';

// multi-agent-orchestration.md: "Capability-based sub-agent descriptions",
// "Automation capability descriptions".
describe('toolCapability', () => {
  it.each([
    ['exec_shell', 'command execution'],
    ['fs_read', 'file operations'],
    ['skill_deploy', 'skill management'],
    ['browser_navigate', 'web browsing'],
    ['crypto_sign', 'cryptography'],
    ['secrets_get', 'secret management'],
    ['payment_send', 'blockchain payments (USDC on Base)'],
    ['search_web', 'information search'],
    ['rag_retrieve', 'knowledge retrieval (RAG)'],
    ['graph_traverse', 'knowledge graph traversal'],
    ['save_knowledge_item', 'knowledge persistence'],
    ['save_learning', 'learning persistence'],
    ['create_skill_x', 'skill creation'],
    ['list_skills', 'skill listing'],
    ['librarian_pending_inquiries', 'knowledge inquiries and gap detection'],
    ['memory_store', 'memory storage and recall'],
    ['observe_event', 'event observation'],
    ['reflect_summary', 'reflection and summarization'],
    ['cron_add', 'cron job scheduling'],
    ['bg_submit', 'background task execution'],
    ['workflow_run', 'workflow pipeline execution'],
  ])('maps %s to "%s"', (name, phrase) => {
    expect(toolCapability(name)).toBe(phrase);
  });

  it('returns an empty string for a tool matching no prefix', () => {
    expect(toolCapability('mystery_tool')).toBe('');
  });
});

describe('capabilityDescription', () => {
  it('describes the operator tools as capabilities without raw tool names', () => {
    const description = capabilityDescription(orchestrationTools('exec_shell', 'fs_read'));
    expect(description).toContain('command execution, file operations');
    expect(description).not.toContain('exec_shell');
    expect(description).not.toContain('fs_read');
  });

  it('describes the vault tools as cryptography, secret management and payments', () => {
    expect(capabilityDescription(orchestrationTools('crypto_sign', 'secrets_get', 'payment_send'))).toContain(
      'cryptography, secret management, blockchain payments (USDC on Base)',
    );
  });

  it('lists a capability shared by two tools only once', () => {
    const description = capabilityDescription(orchestrationTools('exec_shell', 'exec_run'));
    expect(description).toBe('command execution');
  });

  it('falls back to "general actions" for a tool matching no prefix, once', () => {
    expect(capabilityDescription(orchestrationTools('mystery_a', 'exec_shell', 'mystery_b'))).toBe(
      'general actions, command execution',
    );
  });

  it('includes knowledge inquiries and gap detection for librarian_pending_inquiries', () => {
    expect(capabilityDescription(orchestrationTools('search_web', 'librarian_pending_inquiries'))).toContain(
      'knowledge inquiries and gap detection',
    );
  });

  it('returns an empty string for no tools', () => {
    expect(capabilityDescription([])).toBe('');
  });
});
