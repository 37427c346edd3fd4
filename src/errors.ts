/**
 * Error classes by who is to blame. Only runtime faults throw past a tool or
 * a turn; everything a user or a peer did wrong becomes one of these with a
 * message that names what was wrong.
 */
export class LangoError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The configuration is invalid: `issues` holds one line per bad key path. */
export class ConfigError extends LangoError {
  constructor(
    message: string,
    readonly issues: string[] = [],
  ) {
    super(message);
  }
}

/** The model answered something the runtime cannot act on. */
export class ModelBehaviorError extends LangoError {}

/** A tool failed while executing; becomes a tool error result for the model. */
export class ToolExecutionError extends LangoError {}

/** A transfer was refused because the turn used up its delegation rounds. */
export class DelegationLimitError extends LangoError {}

/** A remote A2A agent could not be loaded or called. */
export class RemoteAgentError extends LangoError {}

/** The user's input (CLI argument, request field) is invalid. */
export class InputError extends LangoError {}
