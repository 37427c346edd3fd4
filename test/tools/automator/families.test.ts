import { LangoConfig } from '../../../src/config/schema';
import { toolFamilies } from '../../../src/tools/families';
import { backgroundFamily, cronFamily, workflowFamily } from '../../../src/tools/automator/families';
import { automatorDeps, openStorage, tempDbFile } from '../../support/automatorRunner';

describe('automator families', () => {
  it('are registered in the tool family table for the automator', () => {
    const rows = toolFamilies.filter((family) => family.agent === 'automator').map((family) => family.name);
    expect(rows).toEqual(['cron', 'background', 'workflow']);
  });

  it('are each on exactly when their own config switch is', () => {
    const on = LangoConfig.parse({});
    const off = LangoConfig.parse({
      cron: { enabled: false },
      background: { enabled: false },
      workflow: { enabled: false },
    });
    const onlyCron = LangoConfig.parse({ background: { enabled: false }, workflow: { enabled: false } });
    for (const family of [cronFamily, backgroundFamily, workflowFamily]) {
      expect([family.name, family.enabled(on), family.enabled(off)]).toEqual([family.name, true, false]);
    }
    expect([cronFamily, backgroundFamily, workflowFamily].map((family) => family.enabled(onlyCron))).toEqual([
      true,
      false,
      false,
    ]);
  });

  it('give tools whose names carry the prefixes that route them to the automator', async () => {
    const temp = tempDbFile();
    const storage = openStorage(temp.file);
    try {
      const deps = await automatorDeps({ storage });
      const names = [];
      for (const family of [cronFamily, backgroundFamily, workflowFamily]) {
        const instance = await family.create(deps);
        names.push(...instance.tools.map((tool) => tool.name));
        await instance.close?.();
      }
      expect(names).toEqual([
        'cron_add',
        'cron_list',
        'cron_pause',
        'cron_resume',
        'cron_remove',
        'cron_history',
        'bg_submit',
        'bg_status',
        'bg_list',
        'bg_result',
        'bg_cancel',
        'workflow_run',
        'workflow_status',
        'workflow_list',
        'workflow_cancel',
        'workflow_save',
      ]);
    } finally {
      await storage.close();
      temp.cleanup();
    }
  });
});
