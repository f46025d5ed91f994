// A chat's ACP agent state (modes, models, options, slash commands) for the chat
// header's pickers and the composer's command list: read from the host when a chat on
// an ACP agent opens, replaced by every agent_state frame of its turns, changed by the
// pickers. Kept apart from AppStore; App owns one instance.

import { errorText } from './api';
import { normaliseState, type AcpApi, type AcpChoiceKind, type AgentState } from './acp';
import type { Frame } from './protocol';

export class AgentStateStore {
  /** By session id. */
  states = $state<Record<string, AgentState>>({});
  /** Why the last read or change failed, by session id. */
  errors = $state<Record<string, string>>({});
  /** A change is on its way to the host, by session id. */
  saving = $state<Record<string, boolean>>({});

  constructor(private readonly api: AcpApi) {}

  /** Reads the state of a chat on an ACP agent (opening its agent session). */
  async load(sessionId: string): Promise<void> {
    try {
      const st = await this.api.state(sessionId);
      if (st) this.states[sessionId] = st;
      delete this.errors[sessionId];
    } catch (err) {
      this.errors[sessionId] = errorText(err);
    }
  }

  /** Applies a frame of any stream: agent_state replaces the chat's state. */
  onFrame(f: Frame): void {
    if (f.event !== 'agent_state') return;
    const st = normaliseState(f.data as unknown as AgentState);
    if (st) this.states[f.session_id] = st;
  }

  forget(sessionId: string): void {
    delete this.states[sessionId];
    delete this.errors[sessionId];
  }

  /** Sets a mode, model or option of the chat's agent session. */
  async choose(sessionId: string, which: AcpChoiceKind, optionId: string, value: string): Promise<boolean> {
    this.saving[sessionId] = true;
    try {
      const st = await this.api.choose(sessionId, which, optionId, value);
      if (st) this.states[sessionId] = st;
      delete this.errors[sessionId];
      return true;
    } catch (err) {
      this.errors[sessionId] = errorText(err);
      return false;
    } finally {
      delete this.saving[sessionId];
    }
  }
}
