import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseCommandArgs, UsageError, type ClientIo } from '../../shared/command-io.ts';

const USAGE = 'Usage: fire-api demo <thing>\n';

function run<T>(args: string[], parse: () => T): { result: T | number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const io: ClientIo = { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, stderrIsTTY: false };
  return { result: parseCommandArgs(io, 'demo', USAGE, args, parse), stdout, stderr };
}

describe('parseCommandArgs, the one help/parse/usage block of every fire-api command', () => {
  it('returns what the parser returns and prints nothing', () => {
    expect(run(['x'], () => ({ thing: 'x' }))).toEqual({ result: { thing: 'x' }, stdout: '', stderr: '' });
  });

  it('--help and -h print the usage on stdout and exit 0 without parsing', () => {
    const refuse = () => {
      throw new Error('parsed');
    };
    expect(run(['x', '--help'], refuse)).toEqual({ result: 0, stdout: USAGE, stderr: '' });
    expect(run(['-h'], refuse)).toEqual({ result: 0, stdout: USAGE, stderr: '' });
  });

  it('a UsageError or an unknown option prints the command, the message and the usage on stderr, exit 2', () => {
    const usage = run([], () => {
      throw new UsageError('demo needs a thing');
    });
    expect(usage).toEqual({ result: 2, stdout: '', stderr: `fire-api demo: demo needs a thing\n\n${USAGE}` });
    const unknown = run(['--bogus'], () => parseArgs({ args: ['--bogus'], options: {} }));
    expect([unknown.result, unknown.stderr]).toEqual([2, expect.stringMatching(/^fire-api demo: Unknown option '--bogus'[^]*\n\nUsage: fire-api demo <thing>\n$/)]);
  });

  it('rethrows anything that is not a usage error', () => {
    expect(() => run([], () => {
      throw new Error('disk full');
    })).toThrow('disk full');
  });
});
