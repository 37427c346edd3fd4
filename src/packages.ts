import { errorMessage, LangoError, ToolExecutionError } from './errors';

/**
 * The heavy npm packages few nodes use, kept out of lango's own install
 * (optional peer dependencies): the version lango is tested with and what
 * each gives. They are loaded on first use through a {@link PackageLoader};
 * when one is missing, the tools that need it answer with
 * {@link installHint} and the rest of the node works.
 */
export const OPTIONAL_PACKAGES = {
  viem: { version: '2.57.20', gives: 'the payment_* tools (USDC from the node wallet, on Base or another EVM chain)' },
  '@sparticuz/chromium': {
    version: '147.0.0',
    gives:
      "a bundled Chromium for the browser_* tools on a machine without one (Debian's /usr/bin/chromium is used first)",
  },
  'hnswlib-node': {
    version: '3.0.0',
    gives: 'an HNSW index for rag_retrieve past 20,000 vectors (without it, every search is exact, and slower)',
  },
} as const satisfies Record<string, { version: string; gives: string }>;

/** The name of an optional package. */
export type OptionalPackage = keyof typeof OPTIONAL_PACKAGES;

/** An optional package or one of its subpaths (`viem/accounts`). */
export type OptionalModule = OptionalPackage | `${OptionalPackage}/${string}`;

/** The command that installs `name` at the version lango is tested with. */
export function installCommand(name: OptionalPackage): string {
  return `npm install ${name}@${OPTIONAL_PACKAGES[name].version}`;
}

/** What to tell a caller whose `feature` needs the missing package `name`. */
export function installHint(name: OptionalPackage, feature: string): string {
  return (
    `${feature} needs the optional npm package ${name}, which is not installed: ` +
    `run \`${installCommand(name)}\` where lango is installed, then restart the node`
  );
}

/** An optional package is not installed; the message says how to install it (a tool's failure note). */
export class MissingPackageError extends ToolExecutionError {
  constructor(
    readonly packageName: OptionalPackage,
    feature: string,
  ) {
    super(installHint(packageName, feature));
  }
}

/** How the node finds and loads its optional packages: built once by the composition root. */
export interface PackageLoader {
  /** Whether `name` is installed (resolved, not loaded). */
  installed(name: OptionalPackage): boolean;
  /**
   * Loads `specifier` on first need (Node caches it).
   * @throws MissingPackageError naming `feature` when its package is not installed.
   */
  load<T>(specifier: OptionalModule, feature: string): T;
}

/** Options of {@link createPackageLoader}. */
export interface PackageLoaderOptions {
  /**
   * The module name actually required for a package (the package itself by
   * default). The acceptance test points every package at a name that does
   * not exist, so each is really missing for that node.
   */
  locate?: (name: OptionalPackage) => string;
}

/** The package a specifier belongs to: `viem/accounts` → `viem`, `@scope/name/x` → `@scope/name`. */
function packageOf(specifier: OptionalModule): OptionalPackage {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/') as OptionalPackage;
}

/**
 * The node's package loader over Node's own resolution (from lango's
 * install, where an app's optional peers sit beside it).
 * @example
 * const packages = createPackageLoader();
 * const viem = packages.load<typeof import('viem')>('viem', 'payment_send');
 */
export function createPackageLoader(options: PackageLoaderOptions = {}): PackageLoader {
  const locate = options.locate ?? ((name: OptionalPackage) => name);
  const moduleName = (specifier: OptionalModule): string => {
    const name = packageOf(specifier);
    return locate(name) + specifier.slice(name.length);
  };
  const resolves = (specifier: string): boolean => {
    try {
      require.resolve(specifier);
      return true;
    } catch {
      return false;
    }
  };
  return {
    installed: (name) => resolves(locate(name)),
    load<T>(specifier: OptionalModule, feature: string): T {
      const name = packageOf(specifier);
      const located = moduleName(specifier);
      if (!resolves(located)) throw new MissingPackageError(name, feature);
      try {
        // eslint-disable-next-line @typescript-eslint/no-require-imports
        return require(located) as T;
      } catch (error) {
        throw new LangoError(
          `the optional npm package ${name} is installed but failed to load: ${errorMessage(error)}`,
          {
            cause: error,
          },
        );
      }
    },
  };
}
