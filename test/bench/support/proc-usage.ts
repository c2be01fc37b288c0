/**
 * What a server process costs, read from `/proc/<pid>` (Linux): CPU seconds so far and resident
 * memory. Used to record the coordinator's CPU and memory next to its throughput.
 */
import { readFileSync } from 'node:fs';

/** USER_HZ: clock ticks per second of `/proc/<pid>/stat` times (100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU seconds `pid` has used so far, or `undefined` once it is gone. With `mainThreadOnly`,
 * those of its main thread alone (`/proc/<pid>/task/<pid>/stat`: a Node process's event loop, without
 * its worker threads and libuv's pool).
 */
export function cpuSecondsOf(pid: number, mainThreadOnly = false): number | undefined {
  try {
    const stat = readFileSync(mainThreadOnly ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** A `Vm*` field of `/proc/<pid>/status` in bytes (`VmRSS` now, `VmHWM` peak), or `undefined` once it is gone. */
export function memoryBytesOf(pid: number, field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? undefined : Number(match[1]) * 1024;
  } catch {
    return undefined;
  }
}

/** Bytes → mebibytes, rounded to one decimal. */
export const toMebibytes = (bytes: number | undefined): number | undefined =>
  bytes === undefined ? undefined : Math.round((bytes / (1024 * 1024)) * 10) / 10;

/**
 * Write system calls (`write`, `writev`, `pwrite`…) the main thread of `pid` has made so far
 * (`syscw` of `/proc/<pid>/task/<pid>/io`), or `undefined` once it is gone or the file is not readable.
 */
export function mainThreadWriteCallsOf(pid: number): number | undefined {
  try {
    const match = /^syscw:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/task/${pid}/io`, 'utf8'));
    return match === null ? undefined : Number(match[1]);
  } catch {
    return undefined;
  }
}
