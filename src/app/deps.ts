import type { AnyTool } from '../agent/tool';
import type { Model } from '../llm/model';
import type { Logger } from '../log/logger';
import type { SecretRegistry } from '../log/redact';
import type { SpecRow } from '../orchestration/specs';
import type { PackageLoader } from '../packages';

/** Dependencies a caller may supply instead of the ones built from config (tests pass real ones on temp dirs). */
export interface AppDeps {
  logger?: Logger;
  /** Replaces the model built from `config.agent` (tests: a scripted model). */
  model?: Model;
  clock?: () => Date;
  /** Resolves a relative `dataDir` and `agent-cards/`; defaults to the process's working directory. */
  cwd?: string;
  secrets?: SecretRegistry;
  /**
   * False for a short-lived process on the data folder (a one-shot CLI
   * command): cron jobs and queued background prompts are kept for the node
   * that serves it instead of starting here. Default true.
   */
  runJobs?: boolean;
  /**
   * The embedder's own tools (made with `defineTool`), added to the node's:
   * each lands with the specialist its `agent` names, else the one its name's
   * prefix routes it to.
   */
  tools?: readonly AnyTool[];
  /** More specialists: rows appended to the table of seven (`specRows`), each one spec object. */
  specialists?: readonly SpecRow[];
  /**
   * The local owner token (`serveNode` writes it in the data folder for the
   * node's own CLI): one more bearer credential, the owner's, on every
   * binding and page. It does not by itself turn authentication on.
   */
  ownerToken?: string;
  /**
   * Finds and loads the optional packages (viem, @sparticuz/chromium,
   * hnswlib-node) on first use; Node's own resolution by default. The
   * acceptance test points it at names that do not exist.
   */
  packages?: PackageLoader;
  /**
   * Where the navigator looks for the machine's Chromium (Debian's
   * `/usr/bin/chromium` by default): the acceptance test points it where
   * there is none, as on a machine with only Node.
   */
  systemChromium?: string;
}
