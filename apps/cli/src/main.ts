#!/usr/bin/env node
/**
 * `lease-fence`: the composition root of the command line (`program.ts` builds the commands).
 * Commander's own exits (help, version, usage errors) keep their exit codes.
 */
import { CommanderError } from 'commander';
import { createProgram } from './program.js';

try {
  await createProgram().parseAsync(process.argv);
} catch (error) {
  if (error instanceof CommanderError) process.exitCode = error.exitCode;
  else throw error;
}
