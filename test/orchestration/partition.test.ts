import { partitionTools, toolsForSpec, ownerOfTool } from '../../src/orchestration/partition';
import { orchestrationTools, toolNames } from '../support/orchestrationTools';

// multi-agent-orchestration.md: "Tool partitioning by prefix", "RoleToolSet has seven
// roles plus Unmatched", "Automator in RoleToolSet", librarian inquiry routing.
describe('partitionTools', () => {
  it('assigns exec_shell, fs_read and skill_deploy to the operator', () => {
    const set = partitionTools(orchestrationTools('exec_shell', 'fs_read', 'skill_deploy'));
    expect(toolNames(set.operator)).toEqual(['exec_shell', 'fs_read', 'skill_deploy']);
    expect(set.unmatched).toEqual([]);
  });

  it('assigns browser_navigate and browser_screenshot to the navigator', () => {
    const set = partitionTools(orchestrationTools('browser_navigate', 'browser_screenshot'));
    expect(toolNames(set.navigator)).toEqual(['browser_navigate', 'browser_screenshot']);
  });

  it('assigns crypto_sign, secrets_get and payment_send to the vault', () => {
    const set = partitionTools(orchestrationTools('crypto_sign', 'secrets_get', 'payment_send'));
    expect(toolNames(set.vault)).toEqual(['crypto_sign', 'secrets_get', 'payment_send']);
  });

  it('assigns search, RAG, graph, knowledge and skill management tools to the librarian', () => {
    const names = ['search_web', 'rag_query', 'graph_traverse', 'save_knowledge_item', 'create_skill_x', 'list_skills'];
    const set = partitionTools(orchestrationTools(...names));
    expect(toolNames(set.librarian)).toEqual(names);
    expect(set.operator).toEqual([]);
  });

  it('assigns memory_store, observe_event and reflect_summary to the chronicler', () => {
    const set = partitionTools(orchestrationTools('memory_store', 'observe_event', 'reflect_summary'));
    expect(toolNames(set.chronicler)).toEqual(['memory_store', 'observe_event', 'reflect_summary']);
  });

  it('assigns cron_, bg_ and workflow_ tools to the automator', () => {
    const set = partitionTools(orchestrationTools('cron_add', 'bg_submit', 'workflow_run'));
    expect(toolNames(set.automator)).toEqual(['cron_add', 'bg_submit', 'workflow_run']);
  });

  it('puts a tool with an unrecognised prefix in unmatched and in no role', () => {
    const set = partitionTools(orchestrationTools('mystery_tool', 'exec_shell'));
    expect(toolNames(set.unmatched)).toEqual(['mystery_tool']);
    const roles = [set.operator, set.navigator, set.vault, set.librarian, set.automator, set.planner, set.chronicler];
    expect(roles.flat().map((t) => t.name)).toEqual(['exec_shell']);
  });

  it('routes save_knowledge_* and create_skill_* to the librarian before the operator', () => {
    const set = partitionTools(orchestrationTools('save_knowledge_data', 'create_skill_new', 'save_learning_x'));
    expect(toolNames(set.librarian)).toEqual(['save_knowledge_data', 'create_skill_new', 'save_learning_x']);
    expect(set.operator).toEqual([]);
  });

  it('matches the automator before the operator', () => {
    expect(ownerOfTool('cron_list')).toBe('automator');
    expect(ownerOfTool('bg_status')).toBe('automator');
    expect(ownerOfTool('workflow_status')).toBe('automator');
  });

  it('assigns librarian_pending_inquiries to the librarian', () => {
    expect(toolNames(partitionTools(orchestrationTools('librarian_pending_inquiries')).librarian)).toEqual([
      'librarian_pending_inquiries',
    ]);
  });

  it('matches the exec prefix without an underscore', () => {
    const set = partitionTools(orchestrationTools('exec', 'execute_script', 'exec_shell'));
    expect(toolNames(set.operator)).toEqual(['exec', 'execute_script', 'exec_shell']);
  });

  it('returns a RoleToolSet with seven roles plus unmatched', () => {
    expect(Object.keys(partitionTools([])).sort()).toEqual(
      ['automator', 'chronicler', 'librarian', 'navigator', 'operator', 'planner', 'unmatched', 'vault'].sort(),
    );
  });

  it('always leaves the planner empty', () => {
    const all = orchestrationTools('exec_shell', 'plan_x', 'planner_make', 'browser_open', 'memory_store', 'thing');
    expect(partitionTools(all).planner).toEqual([]);
  });

  it('keeps each tool object in exactly one bucket', () => {
    const tools = orchestrationTools(
      'exec_shell',
      'fs_read',
      'browser_open',
      'crypto_hash',
      'rag_retrieve',
      'cron_add',
      'memory_store',
      'odd',
    );
    const set = partitionTools(tools);
    const all = Object.values(set).flat();
    expect(all).toHaveLength(tools.length);
    for (const tool of tools) expect(all.filter((t) => t === tool)).toHaveLength(1);
  });

  it('returns each role through toolsForSpec, the automator included', () => {
    const set = partitionTools(orchestrationTools('cron_add', 'exec_shell', 'odd'));
    expect(toolNames(toolsForSpec(set, 'automator'))).toEqual(['cron_add']);
    expect(toolNames(toolsForSpec(set, 'operator'))).toEqual(['exec_shell']);
    expect(toolsForSpec(set, 'planner')).toEqual([]);
    expect(toolsForSpec(set, 'unmatched')).toEqual([]);
    expect(toolsForSpec(set, 'nobody')).toEqual([]);
  });
});
