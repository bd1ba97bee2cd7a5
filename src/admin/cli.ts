/**
 * Operator command line: `npm run admin -- <command> [--flag value ...]`.
 * Prints one JSON object on stdout and exits 0; on error prints `{ "code", "message" }` on stderr and exits non-zero.
 */
import { approvalCommands } from '../approvals/admin.ts';
import { loadConfig } from '../config.ts';
import { openDatabase } from '../database.ts';
import { feeCommands } from '../fees/admin.ts';
import { identityCommands } from '../identity/admin.ts';
import { limitCommands } from '../limits/admin.ts';
import { AppError, DomainError } from '../shared/errors.ts';
import { connectTemporal, type Temporal } from '../temporal/connection.ts';
import { tenantCommands } from '../tenants/admin.ts';
import { CommandError, type AdminCommand } from '../cli/command.ts';
import { webhookCommands } from '../webhooks/admin.ts';
import { systemCommands } from './system.ts';

const commands: Record<string, AdminCommand> = { ...tenantCommands, ...identityCommands, ...feeCommands, ...limitCommands, ...webhookCommands, ...approvalCommands, ...systemCommands };

function fail(code: string, message: string, exitCode = 1): never {
  process.stderr.write(`${JSON.stringify({ code, message })}\n`);
  process.exit(exitCode);
}

/** `--a x --b --c y --c z` → { a: 'x', b: true, c: ['y', 'z'] } */
function parseFlags(args: string[]): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) fail('USAGE_ERROR', `Unexpected argument "${arg}"`, 2);
    const [name, inline] = arg.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    let value: unknown = inline;
    if (value === undefined) value = i + 1 < args.length && !args[i + 1]!.startsWith('--') ? args[++i] : true;
    const previous = flags[name];
    flags[name] = previous === undefined ? value : [...(Array.isArray(previous) ? previous : [previous]), value];
  }
  return flags;
}

function usage(): string {
  return Object.entries(commands)
    .map(([name, c]) => `  ${name} ${c.usage}\n      ${c.summary}`)
    .join('\n');
}

const [name, ...rest] = process.argv.slice(2);
if (!name || name === 'help' || name === '--help') {
  process.stdout.write(`${JSON.stringify({ commands: Object.fromEntries(Object.entries(commands).map(([n, c]) => [n, `${c.usage} - ${c.summary}`])) })}\n`);
  process.exit(name ? 0 : 2);
}
const cmd = commands[name];
if (!cmd) fail('UNKNOWN_COMMAND', `Unknown command "${name}". Commands:\n${usage()}`, 2);

const parsed = cmd.flags.safeParse(parseFlags(rest));
if (!parsed.success) {
  fail('USAGE_ERROR', `${name} ${cmd.usage}: ${parsed.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`).join('; ')}`, 2);
}

let config;
try {
  config = loadConfig();
} catch (err) {
  fail('CONFIG_ERROR', err instanceof Error ? err.message : String(err));
}

const orm = await openDatabase(config.DATABASE_URL, 2).catch((err: unknown) => fail('DATABASE_UNAVAILABLE', `Cannot reach the database: ${String(err)}`));
let temporal: Temporal | undefined;
try {
  const em = orm.em.fork();
  const context = (tx: typeof em) => ({ config, em: tx, temporal: async () => (temporal ??= await connectTemporal(config)) });
  const result = cmd.transactional === false ? await cmd.run(context(em), parsed.data as never) : await em.transactional((tx) => cmd.run(context(tx), parsed.data as never));
  process.stdout.write(`${JSON.stringify(result)}\n`);
} catch (err) {
  if (err instanceof DomainError || err instanceof AppError || err instanceof CommandError) fail(err.code, err.message);
  fail('COMMAND_FAILED', err instanceof Error ? err.message : String(err));
} finally {
  await temporal?.connection.close();
  await orm.close();
}
