// Public surface of the QMP client library. Depends on `node:*` only.
export { QmpClient } from './client.ts';
export type {
  ExecuteOptions,
  ExecuteThenEventOptions,
  QmpClientEvents,
  QmpClientOptions,
  QmpCommandOutcome,
  QmpConnectionState,
  QmpHooks,
  QmpLogFn,
  QmpLogLevel,
  QmpTarget,
  WaitEventOptions,
} from './client.ts';
export { EventSubscription, DEFAULT_SUBSCRIPTION_BUFFER, eventMatcher } from './events.ts';
export type { EventFilter, SubscribeOptions } from './events.ts';
export { JsonLineFramer, DEFAULT_MAX_MESSAGE_BYTES } from './framing.ts';
export { parseServerMessage, parseGreeting, OOB_COMMANDS_QEMU_7_2 } from './messages.ts';
export type { QmpErrorBody, QmpEvent, QmpGreeting, QmpServerMessage, QmpTimestamp, QmpVersion } from './messages.ts';
export { QmpError, QmpTimeoutError, QmpDisconnectedError, QmpProtocolError, QmpEventOverflowError } from './errors.ts';
export { RUN_STATES, SHUTDOWN_CAUSES, MIGRATION_STATUSES, JOB_STATUSES, GUEST_PANIC_ACTIONS, BLOCK_ERROR_ACTIONS, isEvent } from './schema.ts';
export type { RunState, StatusInfo, ShutdownCause, MigrationStatus, JobStatus, GuestPanicAction, BlockErrorAction, QmpEventData, KnownEventName, TypedQmpEvent } from './schema.ts';
