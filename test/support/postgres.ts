import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { waitFor } from './waitFor';

/** Where Debian's `postgresql-<n>` package puts its server binaries; `LANGO_PG_BIN` overrides. */
const DEBIAN_PG_ROOT = '/usr/lib/postgresql';

/**
 * The directory holding `initdb`, `postgres`: `$LANGO_PG_BIN`, else the
 * newest Debian `postgresql-<n>`; `undefined` on a machine without one.
 */
export function postgresBinDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = env.LANGO_PG_BIN
    ? [env.LANGO_PG_BIN]
    : fs.existsSync(DEBIAN_PG_ROOT)
      ? fs
          .readdirSync(DEBIAN_PG_ROOT)
          .filter((v) => /^\d+$/.test(v))
          .sort((a, b) => Number(b) - Number(a))
          .map((v) => path.join(DEBIAN_PG_ROOT, v, 'bin'))
      : [];
  return candidates.find((dir) => fs.existsSync(path.join(dir, 'initdb')) && fs.existsSync(path.join(dir, 'postgres')));
}

/**
 * Why the PostgreSQL tests cannot run here, or `undefined` when they can. A
 * bare machine (Node alone, as in the README's quick start) skips them with
 * this reason rather than failing `npm test` (see `prerequisites.ts`).
 */
export function postgresUnavailable(): string | undefined {
  return postgresBinDir()
    ? undefined
    : `no PostgreSQL server binaries (install Debian's postgresql-15, or set LANGO_PG_BIN to the directory holding initdb)`;
}

/**
 * Why the pgvector tests cannot run here, or `undefined` when the server
 * binaries' share directory (`pg_config --sharedir`, else Debian's
 * `/usr/share/postgresql/<n>`) holds the `vector` extension: built from
 * source by `.ci/pgvector`, best effort, since Debian 12 has no package.
 */
export function pgvectorUnavailable(): string | undefined {
  const bin = postgresBinDir();
  if (!bin) return postgresUnavailable();
  const config = spawnSync(path.join(bin, 'pg_config'), ['--sharedir'], { encoding: 'utf8' });
  const share =
    config.status === 0 ? config.stdout.trim() : path.join('/usr/share/postgresql', path.basename(path.dirname(bin)));
  const control = path.join(share, 'extension', 'vector.control');
  return fs.existsSync(control)
    ? undefined
    : `the pgvector extension is not installed on this machine's PostgreSQL (no ${control}; .ci/pgvector builds it)`;
}

/** Empties every table of the database at `url` but `schema_migrations` (and the job queue's entries), restarting its id sequences. */
export async function emptyAllTables(url: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      `SELECT quote_ident(tablename) AS name FROM pg_tables
       WHERE schemaname = 'public' AND tablename <> 'schema_migrations'`,
    );
    if (rows.length > 0) await client.query(`TRUNCATE ${rows.map((r) => r.name).join(', ')} RESTART IDENTITY CASCADE`);
    // The job queue's entries (pg-boss keeps them in a schema of its own; its queues stay).
    const { rows: queue } = await client.query<{ name: string | null }>(
      `SELECT to_regclass('pgboss.job')::text AS name`,
    );
    if (queue[0]?.name) await client.query('TRUNCATE pgboss.job, pgboss.archive');
  } finally {
    await client.end();
  }
}

/** A running throwaway PostgreSQL server. */
export interface TestPostgres {
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser, trusted on loopback. */
  readonly url: string;
  readonly port: number;
  /** A URL of a fresh, empty database on this server. */
  createDatabase(): Promise<string>;
  /** Drops a database made by {@link createDatabase}, ending its connections first. */
  dropDatabase(url: string): Promise<void>;
  /** Stops the server (fast shutdown), keeping its data: a database outage as replicas see it. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data; resolves once it accepts connections. */
  resume(): Promise<void>;
  /** Stops the server (fast shutdown) and removes its directory. */
  stop(): Promise<void>;
}

/** A port free on 127.0.0.1 right now. */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** initdb and the server refuse to run as root: as root, they run as `nobody`. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const found = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' });
  if (found.status !== 0 || gid.status !== 0) throw new Error('running as root and there is no `nobody` user');
  return { uid: Number(found.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

let databaseCount = 0;

/** The name of a database made by `createDatabase`, from its URL; refuses any other. */
function testDatabaseName(url: string): string {
  const name = new URL(url).pathname.slice(1);
  if (!/^lango_test_\d+_\d+$/.test(name)) throw new Error(`not a test database: ${name}`);
  return name;
}

/**
 * Starts a throwaway PostgreSQL server: `initdb` into a temp directory, then
 * `postgres` on a free loopback port (TCP only, no Unix socket, fsync off:
 * nothing here must survive a crash), as `nobody` when the tests run as root.
 * `settings` adds server settings (the cluster bench preloads `pg_stat_statements`).
 * Call `stop()` when done; it removes the directory.
 * @example
 * const pg = await startTestPostgres();
 * const url = await pg.createDatabase();
 * await pg.stop();
 */
export async function startTestPostgres(options: { settings?: Record<string, string> } = {}): Promise<TestPostgres> {
  const bin = postgresBinDir();
  if (!bin) throw new Error(postgresUnavailable());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lango-pg-'));
  const dataDir = path.join(dir, 'data');
  const user = unprivileged();
  if (user) fs.chownSync(dir, user.uid, user.gid);
  const as = user ? { uid: user.uid, gid: user.gid } : {};
  let server: Server | undefined;
  try {
    const init = spawnSync(
      path.join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '--no-sync'],
      { ...as, encoding: 'utf8', cwd: dir, timeout: 60_000 },
    );
    if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
    const port = await freePort();
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const launch = () => launchServer({ bin, dataDir, cwd: dir, port, url, as, settings: options.settings ?? {} });
    server = await launch();
    const admin = async <T>(sql: string): Promise<T[]> => {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        return (await client.query(sql)).rows as T[];
      } finally {
        await client.end();
      }
    };
    return {
      url,
      port,
      async createDatabase() {
        databaseCount += 1;
        const name = `lango_test_${process.pid}_${databaseCount}`;
        await admin(`CREATE DATABASE ${name} TEMPLATE template0`);
        return `postgres://postgres@127.0.0.1:${port}/${name}`;
      },
      async dropDatabase(databaseUrl) {
        const name = testDatabaseName(databaseUrl);
        await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      },
      async halt() {
        await server?.stop();
        server = undefined;
      },
      async resume() {
        server ??= await launch();
      },
      async stop() {
        await server?.stop();
        server = undefined;
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

/** One run of the `postgres` server process on a data directory. */
interface Server {
  /** Fast shutdown (SIGINT; SIGKILL after 10 s); resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Starts `postgres` on `dataDir` on a loopback port (TCP only, no Unix
 * socket, fsync off) and resolves once it accepts connections.
 */
async function launchServer(options: {
  bin: string;
  dataDir: string;
  cwd: string;
  port: number;
  url: string;
  as: { uid?: number; gid?: number };
  settings: Record<string, string>;
}): Promise<Server> {
  const log: string[] = [];
  const server = spawn(
    path.join(options.bin, 'postgres'),
    [
      '-D',
      options.dataDir,
      '-p',
      String(options.port),
      '-h',
      '127.0.0.1',
      '-k',
      '',
      '-c',
      'fsync=off',
      '-c',
      'synchronous_commit=off',
      '-c',
      'full_page_writes=off',
      '-c',
      'max_connections=200',
      ...Object.entries(options.settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
    ],
    { ...options.as, cwd: options.cwd, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server.stderr?.on('data', (chunk: Buffer) => log.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => server.once('exit', (code) => resolve(code)));
  const stop = async () => {
    if (server.exitCode !== null || server.signalCode !== null) return;
    // SIGINT is PostgreSQL's fast shutdown: sessions are ended, nothing waits for clients.
    server.kill('SIGINT');
    const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitFor(
      async () => {
        if (server.exitCode !== null) throw new Error(`postgres exited: ${log.join('')}`);
        const client = new Client({ connectionString: options.url });
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } catch {
          return false;
        } finally {
          await client.end().catch(() => {});
        }
      },
      30_000,
      'the test PostgreSQL server to accept connections',
    );
  } catch (err) {
    if (server.exitCode === null) server.kill('SIGKILL');
    await exited;
    throw err;
  }
  return { stop };
}
