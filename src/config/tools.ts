import { z } from 'zod';
import { atMost } from './fields';

/** `tools.*`: the operator's commands and files, skills, and the navigator's browser. */
export const ToolsConfig = z
  .object({
    exec: z
      .object({
        enabled: z.boolean().default(true),
        policy: z.enum(['allow', 'deny', 'ask']).default('allow'),
        allow: z.array(z.string()).default([]),
        /** `auto`: bubblewrap when it works, else every command asks; `bwrap`: bubblewrap or no commands; `off`: never confined (every command asks). */
        sandbox: z.enum(['auto', 'bwrap', 'off']).default('auto'),
        bwrapPath: z.string().min(1).default('/usr/bin/bwrap'),
        /** Whether confined commands may use the network. */
        network: z.boolean().default(false),
        timeoutMs: z.number().int().positive().max(600_000, atMost(600_000)).default(30_000),
        maxOutputBytes: z
          .number()
          .int()
          .positive()
          .default(64 * 1024),
      })
      .strict()
      .prefault({}),
    fs: z
      .object({
        enabled: z.boolean().default(true),
        /** Workspace root; `dataDir/workspace` when unset. */
        root: z.string().optional(),
        maxReadBytes: z
          .number()
          .int()
          .positive()
          .default(1024 * 1024),
      })
      .strict()
      .prefault({}),
    skills: z
      .object({ enabled: z.boolean().default(true) })
      .strict()
      .prefault({}),
    browser: z
      .object({
        enabled: z.boolean().default(true),
        /** Unset: Debian's /usr/bin/chromium when present, else the Chromium of the @sparticuz/chromium package. */
        executablePath: z.string().min(1).optional(),
        allow: z.array(z.string()).default([]),
        deny: z.array(z.string()).default([]),
        idleTimeoutMs: z.number().int().positive().max(86_400_000, atMost(86_400_000)).default(300_000),
        /** Upper bound for one page load (browser_navigate). */
        navigationTimeoutMs: z.number().int().positive().max(300_000, atMost(300_000)).default(15_000),
        /** Default wait for a selector in browser_action / browser_screenshot. */
        actionTimeoutMs: z.number().int().positive().max(300_000, atMost(300_000)).default(5_000),
      })
      .strict()
      .prefault({}),
  })
  .strict();
