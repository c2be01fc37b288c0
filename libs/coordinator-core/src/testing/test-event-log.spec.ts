import { describeEventLogContract } from './event-log-contract.js';
import { createTestEventLog, createTestEventLogStorage, type TestEventLogStorage } from './test-event-log.js';

let storage: TestEventLogStorage = createTestEventLogStorage();
describeEventLogContract('test double', {
  open: async () => createTestEventLog((storage = createTestEventLogStorage())),
  reopen: async () => createTestEventLog(storage),
  openSecondWriter: async () => createTestEventLog(storage),
});
