import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config/load';
import { ConfigError } from '../../src/errors';

/** Issue 34, item 7: which configuration file is a node's, and where its card files are. */
describe('the files a configuration names', () => {
  let cwd: string;
  beforeEach(() => {
    cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-config-files-'));
  });
  afterEach(() => fs.rmSync(cwd, { recursive: true, force: true }));

  const write = (file: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(cwd, file)), { recursive: true });
    fs.writeFileSync(path.join(cwd, file), text);
  };

  describe('a discovered lango.config.yaml is the configuration of the data folder it names', () => {
    beforeEach(() => write('lango.config.yaml', 'a2a:\n  agentName: hub\n'));

    it('is read for its own folder (./.lango by default), given or not', () => {
      expect(loadConfig({ cwd, env: {} })).toMatchObject({ file: path.join(cwd, 'lango.config.yaml') });
      const same = loadConfig({ cwd, env: {}, dataDir: './.lango' });
      expect(same.config.a2a.agentName).toBe('hub');
      expect(loadConfig({ cwd, env: { LANGO_DATA_DIR: path.join(cwd, '.lango') } }).file).toBeDefined();
    });

    it('is not read for another folder (--data-dir or LANGO_DATA_DIR): that is another node, on defaults', () => {
      for (const given of [{ dataDir: '/tmp/weather' }, { env: { LANGO_DATA_DIR: '/tmp/weather' } }]) {
        const loaded = loadConfig({ cwd, env: {}, ...given });
        expect(loaded.file).toBeUndefined();
        expect(loaded.config.a2a.agentName).toBeUndefined();
        expect(loaded.config.dataDir).toBe('/tmp/weather');
        expect(loaded.notRead).toEqual({
          file: path.join(cwd, 'lango.config.yaml'),
          dataDir: path.join(cwd, '.lango'),
        });
      }
    });

    it('follows the folder the file names, and a file named by --config or LANGO_CONFIG is always read', () => {
      write('lango.config.yaml', 'dataDir: /srv/hub\na2a:\n  agentName: hub\n');
      expect(loadConfig({ cwd, env: {}, dataDir: '/srv/hub' }).config.a2a.agentName).toBe('hub');
      expect(loadConfig({ cwd, env: {}, dataDir: './.lango' }).file).toBeUndefined();
      expect(loadConfig({ cwd, env: {}, path: 'lango.config.yaml', dataDir: '/tmp/x' }).config.a2a.agentName).toBe(
        'hub',
      );
      expect(
        loadConfig({ cwd, env: { LANGO_CONFIG: 'lango.config.yaml', LANGO_DATA_DIR: '/tmp/x' } }).config.a2a.agentName,
      ).toBe('hub');
    });
  });

  describe('cardFile', () => {
    const entries = (...cardFiles: string[]) =>
      'a2a:\n  remoteAgents:\n' +
      cardFiles.map((file, i) => `    - { name: peer${i}, cardFile: "${file}" }\n`).join('');

    it('is a path from the configuration file’s folder, or a file name in agent-cards/ beside it', () => {
      write('conf/near.json', '{}');
      write('conf/agent-cards/filed.json', '{}');
      write('conf/lango.config.yaml', entries('./near.json', 'filed.json', path.join(cwd, 'conf/near.json')));
      const { config } = loadConfig({ cwd, env: {}, path: 'conf/lango.config.yaml' });
      expect(config.a2a.remoteAgents.map((entry) => entry.cardFile)).toEqual([
        path.join(cwd, 'conf/near.json'),
        path.join(cwd, 'conf/agent-cards/filed.json'),
        path.join(cwd, 'conf/near.json'),
      ]);
    });

    it('that is not a file is a problem at its key path, unless the entry is disabled', () => {
      write(
        'lango.config.yaml',
        entries('./gone.json', 'agent-cards') + '    - { name: off, cardFile: x.json, enabled: false }\n',
      );
      fs.mkdirSync(path.join(cwd, 'agent-cards'));
      let problems: string[] = [];
      try {
        loadConfig({ cwd, env: {} });
      } catch (err) {
        problems = (err as ConfigError).issues;
      }
      expect(problems).toEqual([
        `a2a.remoteAgents[0].cardFile: no card file at ${cwd}/gone.json (a path is read from the configuration file's folder)`,
        `a2a.remoteAgents[1].cardFile: no card file at ${cwd}/agent-cards/agent-cards (a file name is looked up in agent-cards/ beside the configuration file)`,
      ]);
    });
  });
});
